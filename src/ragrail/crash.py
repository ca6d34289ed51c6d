"""What to say when something unexpected ends a command.

The CLI's ``main()`` hands every exception that is not a ``RagrailError`` or a
click error to ``describe()``, which gives it an exit code and one line to
print; a real bug (not a full disk, not a deleted folder) also gets a full
report on disk from ``write_report()``, so the user sees one line and the bug
tracker still gets the traceback. Nothing here prints.

Exit 1 is never produced here: it means "regression" and only a command's
regression decision (or lint's findings) returns it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from ragrail.errors import EXIT_SYSTEM, EXIT_USAGE

# The disk or the machine failed the write: nothing the user typed is wrong.
DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS, errno.EFBIG})
# A path the user named cannot be used as asked: a usage problem they can fix.
PATH_ERRNOS = frozenset(
    {
        errno.EACCES,
        errno.EPERM,
        errno.EISDIR,
        errno.ENOTDIR,
        errno.ENOENT,
        errno.ENAMETOOLONG,
        errno.ELOOP,
    }
)
MESSAGE_LIMIT = 300
DEBUG_ENV = "RAGRAIL_DEBUG"


@dataclass(frozen=True)
class Crash:
    """How a command that raised should end: exit code, one line, and whether the
    traceback is worth a report (it is for bugs, not for a full disk)."""

    code: int
    message: str
    internal: bool


def debug_enabled() -> bool:
    """``RAGRAIL_DEBUG=1`` asks for the traceback on stderr instead of a report file."""
    return os.environ.get(DEBUG_ENV, "").strip() not in ("", "0")


def one_line(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """``text`` on one line, control characters shown as escapes, at most ``limit`` characters."""
    flat = " ".join(text.split())
    flat = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in flat)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def safe_str(exc: BaseException) -> str:
    """``str(exc)``, even for an exception whose ``__str__`` raises."""
    try:
        return str(exc)
    except Exception:
        return f"<unprintable {type(exc).__name__}>"


def cwd_missing() -> bool:
    """True when the current folder was deleted under the running process."""
    try:
        os.getcwd()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return False


def origin(exc: BaseException, skip: int = 0) -> str | None:
    """``file:line`` of the innermost frame that raised ``exc`` (``skip``: of the frame
    that many calls out from it), if known."""
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    if len(frames) <= skip:
        return None
    tb = frames[-1 - skip]
    return f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}"


def describe(exc: BaseException) -> Crash:
    """The exit code and the one line for an exception no command turned into a result."""
    if cwd_missing():
        return Crash(
            EXIT_USAGE,
            "the current folder was deleted while ragrail ran; cd to a folder that exists",
            internal=False,
        )
    if isinstance(exc, SystemExit):
        return _stray_exit(exc)
    from ragrail.exit_guard import TargetExit

    if isinstance(exc, TargetExit):
        where = origin(exc, skip=1)  # the caller of os._exit, not the guard that raised
        at = f" at {where}" if where else ""
        return Crash(
            EXIT_SYSTEM,
            f"os._exit({exc.code!r}) was called{at} before the command finished; "
            "no verdict was reached",
            internal=True,
        )
    if isinstance(exc, OSError):
        found = _os_error(exc)
        if found is not None:
            return found
    if isinstance(exc, shutil.Error):
        found = _copy_error(exc)
        if found is not None:
            return found
    if isinstance(exc, RecursionError):
        return Crash(
            EXIT_SYSTEM,
            "input nested too deeply to process (Python's recursion limit was reached)",
            internal=False,
        )
    if isinstance(exc, MemoryError):
        return Crash(EXIT_SYSTEM, "out of memory", internal=False)
    text = one_line(safe_str(exc))
    name = type(exc).__name__
    return Crash(EXIT_SYSTEM, f"{name}: {text}" if text else name, internal=True)


def _stray_exit(exc: SystemExit) -> Crash:
    """A ``SystemExit`` that escaped a command: never a verdict, whatever its code."""
    where = origin(exc)
    at = f" at {where}" if where else ""
    return Crash(
        EXIT_SYSTEM,
        f"sys.exit({exc.code!r}) was called{at} before the command finished; "
        "no verdict was reached",
        internal=True,
    )


def _os_error(exc: OSError) -> Crash | None:
    """A disk failure (exit 3) or an unusable path (exit 2); None for anything else."""
    reason = exc.strerror or safe_str(exc) or type(exc).__name__
    name = f"{exc.filename}: " if exc.filename is not None else ""
    if exc.errno in DISK_ERRNOS:
        return Crash(EXIT_SYSTEM, f"cannot write to disk: {name}{reason}", internal=False)
    if exc.errno in PATH_ERRNOS and exc.filename is not None:
        return Crash(EXIT_USAGE, one_line(f"{name}{reason}"), internal=False)
    return None


def _copy_error(exc: shutil.Error) -> Crash | None:
    """A folder copy (shutil.copytree) that failed on a full or failing disk: exit 3 with
    the first file it could not write, not an internal error listing every file."""
    import re

    failures = exc.args[0] if exc.args and isinstance(exc.args[0], list) else []
    for item in failures:
        if not (isinstance(item, tuple) and len(item) == 3):
            continue
        _src, dst, why = item
        m = re.search(r"\[Errno (\d+)\] ([^:]+)", str(why))
        if m and int(m.group(1)) in DISK_ERRNOS:
            more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
            return Crash(
                EXIT_SYSTEM,
                one_line(f"cannot write to disk: {dst}: {m.group(2)}{more}"),
                internal=False,
            )
    return None


def report_text(exc: BaseException, argv: list[str] | None) -> str:
    """The full report: versions, command line and traceback."""
    from ragrail._version import __version__

    lines = [
        f"ragrail {__version__} internal error report",
        f"time: {time.strftime('%Y-%m-%d %H:%M:%S %z')}",
        f"python: {sys.version.split()[0]} ({platform.platform()})",
        f"command: ragrail {' '.join(argv if argv is not None else sys.argv[1:])}",
        "",
        *traceback.format_exception(exc),
    ]
    return "\n".join(line.rstrip("\n") for line in lines) + "\n"


def report_dirs() -> list[Path]:
    """Where a report may go, best first."""
    dirs: list[Path] = []
    with contextlib.suppress(OSError):
        dirs.append(Path(tempfile.gettempdir()))
    with contextlib.suppress(OSError, RuntimeError, KeyError):  # no home folder
        dirs.append(Path.home() / ".cache" / "ragrail")
    return dirs


def write_report(exc: BaseException, argv: list[str] | None = None) -> Path | None:
    """Write the report to the first folder that takes it; None when none does.

    Never raises: a crash report must not turn into a second crash.
    """
    try:
        text = report_text(exc, argv)
    except Exception:
        text = "".join(traceback.format_exception_only(exc))
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for folder in report_dirs():
        path = folder / f"ragrail-crash-{stamp}-{os.getpid()}.txt"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            # O_EXCL: never follow a link someone planted at a predictable name in /tmp.
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as f:
                f.write(text)
        except (OSError, ValueError):
            continue
        return path
    return None
