"""Where a CI runner gets ragrail: the pip requirement that reinstalls the running one.

ragrail is not on PyPI, so the workflow pins the source this ragrail was installed from
(PEP 610's ``direct_url.json``): a git commit, a wheel's URL and hash, else the version.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit


@dataclass(frozen=True)
class InstallSource:
    """What a CI runner should ``pip install`` to get this ragrail.

    ``spec`` is a pip requirement; ``origin`` says in words where it came from;
    ``reachable`` is False when the spec only names a version because this
    ragrail came from somewhere a runner cannot see (a local folder or file).
    """

    spec: str
    origin: str
    reachable: bool


def _public_url(url: str) -> str:
    """``url`` without a password or token in it: the workflow file gets committed."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    userinfo, host = parts.netloc.rsplit("@", 1)
    # ssh://git@host is a user name, not a secret; anything with a password or over
    # http(s) (https://TOKEN@github.com) may be one.
    keep = parts.scheme == "ssh" and ":" not in userinfo
    netloc = parts.netloc if keep else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def install_source_from(direct_url: dict[str, Any] | None, version: str) -> InstallSource:
    """The pip requirement that reinstalls what ``direct_url`` (PEP 610) describes.

    A git checkout is pinned to its commit, a wheel or sdist on a web server to its
    URL (and hash); no ``direct_url`` means a package index, pinned to ``version``.
    A local folder or file cannot be reached from a CI runner: the version is the
    best pin there is, and ``reachable`` says so.
    """
    pinned = f"ragrail=={version}"
    if not isinstance(direct_url, dict):
        return InstallSource(pinned, f"ragrail {version} from a package index", True)
    url = direct_url.get("url")
    url = _public_url(url) if isinstance(url, str) else ""
    remote = urlsplit(url).scheme not in ("", "file")
    vcs = direct_url.get("vcs_info")
    if isinstance(vcs, dict) and remote:
        commit = vcs.get("commit_id")
        kind = vcs.get("vcs") if isinstance(vcs.get("vcs"), str) else "git"
        asked = vcs.get("requested_revision")
        at = f"@{commit}" if isinstance(commit, str) and commit else ""
        named = f" ({asked})" if isinstance(asked, str) and asked and asked != commit else ""
        return InstallSource(f"ragrail @ {kind}+{url}{at}", f"{kind} {url}{at}{named}", True)
    archive = direct_url.get("archive_info")
    if isinstance(archive, dict) and remote:
        hashes = archive.get("hashes")
        sha = hashes.get("sha256") if isinstance(hashes, dict) else None
        fragment = f"#sha256={sha}" if isinstance(sha, str) and "#" not in url else ""
        return InstallSource(f"ragrail @ {url}{fragment}", url, True)
    dir_info = direct_url.get("dir_info")
    editable = isinstance(dir_info, dict) and dir_info.get("editable") is True
    # no local path in the text: it ends up in a committed file
    where = "an editable install of a local folder" if editable else "a local folder or file"
    return InstallSource(pinned, f"{where}, which a CI runner cannot reach", False)


def installed_source() -> InstallSource:
    """How the running ragrail was installed, as a pip requirement for CI."""
    from importlib import metadata

    from ragrail._version import __version__

    try:
        raw = metadata.distribution("ragrail").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return InstallSource(
            f"ragrail=={__version__}", "a source tree that pip never installed", False
        )
    try:
        direct_url = json.loads(raw) if raw else None
    except ValueError:
        direct_url = None  # unreadable metadata: say what an index install would
    return install_source_from(direct_url, __version__)
