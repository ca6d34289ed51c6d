"""A Ray cluster's address, checked before ``ray.init`` is given it.

``ray.init`` retries an address where nothing answers, or where something that is not Ray
does, for minutes, printing Ray's own log lines as it goes; a malformed address (a stray
space) skipped the probe below and went to it too. Nothing here imports Ray.
"""

from __future__ import annotations

from ragrail.calls.urls import address_problem as address_problem
from ragrail.errors import InputError, SystemFailure

# Seconds to wait at --address for a connection and a gRPC answer before giving up (exit 3).
PROBE_TIMEOUT = 5.0


# What a gRPC client sends first (HTTP/2's connection preface and an empty SETTINGS
# frame): Ray's GCS and Ray Client servers are gRPC servers and answer with a SETTINGS
# frame at once; anything else (an HTTP/1 server, a database, a port that only listens)
# does not, and ray.init would retry it for minutes.
_HTTP2_HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
_SETTINGS = 4  # an HTTP/2 frame's type, the fourth byte of its 9-byte header


def probe(address: str, timeout: float = PROBE_TIMEOUT) -> None:
    """Fail fast (exit 3, one line) unless a gRPC server answers at a ``host:port``
    address within ``timeout`` seconds; a malformed address is exit 2. With
    ``RAY_USE_TLS`` on, the gRPC answer comes only after a TLS handshake: then a TCP
    answer is enough. "auto" and "local" are left to Ray."""
    import os
    import socket
    import time

    problem = address_problem(address)
    if problem is not None:
        raise InputError(problem)
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep:  # auto, local
        return
    tls = os.environ.get("RAY_USE_TLS", "0").strip().lower() in ("1", "true")
    deadline = time.monotonic() + timeout
    try:
        conn = socket.create_connection((host.strip("[]"), int(port)), timeout=timeout)
    except (OSError, UnicodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise SystemFailure(f"cannot connect to the Ray cluster at {address}: {reason}") from None
    head = b""
    with conn:
        if tls:
            return
        try:
            conn.sendall(_HTTP2_HELLO)
            while len(head) < 9:
                conn.settimeout(max(0.001, deadline - time.monotonic()))
                chunk = conn.recv(9 - len(head))
                if not chunk:
                    break
                head += chunk
        except OSError:  # silent past the deadline, or it hung up: not a gRPC server
            pass
    if len(head) < 9 or head[3] != _SETTINGS:
        raise SystemFailure(
            f"cannot connect to the Ray cluster at {address}: something answers there, but "
            f"not Ray (no gRPC handshake within {timeout:g} s); give the address `ray start "
            "--head` printed (port 6379 by default), or set RAY_USE_TLS=1 for a cluster with TLS"
        )
