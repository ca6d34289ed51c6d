"""Whether a URL or a Ray address can be called: for model base URLs, HTTP systems and
Ray clusters alike, so a setting that cannot be one is exit 2 before any call (not every
call failing, exit 3)."""

from __future__ import annotations

import re

# HOST:PORT, or ray://HOST:PORT (Ray Client); HOST a name, an IPv4 or a bracketed IPv6
_ADDRESS = re.compile(r"(?:ray://)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):([0-9]{1,5})", re.ASCII)


def url_problem(url: str) -> str | None:
    """Why ``system.url`` cannot be POSTed to, or None when it can."""
    from urllib.parse import urlsplit

    shown = repr(url) if len(url) <= 200 else repr(url[:200] + "…")
    if not url.strip():
        return "is empty; it needs a full URL such as http://localhost:8000/ask"
    if any(ch.isspace() or not ch.isprintable() for ch in url):
        return f"{shown} contains spaces or control characters"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"{shown} is not a valid URL ({exc})"
    if "://" not in url:
        return f"{shown} has no scheme; it needs http:// or https:// in front"
    if parts.scheme.lower() not in ("http", "https"):
        return f"{shown} is not an HTTP URL ({parts.scheme}://); it needs http:// or https://"
    if not parts.hostname:
        return f"{shown} has no host; it needs a full URL such as http://localhost:8000/ask"
    del port  # read only to make urlsplit check it
    return None


def address_problem(address: str) -> str | None:
    """Why ``address`` is no Ray address ray.init could join, or None. Checked before
    any connection: a malformed one skipped the check that nothing answers there, and
    ray.init then retried it for minutes."""
    if address in ("auto", "local"):  # Ray finds the cluster itself (RAY_ADDRESS...)
        return None
    if address != address.strip():
        return f"Ray address {address!r} has spaces around it; give HOST:PORT alone"
    found = _ADDRESS.fullmatch(address)
    if found is None:
        return (
            f"Ray address {address!r} is not HOST:PORT (such as 10.0.0.5:6379, [::1]:6379, "
            "or ray://10.0.0.5:10001 for Ray Client), auto or local"
        )
    if not 0 < int(found[2]) < 65536:
        return f"Ray address {address!r}: the port must be from 1 to 65535"
    return None
