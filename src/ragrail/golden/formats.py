"""Reading a golden set: JSON, JSON Lines, YAML and CSV, strictly, every problem naming
the file, line and field."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import (
    ValidationError,
)

from ragrail.errors import InputError
from ragrail.fileio import BOM, read_text
from ragrail.golden.turns import check_conversations, expand_turns
from ragrail.jsonio import json_array_items, parse_json
from ragrail.records.case import Case, GoldenSet, turn_id
from ragrail.text.matching import Fact

GOLDEN_SUFFIXES = (".json", ".jsonl", ".yaml", ".yml", ".csv")
LIST_SEPARATOR = "|"  # between sources, facts or tags in one CSV cell


CSV_COLUMNS = ("id", "question", "sources", "facts", "tags", "expect", "provenance")
# A conversation in CSV: one row per turn, the conversation's id in every row and the
# turn's number (or blank: the next one); the id cell may be left blank for a turn.
CSV_TURN_COLUMNS = ("conversation", "turn")
CSV_MAX_CELL = 10 * 1024 * 1024  # characters in one CSV cell (Python's csv stops at 128 KiB)


def load_golden(path: Path | str, root: Path | None = None) -> GoldenSet:
    """Load a golden set from JSON (an array, or ``{"cases": [...]}``), JSONL, YAML
    (a list, or ``cases:``) or CSV (columns id, question, sources, facts, tags, expect; several
    values in one cell separated by ``|``; a facts cell starting with ``[`` is a JSON
    list of facts). A UTF-8 byte-order mark is allowed. A fact is a string,
    ``{"any": [...]}`` or ``{"regex": "..."}`` (see :mod:`ragrail.text.matching`).

    Every problem is an InputError naming the file, line and field. The ``python``
    checks' functions are imported from ``root`` (the project folder; by default
    the golden set's own folder), so a missing one fails here.
    """
    from ragrail.gcpause import paused_gc

    path = Path(path)  # a str from a notebook is a path too

    with paused_gc():
        return parse_golden(read_text(path, "golden set"), path, root)


def parse_golden(text: str, path: Path, root: Path | None = None) -> GoldenSet:
    """A golden set from its text; ``path`` names the file and its format."""
    text = text.removeprefix(BOM)
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        raw = _jsonl_items(text, path)
    elif suffix in (".yaml", ".yml"):
        raw = _yaml_items(text, path)
    elif suffix == ".csv":
        raw = _csv_items(text, path)
    elif suffix == ".json":
        items = json_array_items(text, path)
        if items is None:
            data = parse_json(text, path)
            if isinstance(data, dict) and isinstance(data.get("cases"), list):
                items = [(item, 0) for item in data["cases"]]
            else:
                raise InputError('expected a JSON array of cases (or {"cases": [...]})', str(path))
        raw = items
    else:
        raise InputError(
            f"unknown golden-set format {path.suffix or '(no extension)'!r}; "
            f"use one of {', '.join(GOLDEN_SUFFIXES)}",
            str(path),
        )
    return _build(path, raw, path.parent if root is None else root)


def _yaml_loader() -> type:
    """PyYAML's SafeLoader, except that a key given twice in one mapping is an error:
    YAML says keys are unique, and PyYAML would silently keep the last one. The parser
    is libyaml's where PyYAML was built with it (5x faster on 20,000 cases), PyYAML's
    own otherwise; both give the same documents and line numbers."""
    import yaml

    base = yaml.CSafeLoader if getattr(yaml, "__with_libyaml__", False) else yaml.SafeLoader

    # mypy takes no base class chosen at run time (CSafeLoader or SafeLoader)
    class UniqueKeyLoader(base):  # type: ignore[valid-type,misc]
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            if isinstance(node, yaml.MappingNode):
                seen: dict[Any, Any] = {}
                for key_node, _ in node.value:
                    if key_node.tag == "tag:yaml.org,2002:merge":
                        continue  # "<<: *base" merges, and may be overridden
                    key = self.construct_object(key_node, deep=True)
                    try:
                        first = seen.get(key)
                    except TypeError:
                        continue  # an unhashable key: the base constructor reports it
                    if first is not None:
                        raise yaml.constructor.ConstructorError(
                            "while constructing a mapping",
                            node.start_mark,
                            f"duplicate key {key!r} (first at line {first.line + 1})",
                            key_node.start_mark,
                        )
                    seen[key] = key_node.start_mark
            return super().construct_mapping(node, deep=deep)

    return UniqueKeyLoader


def yaml_document(text: str, path: Path, loader_class: type | None = None) -> tuple[Any, Any]:
    """The one YAML document in ``text``, with its root node (for the line numbers of
    its items), read by ``loader_class`` (default: the unique-key loader); every problem
    is an InputError naming ``path`` and, where the parser knows it, line and column."""
    import yaml

    loader = (loader_class or _yaml_loader())(text)
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        problem = getattr(exc, "problem", None) or str(exc)
        if "nesting depth" in problem:  # libyaml's words for what PyYAML hits as recursion
            problem = "nested too deeply (lists or mappings inside each other 1,000 levels down)"
        raise InputError(f"invalid YAML: {problem}", where) from None
    except RecursionError:
        raise InputError("invalid YAML: nested too deeply", str(path)) from None
    finally:
        loader.dispose()
    return data, root


def _yaml_items(text: str, path: Path) -> list[tuple[Any, int]]:
    import yaml

    data, root = yaml_document(text, path)
    if isinstance(data, dict) and "cases" in data and isinstance(root, yaml.MappingNode):
        data = data["cases"]
        root = next(v for k, v in root.value if k.value == "cases")
    if not isinstance(data, list) or not isinstance(root, yaml.SequenceNode):
        raise InputError("expected a YAML list of cases (or cases: [...])", str(path))
    return [(item, node.start_mark.line + 1) for item, node in zip(data, root.value, strict=True)]


def _csv_reader(text: str) -> Any:
    """A strict reader: an unterminated quote or stray text after a closing quote is an
    error, not a silently different row; cells may be up to CSV_MAX_CELL characters."""
    import csv
    import io

    # the limit is process-wide: set this reader's own, whatever another reader set
    csv.field_size_limit(CSV_MAX_CELL)
    return csv.reader(io.StringIO(text, newline=""), strict=True)


def _csv_header(reader: Any, path: Path) -> list[str]:
    import csv

    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise InputError(f"invalid CSV header: {exc}", f"{path}:1") from None
    if not header:
        raise InputError("the golden set has no cases (no CSV header)", str(path))
    names = [h.strip() for h in header]
    # an unknown header cell is not printed: a header pasted from data may hold personal data
    known = CSV_COLUMNS + CSV_TURN_COLUMNS
    unknown = [n for n, f in enumerate(names, start=1) if f not in known]
    if unknown:
        raise InputError(
            f"unknown CSV column (header column {unknown[0]}); expected {', '.join(known)}",
            f"{path}:1",
        )
    first: dict[str, int] = {}
    for number, name in enumerate(names, start=1):
        earlier = first.setdefault(name, number)
        if earlier != number:  # a known column's name: safe to print
            raise InputError(
                f"CSV column {name!r} appears twice (header columns {earlier} and {number})",
                f"{path}:1",
            )
    missing = [f for f in ("id", "question") if f not in names]
    if missing:
        raise InputError(f"the CSV header has no {missing[0]!r} column", f"{path}:1")
    return names


def _csv_items(text: str, path: Path) -> list[tuple[Any, int]]:
    """Rows as cases. A row may leave trailing cells out (they are empty), but a row
    with more cells than the header is an error: a stray comma would otherwise move
    a fact into a column nobody reads."""
    import csv

    reader = _csv_reader(text)
    names = _csv_header(reader, path)
    items: list[tuple[Any, int]] = []
    turns: dict[str, int] = {}  # conversation -> its last turn so far
    start = reader.line_num + 1
    while True:
        try:
            row = next(reader, None)
        except csv.Error as exc:
            why = str(exc)
            if "field larger than field limit" in why:
                why = f"a cell is longer than {CSV_MAX_CELL:,} characters"
            raise InputError(f"invalid CSV: {why}", f"{path}:{start}") from None
        if row is None:
            return items
        if row:
            if len(row) > len(names):
                raise InputError(
                    f"CSV row has {len(row)} fields but the header has {len(names)} "
                    f"({', '.join(names)}); quote a cell that contains a comma",
                    f"{path}:{start}",
                )
            cells = dict(zip(names, row, strict=False))
            item: dict[str, Any] = {
                "id": cells.get("id", ""),
                "question": cells.get("question", ""),
            }
            for key in ("sources", "facts", "tags"):
                cell = cells.get(key, "").strip()
                item[key] = [v.strip() for v in cell.split(LIST_SEPARATOR) if v.strip()]
            item["facts"] = csv_facts(cells.get("facts", ""), path, start)
            if cells.get("expect", "").strip():  # empty: by the sources, as with no column
                item["expect"] = cells["expect"].strip()
            if cells.get("provenance", "").strip():  # a JSON object, as JSON golden sets write it
                item["provenance"] = _csv_json(cells["provenance"], "provenance", path, start)
            _csv_turn(item, cells, turns, f"{path}:{start}")
            try:
                item["sources"] = csv_graded_sources(item["sources"])
            except ValueError as exc:
                raise InputError(f"field 'sources': {exc}", f"{path}:{start}") from None
            items.append((item, start))
        start = reader.line_num + 1


def _csv_turn(
    item: dict[str, Any], cells: dict[str, str], turns: dict[str, int], where: str
) -> None:
    """A row's ``conversation`` and ``turn`` cells into the case (a blank turn is the
    conversation's next; a blank id, the turn's id)."""
    conversation, number = cells.get("conversation", "").strip(), cells.get("turn", "").strip()
    if not conversation and not number:
        return
    if not conversation:
        raise InputError(
            "field 'turn': a turn needs its conversation's id in 'conversation'", where
        )
    if number and not (number.isascii() and number.isdigit() and int(number) >= 1):
        raise InputError(f"field 'turn': expected a turn number from 1, not {number!r}", where)
    turn = int(number) if number else turns.get(conversation, 0) + 1
    turns[conversation] = turn
    item["conversation"], item["turn"] = conversation, turn
    if not item["id"].strip():
        item["id"] = turn_id(conversation, turn)


def csv_facts(cell: str, path: Path, line: int) -> list[Any]:
    """A CSV facts cell: plain facts separated by ``|``, or, when the cell starts with
    ``[``, a JSON list of facts as a JSON golden set writes them, for alternatives,
    regexes and facts holding a ``|``: ``["30 days", {"any": ["10%", "10 percent"]}]``."""
    cell = cell.strip()
    if not cell.startswith("["):
        return [v.strip() for v in cell.split(LIST_SEPARATOR) if v.strip()]
    try:
        value = parse_json(cell, path)
    except InputError as exc:
        raise InputError(
            f"field 'facts': a cell starting with [ is a JSON list of facts: {exc.message}",
            f"{path}:{line}",
        ) from None
    if not isinstance(value, list):
        raise InputError("field 'facts': expected a JSON list of facts", f"{path}:{line}")
    return value


def _csv_json(cell: str, name: str, path: Path, line: int) -> Any:
    """A CSV cell that holds JSON (the case's validation checks its shape)."""
    try:
        return parse_json(cell.strip(), path)
    except InputError as exc:
        raise InputError(
            f"field {name!r}: expected JSON: {exc.message}", f"{path}:{line}"
        ) from None


def csv_facts_cell(facts: list[Fact]) -> str:
    """The CSV cell for facts: ``a|b`` when every fact is plain text that reads back
    that way, else a JSON list."""
    plain = all(f.kind == "text" and LIST_SEPARATOR not in f for f in facts)
    if plain and not (facts and facts[0].lstrip().startswith("[")):
        return LIST_SEPARATOR.join(facts)
    return json.dumps([f.raw() for f in facts], ensure_ascii=False)


_CSV_GRADE = re.compile(r"(?P<name>.*?)\s*:\s*(?P<grade>[+-]?\d+(?:\.\d*)?)")


def csv_graded_sources(items: list[str]) -> list[str] | dict[str, Any]:
    """A CSV sources cell's items; ``plans:2|billing:1`` grades them (an item without
    ``:grade`` is grade 1). A grade that is not a whole number is kept as written, for
    the case's validation to report."""
    matches = [_CSV_GRADE.fullmatch(item) for item in items]
    if not any(matches):
        return items
    graded: dict[str, Any] = {}
    for item, m in zip(items, matches, strict=True):
        name, grade = (m["name"], m["grade"]) if m else (item, "1")
        if name in graded:
            raise ValueError(f"{name!r} is graded twice")
        graded[name] = int(grade) if grade.lstrip("+-").isdigit() else grade
    return graded


def _jsonl_items(text: str, path: Path) -> list[tuple[Any, int]]:
    # split on "\n" only: str.splitlines() also breaks at U+2028 and other characters
    # that may stand unescaped inside a JSON string
    items = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            items.append((parse_json(line, path, line=lineno), lineno))
    return items


def _build(path: Path, raw: Iterable[tuple[Any, int]], root: Path) -> GoldenSet:
    from ragrail.scoring.checks import resolve_functions

    cases: list[Case] = []
    lines: dict[str, int] = {}
    imported: set[str] = set()  # check functions already imported
    for index, (item, line) in enumerate(expand_turns(raw, path)):
        where = f"{path}:{line}" if line else f"{path}: case #{index + 1}"
        if not isinstance(item, dict):
            raise InputError(f"case #{index + 1} must be an object", where)
        label = f"case {item['id']!r}" if isinstance(item.get("id"), str) else f"case #{index + 1}"
        try:
            case = Case.model_validate(item)
        except ValidationError as exc:
            raise InputError(f"{label}: {_first_error(exc)}", where) from None
        if case.id in lines:
            first = lines[case.id]
            raise InputError(f"duplicate case id {case.id!r} (first at line {first})", where)
        try:
            resolve_functions(case.checks, root, imported)
        except InputError as exc:
            raise InputError(f"{label}: {exc.message}", where) from None
        cases.append(case)
        lines[case.id] = line
    if not cases:
        raise InputError("the golden set has no cases", str(path))
    golden = GoldenSet(path=path, cases=cases, lines=lines)
    check_conversations(cases, golden.where)
    return golden


def _first_error(exc: ValidationError) -> str:
    from ragrail.scoring.checks import error_field, error_message

    err = exc.errors()[0]
    field = error_field(err["loc"]) or "case"
    kind = err["type"]
    if kind == "missing":
        return f"missing field {field!r}"
    if kind == "extra_forbidden":
        return f"unknown field {field!r}"
    return f"field {field!r}: {error_message(err)}"
