"""The labelling page's server: standard library ``http.server`` in a thread, on the
loopback interface by default.

Safe by construction:

- every request must carry the session's random token (in the URL printed on start, or
  the ``X-Ragrail-Token`` header the page's own script sends): anything else is 403, so
  another local user or a web page in the browser cannot read or write labels;
- the Host header must name the address served (a DNS-rebinding page cannot borrow the
  browser's access to 127.0.0.1);
- the Content-Security-Policy runs only the page's own script and style (a nonce per
  response): no inline handler, injected ``<script>`` or external asset runs or loads;
- the page shows text through ``textContent`` only, after
  :func:`ragrail.text.guard.visible`, and the HTML itself through
  :func:`ragrail.text.guard.escape`;
- it writes only the files the session was started with (the session's own job).

Requests are served one at a time: each label is written before the next is read.
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from ragrail.errors import InputError

MAX_BODY = 1 << 20  # a label or a case is a few hundred bytes; a megabyte is plenty
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class Session(Protocol):
    """What the page drives: the queue's state, one action, and the end."""

    mode: str

    def state(self) -> dict[str, Any]: ...

    def act(self, body: dict[str, Any]) -> dict[str, Any]: ...

    def finish(self) -> dict[str, Any]: ...


def csp(nonce: str) -> str:
    return (
        "default-src 'none'; "
        f"script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; "
        "connect-src 'self'; img-src 'none'; font-src 'none'; object-src 'none'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )


class LabelServer:
    """Serves one session until it is finished (or the process is interrupted)."""

    def __init__(
        self,
        session: Session,
        page: Callable[[str, str], str],
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.session = session
        self.page = page  # (nonce, token) -> the HTML
        self.token = secrets.token_urlsafe(24)
        self.finished = threading.Event()
        self.result: dict[str, Any] | None = None
        self.lock = threading.Lock()
        try:
            self.httpd = HTTPServer((host, port), _handler(self))
        except OSError as exc:
            raise InputError(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None
        self.host = host
        self.port = int(self.httpd.server_address[1])

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/?token={self.token}"

    def allowed_hosts(self) -> set[str] | None:
        """The Host headers accepted; None (any) when served beyond the loopback."""
        if self.host not in LOOPBACK:
            return None
        return {f"{h}:{self.port}" for h in ("127.0.0.1", "localhost", "[::1]")}

    def serve(self, poll: float = 0.2) -> dict[str, Any] | None:
        """Serve until the page finishes the session; what its finish returned (None
        when interrupted: KeyboardInterrupt passes through, every label already saved)."""
        thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        thread.start()
        try:
            while not self.finished.wait(poll):
                pass
        finally:
            self.httpd.shutdown()
            self.httpd.server_close()
        return self.result


def _handler(server: LabelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "ragrail-label"
        sys_version = ""

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the terminal is the session's, and a URL holds the token."""

        def _send(self, code: int, body: bytes, kind: str, nonce: str = "") -> None:
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Content-Security-Policy", csp(nonce or secrets.token_urlsafe(8)))
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("X-Frame-Options", "DENY")
            self.send_header("Referrer-Policy", "no-referrer")
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def _json(self, code: int, data: dict[str, Any]) -> None:
            self._send(code, json.dumps(data).encode(), "application/json; charset=utf-8")

        def _allowed(self) -> bool:
            hosts = server.allowed_hosts()
            if hosts is not None and self.headers.get("Host", "") not in hosts:
                return False
            given = self.headers.get("X-Ragrail-Token") or ""
            if not given:
                query = parse_qs(urlsplit(self.path).query)
                given = (query.get("token") or [""])[0]
            return hmac.compare_digest(given.encode(), server.token.encode())

        def _refuse(self) -> None:
            self._send(
                403, b"forbidden: this page needs the URL ragrail label printed\n", "text/plain"
            )

        def do_GET(self) -> None:
            if not self._allowed():
                return self._refuse()
            path = urlsplit(self.path).path
            if path == "/":
                nonce = secrets.token_urlsafe(18)
                page = server.page(nonce, server.token).encode()
                return self._send(200, page, "text/html; charset=utf-8", nonce)
            if path == "/api/state":
                with server.lock:
                    return self._json(200, server.session.state())
            self._send(404, b"not found\n", "text/plain")

        def do_POST(self) -> None:
            if not self._allowed():
                return self._refuse()
            path = urlsplit(self.path).path
            if path not in ("/api/act", "/api/finish"):
                return self._send(404, b"not found\n", "text/plain")
            # a form or a no-cors fetch cannot send this type without a preflight
            if not self.headers.get("Content-Type", "").startswith("application/json"):
                return self._json(415, {"error": "send application/json"})
            try:
                size = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                size = -1
            if not 0 <= size <= MAX_BODY:
                return self._json(413, {"error": "request too large"})
            try:
                body = json.loads(self.rfile.read(size) or b"{}")
            except ValueError:
                return self._json(400, {"error": "not JSON"})
            if not isinstance(body, dict):
                return self._json(400, {"error": "expected a JSON object"})
            self._run(path, body)

        def _run(self, path: str, body: dict[str, Any]) -> None:
            from ragrail.text.guard import visible

            with server.lock:
                if server.finished.is_set():
                    return self._json(409, {"error": "this session has finished"})
                try:
                    if path == "/api/act":
                        return self._json(200, server.session.act(body))
                    result = server.session.finish()
                except InputError as exc:
                    return self._json(400, {"error": visible(str(exc))})
                except Exception as exc:  # shown on the page; the session goes on
                    return self._json(500, {"error": visible(f"{type(exc).__name__}: {exc}")})
                server.result = result
                self._json(200, result)
                server.finished.set()

    return Handler
