"""Reading JSON with precise error positions, and writing files atomically."""

from __future__ import annotations

import errno
import glob
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from ragrail.errors import InputError, RagrailError, SystemFailure


def read_text(path: Path, what: str) -> str:
    """Read a UTF-8 text file, or raise an InputError that names it.

    Only regular files are opened: opening a FIFO would block until a writer comes,
    and a device may never end.
    """
    kind = special_kind(path)
    if kind is not None:
        raise InputError(f"{what} is {kind}, expected a regular file", str(path))
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{what} not found", str(path)) from None
    except IsADirectoryError:
        raise InputError(f"{what} is a directory, expected a file", str(path)) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{what} is not UTF-8 text ({exc.reason})", str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror}", str(path)) from None


BOM = "\ufeff"


def iter_lines(path: Path, what: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` for each line of a UTF-8 text file (without its "\\n"), read as it goes (a
    file of hundreds of MB is never held whole), with :func:`read_text`'s errors.

    Lines end at "\\n", "\\r\\n" or "\\r" (as :func:`read_text` reads them), and only
    there: U+2028 and other characters that str.splitlines() breaks at may stand
    unescaped inside a JSON string. A leading byte-order mark is dropped.
    """
    kind = special_kind(path)
    if kind is not None:
        raise InputError(f"{what} is {kind}, expected a regular file", str(path))
    try:
        with open(path, encoding="utf-8") as fh:  # universal newlines, as read_text
            for lineno, line in enumerate(fh, start=1):
                line = line.removesuffix("\n")
                yield lineno, (line.removeprefix(BOM) if lineno == 1 else line)
    except FileNotFoundError:
        raise InputError(f"{what} not found", str(path)) from None
    except IsADirectoryError:
        raise InputError(f"{what} is a directory, expected a file", str(path)) from None
    except UnicodeDecodeError as exc:
        # the reader decodes 8 KB ahead of the lines it hands out: find the line at fault
        where = _undecodable_at(path) or str(path)
        raise InputError(f"{what} is not UTF-8 text ({exc.reason})", where) from None
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror}", str(path)) from None


def _undecodable_at(path: Path) -> str | None:
    """``file:line:column`` of the first bytes that are not UTF-8 (None if it now reads).

    Lines are split as bytes first: a b"\\n" is never part of a longer UTF-8 sequence."""
    try:
        with open(path, "rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    return f"{path}:{lineno}:{len(raw[: exc.start].decode('utf-8')) + 1}"
    except OSError:
        pass
    return None


def special_kind(path: Path) -> str | None:
    """What a path is when it exists and is neither a regular file nor a folder, else None."""
    import stat

    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return None


# Errors that say "you cannot write there": the user named the path, so they can name another
# (exit 2). Anything else (a full disk, an I/O error) is the machine failing (exit 3).
_PATH_ERRNOS = frozenset(
    {
        errno.EACCES,
        errno.EPERM,
        errno.EROFS,
        errno.EISDIR,
        errno.ENOTDIR,
        errno.ELOOP,
        errno.ENAMETOOLONG,
        errno.ENXIO,
    }
)
STALE_TEMP_SECONDS = 3600.0


def _not_a_file(mode: int) -> str | None:
    """What a file of this mode is, when it is not a regular file a write may replace."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if not stat.S_ISREG(mode):
        return "not a regular file"
    return None


def output_target(path: Path, what: str = "output") -> Path:
    """The regular file a write to ``path`` lands in: symlinks followed to their final target.

    Raises InputError (exit 2) when the path is, or leads to, a folder, a FIFO,
    a socket, a device, a symlink loop, or lies under something that is not a
    folder. Nothing is opened, so a FIFO's reader is never woken.
    """
    target = Path(os.path.realpath(path))
    plain = Path(os.path.realpath(path.parent)) / path.name
    link = f" (a link to {target})" if target != plain else ""
    try:
        st = os.stat(target)
    except (FileNotFoundError, NotADirectoryError):
        st = None  # a missing file is created; a missing or non-folder parent is checked below
    except OSError as exc:
        raise InputError(f"cannot write the {what}{link}: {exc.strerror}", str(path)) from None
    if st is not None:
        kind = _not_a_file(st.st_mode)
        if kind:
            raise InputError(f"the {what} path{link} is {kind}; give the path of a file", str(path))
    folder = _existing_ancestor(target.parent)
    if not folder.is_dir():
        raise InputError(f"cannot write the {what}: {folder} is not a folder", str(path))
    return target


def _existing_ancestor(folder: Path) -> Path:
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def check_writable_output(path: Path, what: str = "output", probe: bool = True) -> Path:
    """Refuse, before any work, an output path that cannot be written (exit 2).

    Checks what :func:`output_target` checks, plus that the folder the file
    goes into (or the nearest one that exists) can be written. With ``probe``, a
    temporary file is made there and removed at once: permissions alone say yes to root
    in /proc or on a file system that refuses every new file. Returns the final target.
    """
    target = output_target(path, what)
    if not probe:
        return target
    folder = _existing_ancestor(target.parent)
    if not os.access(folder, os.W_OK | os.X_OK):
        reason = "read-only file system" if _read_only_fs(folder) else "permission denied"
        raise InputError(f"cannot write the {what}: folder {folder}: {reason}", str(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO):
            return target  # the disk, not the path: the write itself will say so (exit 3)
        reason = exc.strerror or type(exc).__name__
        raise InputError(
            f"cannot write the {what}: folder {folder} takes no new file ({reason})", str(path)
        ) from None
    os.close(fd)
    Path(tmp).unlink(missing_ok=True)
    return target


def _read_only_fs(folder: Path) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def _write_error(exc: OSError, path: Path, what: str, existed: bool) -> RagrailError:
    reason = exc.strerror or str(exc)
    if exc.errno in _PATH_ERRNOS:
        return InputError(f"cannot write the {what}: {reason}", str(path))
    kept = "; the old file is unchanged" if existed else ""
    return SystemFailure(f"{path}: cannot write the {what}: {reason}{kept}")


def remove_stale_temps(folder: Path, name: str, older_than: float = STALE_TEMP_SECONDS) -> int:
    """Delete temp files an earlier, killed write of ``name`` left in ``folder``.

    Only ``.<name>.*.tmp`` regular files older than ``older_than`` seconds go:
    a younger one may belong to a write in progress in another process.
    """
    import time

    cutoff = time.time() - older_than
    removed = 0
    for tmp in folder.glob(f".{glob.escape(name)}.*.tmp"):
        try:
            st = tmp.lstat()
            if stat.S_ISREG(st.st_mode) and st.st_mtime < cutoff:
                tmp.unlink()
                removed += 1
        except OSError:
            pass  # gone already, or not ours to delete: not worth failing a write over
    return removed


def atomic_write_text(
    path: Path,
    text: str | Iterable[str] | Iterable[bytes],
    what: str = "output",
    validate: Callable[[Path], None] | None = None,
) -> None:
    """Write ``text`` (a string, or its pieces in order, strings or UTF-8 bytes: a large
    document need not be held whole) as UTF-8 to ``path`` so that readers see the old file or the new one, never half.

    A symlink is followed to its final target, which is replaced: the link
    stays a link. The data goes to a temporary file beside the target (same
    filesystem), is flushed to disk, then renamed over it. Folders, FIFOs,
    sockets and devices are refused (InputError) before anything is written.
    On failure the temporary file is removed and the old file is untouched:
    a path that cannot be written is an InputError (exit 2), a full disk or
    I/O error a SystemFailure (exit 3). ``validate``, when given, reads the
    written temporary file back and raises to keep the old file (a baseline is
    only replaced by one that loads).
    """
    target = output_target(path, what)
    existed = target.exists()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temps(target.parent, target.name)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise _write_error(exc, path, what, existed) from None
    try:
        # mkstemp makes the file private (0600); give it the mode a plain write would
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, target.stat().st_mode & 0o777 if existed else 0o666 & ~umask)
        with os.fdopen(fd, "wb") as fh:
            if isinstance(text, str):
                fh.write(text.encode("utf-8"))
            else:
                for piece in text:
                    fh.write(piece.encode("utf-8") if isinstance(piece, str) else piece)
            fh.flush()
            os.fsync(fh.fileno())
        if validate is not None:
            validate(Path(tmp))
        os.replace(tmp, target)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise _write_error(exc, path, what, existed) from None
        raise
    _sync_folder(target.parent)


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable; best effort (not every system can open a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def set_aside(path: Path, what: str, reason: object) -> Path:
    """Move an unreadable state file out of the way, with a warning, so a fresh one can start.

    Caches and histories are rebuilt on demand: losing one must never crash a
    run. The aside's name is unique (time, process id and a random part), so
    two files set aside in the same second never overwrite each other.
    """
    import secrets
    import time
    import warnings

    stamp = time.strftime("%Y%m%d-%H%M%S")
    while True:
        aside = path.with_name(f"{path.name}.corrupt-{stamp}-{os.getpid()}-{secrets.token_hex(3)}")
        if not aside.exists():
            break
    path.replace(aside)
    warnings.warn(
        f"the {what} {path} could not be read ({reason}); moved it to {aside.name} and started a new one",
        stacklevel=3,
    )
    return aside
