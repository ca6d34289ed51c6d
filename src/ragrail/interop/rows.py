"""Reading another tool's file: its records, their cells, and the raw cases they hold.

An importer turns a file into :class:`RawCase` records, as the tool wrote them: the
question, the answer and the retrieved passages (when it holds a run), the
reference answer and reference passages (when it holds labels). Nothing here
decides labels; :mod:`ragrail.interop.common` does.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragrail.errors import InputError
from ragrail.fileio import BOM, read_text
from ragrail.jsonio import json_array_items, parse_json

if TYPE_CHECKING:
    import tokenize


CSV_MAX_CELL = 10 * 1024 * 1024


@dataclass
class RawContext:
    """A passage as the tool recorded it."""

    text: str
    id: str | None = None
    score: float | None = None
    hint: str | None = None  # a document name the tool recorded (file name, URL)


@dataclass
class RawCase:
    """One question as the tool recorded it; ``where`` is its ``file:line``."""

    where: str
    question: str
    id: str | None = None  # the tool's own id or name
    name: str | None = None  # a description to make an id from
    answer: str | None = None
    error: str | None = None
    contexts: list[RawContext] | None = None  # retrieved, in rank order; None: no run
    references: list[str] = field(default_factory=list)  # reference answers (alternatives)
    reference_contexts: list[RawContext] = field(default_factory=list)
    facts: list[Any] = field(default_factory=list)  # in golden-set form
    checks: list[dict[str, Any]] = field(default_factory=list)
    conversation: str | None = None  # a turn's conversation: the tool's name for it, or None
    turn: int | None = None  # the turn's number from 1 (None: a single question)
    own: dict[str, Any] | None = None  # ragrail's labels, as its export wrote them

    @property
    def has_output(self) -> bool:
        return self.answer is not None or self.contexts is not None or self.error is not None

    @property
    def has_labels(self) -> bool:
        return bool(self.references or self.reference_contexts or self.facts)


@dataclass
class RawImport:
    path: Path
    label: str  # what the file is: "RAGAS EvaluationDataset (JSON Lines)"
    cases: list[RawCase]
    notes: list[str] = field(default_factory=list)  # what was read but not imported
    labels: bool = True  # whether the format can hold labels at all
    outputs: bool = True  # whether it can hold answers and passages


# ---------------------------------------------------------------- reading files


def read_items(path: Path, what: str, list_keys: Sequence[str] = ()) -> list[tuple[Any, str]]:
    """The records of a JSON Lines, JSON or CSV file, each with its ``file:line``.

    JSON may be an array of records or an object holding one under one of
    ``list_keys`` (``{"testCases": [...]}``). A CSV row is a dict of its cells by
    header; an empty cell is missing.
    """
    text = read_text(path, what).removeprefix(BOM)
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return [
            (parse_json(line, path, line=n), f"{path}:{n}")
            for n, line in enumerate(text.split("\n"), start=1)
            if line.strip()
        ]
    if suffix == ".json":
        items = json_array_items(text, path)
        if items is not None:
            return [(item, f"{path}:{line}") for item, line in items]
        data = parse_json(text, path)
        for key in list_keys:
            found = lookup(data, key) if isinstance(data, dict) else None
            if isinstance(found, list):
                return [(item, f"{path}: {key}.{i}") for i, item in enumerate(found)]
        keys = f" (or an object with {' or '.join(map(repr, list_keys))})" if list_keys else ""
        raise InputError(f"expected a JSON array of records{keys}", str(path))
    if suffix == ".csv":
        return csv_items(text, path)
    if suffix == ".parquet":
        raise InputError(
            "Parquet cannot be read here; write the dataset as JSON Lines "
            '(Dataset.to_json("data.jsonl")) or CSV and import that',
            str(path),
        )
    raise InputError(
        f"unknown file type {path.suffix or '(no extension)'!r}; use .jsonl, .json or .csv",
        str(path),
    )


def csv_items(text: str, path: Path) -> list[tuple[Any, str]]:
    """Rows of a CSV file as dicts by header, strictly parsed (an unterminated quote or
    a row longer than the header is an error naming its line)."""
    # the limit is process-wide: set this reader's own, whatever another reader set
    csv.field_size_limit(CSV_MAX_CELL)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    start = 1
    try:
        header = next(reader, None)
        if not header:
            raise InputError("the CSV file is empty (no header)", str(path))
        names = [h.strip() for h in header]
        rows = []
        start = reader.line_num + 1
        for row in reader:
            if any(cell.strip() for cell in row):
                if len(row) > len(names):
                    raise InputError(
                        f"CSV row has {len(row)} fields but the header has {len(names)}",
                        f"{path}:{start}",
                    )
                cells = {n: v for n, v in zip(names, row, strict=False) if v != ""}
                rows.append((cells, f"{path}:{start}"))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(f"invalid CSV: {exc}", f"{path}:{start}") from None
    return rows


def lookup(item: dict[str, Any], key: str) -> Any:
    """``item[key]``, or a dotted path into nested objects (``answers.text``)."""
    if key in item:
        return item[key]
    value: Any = item
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def first_present(item: dict[str, Any], keys: Iterable[str]) -> tuple[str | None, Any]:
    """The first of ``keys`` the record has a value for, and the value."""
    for key in keys:
        value = lookup(item, key)
        if value is not None and value != "":
            return key, value
    return None, None


def as_text(value: Any, key: str, where: str) -> str | None:
    """A text field: a string (a number is written as text), or None when absent."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise InputError(f"field {key!r} must be text, not {_kind(value)}", where)


def as_text_list(value: Any, key: str, where: str, delimiter: str | None = None) -> list[str]:
    """A list of texts: a JSON list, or a cell holding one (JSON, or Python's or numpy's
    printed form, as ``to_csv`` writes lists), or one text (split at ``delimiter``)."""
    if value is None:
        return []
    if isinstance(value, str):
        return list_cell(value, delimiter)
    if not isinstance(value, list):
        raise InputError(f"field {key!r} must be a list of texts, not {_kind(value)}", where)
    out = []
    for i, item in enumerate(value):
        text = as_text(item, f"{key}.{i}", where)
        if text is not None:
            out.append(text)
    return out


def _kind(value: Any) -> str:
    """A JSON value's kind, as a message names it: every kind by name (a number was
    once called null)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    names: dict[type, str] = {dict: "an object", list: "a list"}
    return names.get(type(value), type(value).__name__)


def list_cell(cell: str, delimiter: str | None = None) -> list[str]:
    """The texts in one CSV cell. ``["a", "b"]`` (JSON), ``['a', 'b']`` (Python's
    ``str`` of a list: RAGAS's ``to_csv``) and ``['a' 'b']`` (numpy's: Hugging Face
    ``Dataset.to_csv``) are lists; any other text is one item, or several split at
    ``delimiter`` (DeepEval joins lists with ``|``)."""
    stripped = cell.strip()
    if not stripped:
        return []
    if stripped.startswith("["):
        try:
            value = json.loads(stripped)
        except ValueError:
            value = None
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return value
        strings = python_strings(stripped)
        if strings is not None:
            return strings
    if delimiter:
        return [part for part in cell.split(delimiter) if part.strip()]
    return [cell]


def python_strings(text: str, after_key: str | None = None) -> list[str] | None:
    """The string literals of a printed Python list (``['a', "b's"]``) or numpy array
    (``['a' 'b']``, line-wrapped); None when ``text`` is not one. With ``after_key``,
    the strings of the list that follows that key in a printed dict
    (``{'text': array(['x', 'y'], dtype=object), ...}``)."""
    import ast
    import tokenize

    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    out: list[str] = []
    if after_key is not None:
        after = _tokens_after_key(tokens, after_key)
        if after is None:
            return None
        tokens = after
    skip = {tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT}
    for tok in tokens:
        if tok.type == tokenize.STRING:
            try:
                value = ast.literal_eval(tok.string)
            except (ValueError, SyntaxError):
                return None
            if not isinstance(value, str):
                return None
            out.append(value)
        elif tok.type == tokenize.OP and tok.string in "[],":
            continue
        elif tok.type not in skip:
            return None
    return out


def _tokens_after_key(
    tokens: list[tokenize.TokenInfo], key: str
) -> list[tokenize.TokenInfo] | None:
    """The tokens of the bracketed list after ``'key':`` in a printed dict."""
    import tokenize

    for i, tok in enumerate(tokens[:-1]):
        if tok.type == tokenize.STRING and tok.string.strip("'\"") == key:
            start = next((j for j in range(i, len(tokens)) if tokens[j].string == "["), None)
            if start is None:
                return None
            end = next((j for j in range(start, len(tokens)) if tokens[j].string == "]"), None)
            return tokens[start : end + 1] if end is not None else None
    return None


# ---------------------------------------------------------------- rows with named columns


@dataclass(frozen=True)
class Columns:
    """Which record fields (or CSV columns) hold what, each a list of names to try."""

    question: tuple[str, ...]
    id: tuple[str, ...] = ()
    answer: tuple[str, ...] = ()
    contexts: tuple[str, ...] = ()
    reference: tuple[str, ...] = ()
    reference_contexts: tuple[str, ...] = ()
    facts: tuple[str, ...] = ()  # every item a fact the answer needs
    answers: tuple[str, ...] = ()  # alternatives of one answer (SQuAD ``answers``)
    # the system's own ids of the contexts, one per context, in the same order
    context_ids: tuple[str, ...] = ()
    reference_context_ids: tuple[str, ...] = ()

    FIELDS = (
        "question",
        "id",
        "answer",
        "contexts",
        "context_ids",
        "reference",
        "reference_contexts",
        "reference_context_ids",
        "facts",
        "answers",
    )

    def remapped(self, mapping: dict[str, str]) -> Columns:
        """These columns with ``mapping`` (field -> column) taking the place of the
        guesses; a field mapped to ``""`` is not read."""
        from dataclasses import replace

        return replace(self, **{k: (v,) if v else () for k, v in mapping.items()})


def rows_to_cases(items: Iterable[tuple[Any, str]], columns: Columns) -> list[RawCase]:
    """Records with named fields (RAGAS, Hugging Face datasets) as cases."""
    cases = []
    for item, where in items:
        if not isinstance(item, dict):
            raise InputError(f"each record must be an object, not {_kind(item)}", where)
        key, value = first_present(item, columns.question)
        if key is None:
            names = " or ".join(repr(c) for c in columns.question)
            raise InputError(f"no question: the record has no {names} field", where)
        if isinstance(value, list):
            raise InputError(
                f"field {key!r} is a list of messages (a multi-turn sample); ragrail "
                "imports single questions",
                where,
            )
        question = as_text(value, key, where) or ""
        if not question.strip():
            raise InputError(f"field {key!r} is empty", where)
        case = RawCase(where=where, question=question)
        key, value = first_present(item, columns.id)
        case.id = as_text(value, key or "id", where)
        key, value = first_present(item, columns.answer)
        case.answer = as_text(value, key or "answer", where)
        key, value = first_present(item, columns.contexts)
        if key is not None:
            case.contexts = _contexts(item, key, value, columns.context_ids, where)
        key, value = first_present(item, columns.reference)
        case.references = [r for r in as_text_list(value, key or "", where) if r.strip()]
        key, value = first_present(item, columns.reference_contexts)
        case.reference_contexts = _contexts(
            item, key or "", value, columns.reference_context_ids, where
        )
        key, value = first_present(item, columns.facts)
        case.facts = [f for f in as_text_list(value, key or "", where) if f.strip()]
        key, value = first_present(item, columns.answers)
        if key is not None:
            alternatives = answer_texts(value, key, where)
            if alternatives:
                case.facts.append(one_of(alternatives))
        cases.append(case)
    return cases


def _contexts(
    item: dict[str, Any], key: str, value: Any, id_keys: Sequence[str], where: str
) -> list[RawContext]:
    """The passages of ``item[key]``, each with its id from the first of ``id_keys`` the
    record has (RAGAS's ``retrieved_context_ids``): one id per passage, in order."""
    texts = as_text_list(value, key, where)
    id_key, id_value = first_present(item, id_keys)
    ids = as_id_list(id_value, id_key or "", where) if texts else []
    if not ids:
        return [RawContext(text=t) for t in texts]
    if len(ids) != len(texts):
        raise InputError(
            f"field {id_key!r} has {len(ids)} ids for the {len(texts)} passages of {key!r}; "
            "give one id per passage, in the same order",
            where,
        )
    return [RawContext(text=t, id=i) for t, i in zip(texts, ids, strict=True)]


def as_id_list(value: Any, key: str, where: str) -> list[str | None]:
    """Ids, one per passage: a list of texts or whole numbers (RAGAS allows both), or a
    CSV cell holding one as JSON or as Python prints it; an empty id is None."""
    if value is None:
        return []
    if isinstance(value, str):
        stripped = value.strip()
        parsed: Any = None
        if stripped.startswith("["):
            import ast

            try:
                parsed = json.loads(stripped)
            except ValueError:
                try:  # Python's print of a list (RAGAS's to_csv)
                    parsed = ast.literal_eval(stripped)
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    parsed = None
        value = parsed if isinstance(parsed, list) else list_cell(value)
    if not isinstance(value, list):
        raise InputError(f"field {key!r} must be a list of ids, not {_kind(value)}", where)
    out: list[str | None] = []
    for i, item in enumerate(value):
        if item is None:
            out.append(None)
        elif isinstance(item, bool) or not isinstance(item, str | int):
            raise InputError(
                f"field {key}.{i} must be an id (text or a whole number), not {_kind(item)}",
                where,
            )
        else:
            out.append(str(item).strip() or None)
    return out


def answer_texts(value: Any, key: str, where: str) -> list[str]:
    """The texts of a SQuAD-style answers field: ``{"text": [...], "answer_start":
    [...]}``, its printed form in a CSV cell, a list of texts or one text."""
    if isinstance(value, dict):
        return as_text_list(value.get("text"), f"{key}.text", where)
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            return as_text_list(parsed.get("text"), f"{key}.text", where)
        return python_strings(value, after_key="text") or []
    return as_text_list(value, key, where)


def one_of(alternatives: Sequence[str]) -> str | dict[str, list[str]]:
    """One fact from alternatives: the text itself when they are all the same."""
    unique = list(dict.fromkeys(a.strip() for a in alternatives if a.strip()))
    return unique[0] if len(unique) == 1 else {"any": unique}
