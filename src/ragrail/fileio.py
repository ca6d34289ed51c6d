"""Reading JSON with precise error positions, and writing files atomically."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ragrail.errors import InputError


def read_text(path: Path, what: str) -> str:
    """Read a UTF-8 text file, or raise an InputError that names it."""
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


def parse_json(text: str, path: Path | str) -> Any:
    """Parse JSON, reporting a syntax error as ``file:line:column``."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", f"{path}:{exc.lineno}:{exc.colno}") from None


def load_json(path: Path, what: str) -> Any:
    return parse_json(read_text(path, what), path)


def line_of(text: str, offset: int) -> int:
    """1-based line number of a character offset."""
    return text.count("\n", 0, offset) + 1


def json_array_items(text: str, path: Path | str) -> list[tuple[Any, int]] | None:
    """Decode a top-level JSON array item by item, returning ``(item, line)`` pairs.

    The line numbers let validation errors point at the right place in a
    hand-edited golden set. Returns None when the document is not an array
    (the caller then handles other shapes); syntax errors raise InputError.
    """
    parse_json(text, path)  # a full parse first, so syntax errors get exact positions
    decoder = json.JSONDecoder()
    i = _skip_ws(text, 0)
    if i >= len(text) or text[i] != "[":
        return None
    i = _skip_ws(text, i + 1)
    items: list[tuple[Any, int]] = []
    if text[i] == "]":
        return items
    while True:
        item, end = decoder.raw_decode(text, i)
        items.append((item, line_of(text, i)))
        i = _skip_ws(text, end)
        if text[i] == "]":
            return items
        i = _skip_ws(text, i + 1)  # the comma


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the new one, never half.

    The data goes to a temporary file in the same folder (same filesystem), is
    flushed to disk, then renamed over the target.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp makes the file private (0600); give it the mode a plain write would
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, path.stat().st_mode & 0o777 if path.exists() else 0o666 & ~umask)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def set_aside(path: Path, what: str, reason: object) -> Path:
    """Move an unreadable state file out of the way, with a warning, so a fresh one can start.

    Caches and histories are rebuilt on demand: losing one must never crash a run.
    """
    import time
    import warnings

    aside = path.with_name(f"{path.name}.corrupt-{int(time.time())}")
    path.replace(aside)
    warnings.warn(
        f"the {what} {path} could not be read ({reason}); moved it to {aside.name} and started a new one",
        stacklevel=3,
    )
    return aside
