"""Strict JSON: the one rule every JSON file ragrail reads follows (golden sets, results,
baselines, outputs, labels, log rows through their fast path). A key given twice, NaN or
Infinity, a lone surrogate and nesting past a sane depth are refused, and every problem
names the file, the line and the field (a dotted path), never a traceback.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from pathlib import Path
from typing import Any

from ragrail.errors import InputError
from ragrail.fileio import BOM, read_text


class _NonFinite(ValueError):
    """A NaN or Infinity literal: Python's json accepts them, JSON does not."""


def _reject_constant(literal: str) -> Any:
    raise _NonFinite(literal)


class _DuplicateKey(ValueError):
    """An object that names the same key twice: JSON parsers keep one, silently."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _DuplicateKey()
    return obj


# One decoder for every parse: json.loads with keyword arguments builds a new one per
# call, which was a tenth of the time of reading a large JSON Lines file.
_STRICT = json.JSONDecoder(parse_constant=_reject_constant, object_pairs_hook=_unique_keys)


def _duplicate_key_offset(text: str) -> tuple[int, int, str]:
    """Start and end offsets and name of the first key given twice in one object
    (0, 0, "" if none)."""
    stack: list[set[str] | None] = []  # per open object its keys so far; None for arrays
    expecting_key = False
    for m in _JSON_TOKEN.finditer(text):
        token = m.group(0)
        if token == "{":
            stack.append(set())
            expecting_key = True
        elif token == "[":
            stack.append(None)
        elif token in ("}", "]"):
            if stack:
                stack.pop()
            expecting_key = False
        elif token == ",":
            expecting_key = bool(stack) and stack[-1] is not None
        elif token == ":":
            expecting_key = False
        elif token.startswith('"') and expecting_key and stack and stack[-1] is not None:
            try:
                key = json.loads(token)
            except json.JSONDecodeError:
                key = token[1:-1]
            if key in stack[-1]:
                return m.start(), m.end(), key
            stack[-1].add(key)
            expecting_key = False
    return 0, 0, ""  # pragma: no cover - only called after the parser found one


_SURROGATE = re.compile("[\ud800-\udfff]")  # in a Python str, any surrogate is a lone one
# a \uD800-\uDFFF escape somewhere: the only way JSON text can carry a lone surrogate
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def scrub_surrogates(value: Any) -> Any:
    """``value`` with every lone UTF-16 surrogate in its strings made U+FFFD.

    A model reply or a user's system can hand back ``"\\ud800"``: Python keeps it
    in a str, but no UTF-8 file (results, baseline, history, cache) can hold it,
    so saving the run would crash. Text from the system under test is kept, marked.
    """
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value) if _SURROGATE.search(value) else value
    if isinstance(value, list):
        return [scrub_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {scrub_surrogates(k): scrub_surrogates(v) for k, v in value.items()}
    return value


def _lone_surrogate_offset(text: str) -> int | None:
    """Offset of the first JSON string holding a lone surrogate escape, or None."""
    escape = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)")
    for m in _JSON_TOKEN.finditer(text):
        token = m.group(0)
        if not token.startswith('"') or not _SURROGATE_ESCAPE.search(token):
            continue
        codes = [int(e.group(1), 16) if e.group(1) else None for e in escape.finditer(token)]
        codes.append(None)
        i = 0
        while i < len(codes) - 1:
            code = codes[i]
            if (
                code is not None
                and 0xD800 <= code <= 0xDBFF
                and (
                    codes[i + 1] is not None and 0xDC00 <= codes[i + 1] <= 0xDFFF  # type: ignore[operator]
                )
            ):
                i += 2  # a pair: one character beyond the BMP
                continue
            if code is not None and 0xD800 <= code <= 0xDFFF:
                return m.start()
            i += 1
    return None


def parse_json(
    text: str, path: Path | str, line: int | None = None, keys: Collection[str] | None = None
) -> Any:
    """Parse strict JSON, reporting a problem as ``file:line:column``.

    A leading UTF-8 byte-order mark is skipped (Windows editors write one).
    ``NaN``, ``Infinity`` and ``-Infinity`` are refused, naming the field they
    stand in: they are not JSON, and a score that is not a number would poison
    every total computed from it. A key given twice in one object is refused
    too: a parser keeps the last silently, so a hand-edited second ``question``
    would replace the first unseen. Nesting deeper than Python's recursion limit
    is refused instead of crashing. ``line`` is the file line ``text`` starts
    on when it is one line of a JSONL file.

    ``keys``: the only keys a message may print (a production-log row's keys are its
    content, and may be an e-mail address); any other is named by its position in its
    object (``votes.#3``). None: every key is printed (files people write by hand).
    """
    text = text.removeprefix(BOM)
    first_line = line or 1
    try:
        data = _STRICT.decode(text)
    except _DuplicateKey:
        offset, end, _key = _duplicate_key_offset(text)
        column = offset - text.rfind("\n", 0, offset)
        # past the repeated key's token, the path ends with that key
        field = json_path_at(text, end, keys)
        raise InputError(
            f"invalid JSON: field {field!r} is given twice in the same object; keep one"
            + _hidden(field),
            f"{path}:{first_line + line_of(text, offset) - 1}:{column}",
        ) from None
    except json.JSONDecodeError as exc:
        where = f"{path}:{first_line + exc.lineno - 1}:{exc.colno}"
        # json ends some messages with " at", the position following in its own str()
        raise InputError(f"invalid JSON: {exc.msg.removesuffix(' at')}", where) from None
    except _NonFinite as exc:
        offset = _non_finite_offset(text)
        column = offset - text.rfind("\n", 0, offset)
        field = json_path_at(text, offset, keys)
        raise InputError(
            f"field {field!r}: {exc} is not valid JSON (numbers must be finite)" + _hidden(field),
            f"{path}:{first_line + line_of(text, offset) - 1}:{column}",
        ) from None
    except RecursionError:
        where = f"{path}:{line}" if line is not None else str(path)
        raise InputError(TOO_DEEP, where) from None
    except ValueError as exc:  # an integer of more than 4,300 digits: Python will not read it
        where = f"{path}:{line}" if line is not None else str(path)
        raise InputError(f"invalid JSON: a number too long to read ({exc})", where) from None
    if _SURROGATE_ESCAPE.search(text):
        lone = _lone_surrogate_offset(text)
        if lone is not None:
            column = lone - text.rfind("\n", 0, lone)
            field = json_path_at(text, lone + 1, keys)
            raise InputError(
                f"field {field!r}: a \\uD800-\\uDFFF escape "
                "without its pair is not a character (UTF-8 cannot hold it); remove it"
                + _hidden(field),
                f"{path}:{first_line + line_of(text, lone) - 1}:{column}",
            )
    return data


TOO_DEEP = (
    "invalid JSON: nested too deeply (arrays or objects inside each other hundreds of levels down)"
)
# A JSON string, a structural character, or a NaN/Infinity literal outside strings.
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|(-?Infinity|NaN)')


def _non_finite_offset(text: str) -> int:
    """Offset of the first NaN/Infinity literal that is not inside a string."""
    for m in _JSON_TOKEN.finditer(text):
        if m.group(1):
            return m.start()
    return 0  # pragma: no cover - only called after json found one


def _hidden(field: str) -> str:
    """What a ``#N`` in a field path means, when one is there."""
    if not _POSITION.search(field):
        return ""
    return "; #N: the Nth key of its object (keys are not shown: they may hold personal data)"


_POSITION = re.compile(r"(?:^|\.)#\d+(?:\.|$)")


def json_path_at(text: str, offset: int, keys: Collection[str] | None = None) -> str:
    """The dotted path (``cases.3.trace.latency_ms``) of the value at ``offset``
    in a JSON document, for naming the field in an error. ``keys``: those that may be
    shown; any other key is named by its position in its object (``#2``).

    The text before ``offset`` is tokenised, keeping a stack of the objects
    (with their current key and how many keys so far) and arrays (with their current
    index) it is in.
    """
    stack: list[list[Any]] = []  # ["obj", key, expecting_key, keys seen] | ["arr", index]
    for m in _JSON_TOKEN.finditer(text, 0, offset):
        token = m.group(0)
        top = stack[-1] if stack else None
        if token == "{":
            stack.append(["obj", None, True, 0])
        elif token == "[":
            stack.append(["arr", 0])
        elif token in "}]" and len(token) == 1:
            if stack:
                stack.pop()
        elif token == ",":
            if top is not None and top[0] == "arr":
                top[1] += 1
            elif top is not None:
                top[2] = True
        elif token == ":":
            if top is not None and top[0] == "obj":
                top[2] = False
        elif token.startswith('"') and top is not None and top[0] == "obj" and top[2]:
            top[3] += 1
            try:
                top[1] = json.loads(token)
            except json.JSONDecodeError:
                top[1] = token[1:-1]
            if keys is not None and top[1] not in keys:
                top[1] = f"#{top[3]}"
    parts = [str(frame[1]) for frame in stack if frame[1] is not None]
    return ".".join(parts) or "(top level)"


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
    text = text.removeprefix(BOM)
    i = _skip_ws(text, 0)
    if i >= len(text) or text[i] != "[":
        parse_json(text, path)  # a broken document: its exact error
        return None
    items: list[tuple[Any, int]] = []
    line, counted = 1, 0
    # Decoded item by item in one pass; any problem (syntax, NaN, a key given twice, text
    # after the array, a lone surrogate escape) is reported by parse_json over the whole
    # document, which names its exact line and column.
    try:
        i = _skip_ws(text, i + 1)
        if text[i] != "]":
            # lines counted from the previous item on, not from the start: linear
            while True:
                item, end = _STRICT.raw_decode(text, i)
                line += text.count("\n", counted, i)
                counted = i
                items.append((item, line))
                i = _skip_ws(text, end)
                if text[i] == "]":
                    break
                if text[i] != ",":
                    raise ValueError("expected a comma")
                i = _skip_ws(text, i + 1)
    except RecursionError:
        # the item that went too deep starts at i: name its line (the whole-document
        # parse could only name the file)
        raise InputError(TOO_DEEP, f"{path}:{line + text.count(chr(10), counted, i)}") from None
    except (ValueError, IndexError):
        parse_json(text, path)
        raise  # pragma: no cover - parse_json raised first
    if _skip_ws(text, i + 1) != len(text) or _SURROGATE_ESCAPE.search(text):
        parse_json(text, path)
    return items


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i
