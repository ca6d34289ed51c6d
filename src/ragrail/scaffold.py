"""The files `ragrail init` and `ragrail example` write into a project folder.

A project gets its configuration, a golden set, a GitHub Actions workflow
(``.github/workflows/evals.yml``) and a ``.ragrail/.gitignore`` so the local state
(run history, model-reply cache) is never committed. The workflow installs
ragrail from a pinned source: ragrail is not on PyPI, so the source is taken from
how the running ragrail was installed (PEP 610's ``direct_url.json``) and the file
says how to change it. Nothing here prints; the CLI reports what was written.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ragrail.errors import InputError

TEMPLATES = Path(__file__).parent / "templates"
WORKFLOW = Path(".github") / "workflows" / "evals.yml"
STATE_DIR = ".ragrail"
# Everything in .ragrail/ (history, cache, the .gitignore itself) is machine-local state.
STATE_GITIGNORE = "*\n"
_SPEC_MARK = '"@RAGRAIL_SPEC@"'  # quoted, so the template itself is valid YAML
_ORIGIN_MARK = "@RAGRAIL_SPEC_ORIGIN@"
_VERSION_MARK = "@RAGRAIL_VERSION@"


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


def workflow_text(source: InstallSource | None = None) -> str:
    """The GitHub Actions workflow, installing ragrail from ``source`` (default: this one's)."""
    from ragrail._version import __version__
    from ragrail.text.guard import visible

    source = source or installed_source()
    text = (TEMPLATES / "evals.yml").read_text(encoding="utf-8")
    # a JSON string is a YAML double-quoted scalar: any URL stays one value
    text = text.replace(_SPEC_MARK, json.dumps(source.spec))
    text = text.replace(_ORIGIN_MARK, visible(source.origin))  # one comment line, whatever it says
    return text.replace(_VERSION_MARK, __version__)


def _unreachable_warning(source: InstallSource, workflow: Path) -> None:
    if not source.reachable:
        warnings.warn(
            f"this ragrail came from {source.origin}: {workflow} installs "
            f"{source.spec!r}, which is not on PyPI; set RAGRAIL_SPEC there to a git URL "
            "or a wheel (the file says how)",
            stacklevel=3,
        )


def ensure_state_gitignore(folder: Path) -> Path | None:
    """Write ``folder/.ragrail/.gitignore`` (``*``) unless one is there; the path, or None."""
    from ragrail.fileio import atomic_write_text

    path = folder / STATE_DIR / ".gitignore"
    if path.exists() or path.is_symlink():
        return None  # the user's own rules win
    atomic_write_text(path, STATE_GITIGNORE, "state .gitignore")
    return path


def init_project(folder: Path, source: InstallSource | None = None) -> list[Path]:
    """Start a project in ``folder``: ragrail.toml, golden.json, an empty docs/, the
    workflow and ``.ragrail/.gitignore``. Returns the paths written (and docs/).

    No placeholder document goes into docs/: it would sit among the user's own as
    a distractor and a lint warning. The starter golden set holds one case that
    fits any support bot (an off-topic question it should not answer). Refuses
    (InputError, nothing written) when any of the files exists.
    """
    from ragrail.fileio import atomic_write_text, check_writable_output

    if folder.exists() and not folder.is_dir():
        raise InputError("is not a folder", str(folder))
    files = {
        folder / "ragrail.toml": (TEMPLATES / "ragrail.toml").read_text(encoding="utf-8"),
        folder / "golden.json": (TEMPLATES / "golden.json").read_text(encoding="utf-8"),
        folder / WORKFLOW: "",
    }
    existing = [str(p) for p in files if p.exists() or p.is_symlink()]
    if existing:
        raise InputError(f"would overwrite {', '.join(existing)}; nothing was written")
    docs = folder / "docs"
    if docs.exists() and not docs.is_dir():
        raise InputError("is not a folder; the documents go in a docs/ folder", str(docs))
    for path in files:
        check_writable_output(path, "project file")
    source = source or installed_source()
    files[folder / WORKFLOW] = workflow_text(source)
    written = []
    for path, text in files.items():
        atomic_write_text(path, text, "project file")
        written.append(path)
    docs.mkdir(parents=True, exist_ok=True)
    written.append(docs)
    gitignore = ensure_state_gitignore(folder)
    if gitignore is not None:
        written.append(gitignore)
    _unreachable_warning(source, folder / WORKFLOW)
    return written


def copy_example(name: str, dest: Path, source: InstallSource | None = None) -> list[Path]:
    """Copy the bundled example ``name`` into ``dest`` (new or empty), with the workflow
    and ``.ragrail/.gitignore``. Returns the files and folders at the top of ``dest``."""
    from ragrail.fileio import atomic_write_text
    from ragrail.project import example_dir

    example = example_dir(name)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise InputError("already exists and is not an empty folder; choose a new one", str(dest))
    # a bundled example's own state (a demo run inside the package) is not part of it
    ignore = shutil.ignore_patterns("__pycache__", STATE_DIR)
    source = source or installed_source()
    # Built beside dest and renamed into place, so a full disk or Ctrl-C leaves no half copy.
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent))
    try:
        umask = os.umask(0)
        os.umask(umask)
        staging.chmod(0o777 & ~umask)  # mkdtemp makes it private; a copied project is not
        shutil.copytree(example, staging, dirs_exist_ok=True, ignore=ignore)
        atomic_write_text(staging / WORKFLOW, workflow_text(source), "workflow")
        ensure_state_gitignore(staging)
        if dest.exists():
            dest.rmdir()  # checked empty above
        staging.rename(dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _unreachable_warning(source, dest / WORKFLOW)
    return sorted(dest.iterdir())
