"""``ragrail add``: one case appended to a golden set in its own format, refusing
duplicate ids and questions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragrail.errors import InputError
from ragrail.fileio import BOM, read_text
from ragrail.golden.formats import (
    CSV_COLUMNS,
    CSV_TURN_COLUMNS,
    LIST_SEPARATOR,
    _csv_header,
    _csv_reader,
    csv_facts_cell,
    parse_golden,
)
from ragrail.records.case import Case, GoldenSet


def add_case(path: Path, case: Case) -> None:
    """Append a case to a golden-set file in its own format, refusing duplicates.

    The existing text is kept as it is (a JSON array gets the case inserted before
    its closing bracket). The new text is parsed again before it replaces the
    file, atomically: if the case does not read back exactly as given, nothing is
    written.
    """
    data = case.model_dump(
        by_alias=True, exclude_defaults=True, exclude={"checks"} if not case.checks else set()
    )
    data.setdefault("sources", [])
    data.setdefault("facts", [])
    if "provenance" in data:  # after the labels: the reader looks at those first
        data["provenance"] = data.pop("provenance")
    _append(path, data, [case])


def add_conversation(path: Path, turns: list[Case]) -> None:
    """Append a conversation (its turns, as the golden set reads them: ids
    ``"<conversation> turn <k>"``) to a golden-set file: one entry with ``turns`` in JSON,
    JSON Lines and YAML, one row per turn in CSV. Refused and checked as :func:`add_case`."""
    _append(path, conversation_entry(turns), turns)


def conversation_entry(turns: list[Case]) -> dict[str, Any]:
    """The golden entry with ``turns`` that reads back as these turns: tags and provenance
    every turn shares are the entry's."""
    first = turns[0]
    shared_tags = first.tags if all(t.tags == first.tags for t in turns) else []
    entry: dict[str, Any] = {"id": first.conversation}
    if shared_tags:
        entry["tags"] = list(shared_tags)
    entry["turns"] = []
    for t in turns:
        data = t.model_dump(
            by_alias=True,
            exclude_defaults=True,
            exclude={"id", "conversation", "turn", "provenance", "checks"}
            - ({"checks"} if t.checks else set()),
        )
        data.setdefault("sources", [])
        data.setdefault("facts", [])
        if shared_tags:
            data.pop("tags", None)
        entry["turns"].append(data)
    if first.provenance:
        entry["provenance"] = dict(first.provenance)
    return entry


def _append(path: Path, data: dict[str, Any], new_cases: list[Case]) -> None:
    """Append one entry (``data``, reading back as ``new_cases``) to the golden set."""
    from ragrail.fileio import atomic_write_text

    read_text(path, "golden set")  # a clear error for a missing, special or non-UTF-8 file
    text = path.read_bytes().decode("utf-8")  # as it is: read_text would turn CRLF into LF
    golden = parse_golden(text, path)
    _refuse_duplicates(golden, new_cases)
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        new = text.rstrip("\r\n") + _newline(text) + json.dumps(data, ensure_ascii=False) + "\n"
    elif suffix in (".yaml", ".yml"):
        new = _yaml_append(text, data)
    elif suffix == ".csv":
        new = _csv_append(text, path, new_cases)
    else:
        body = text.removeprefix(BOM)
        end = text.rstrip().rfind("]")
        if end < 0 or not body.lstrip().startswith("["):
            raise InputError("ragrail add appends to a golden set that is a JSON array", str(path))
        head = text[:end].rstrip()
        sep = "," if not head.endswith("[") else ""
        new = f"{head}{sep}\n  {json.dumps(data, ensure_ascii=False)}\n]\n"
    try:
        added: GoldenSet | None = parse_golden(new, path)
    except InputError:
        added = None
    n = len(golden.cases)
    if added is None or added.cases[:n] != golden.cases or added.cases[n:] != new_cases:
        raise InputError(
            "cannot append to this file's layout without changing its cases; "
            "add the case by hand (nothing was written)",
            str(path),
        )
    atomic_write_text(path, new, "golden set")


def _refuse_duplicates(golden: GoldenSet, new_cases: list[Case]) -> None:
    """An id or a conversation already there, or a question already asked: a follow-up
    ("and on Pro?") may repeat another conversation's, as its history makes it another."""
    first = new_cases[0]
    taken = {c.id for c in golden.cases} | {c.conversation for c in golden.cases}
    name = first.conversation or first.id
    if name in taken:
        where = next((c.id for c in golden.cases if name in (c.id, c.conversation)), name)
        what = "a conversation" if first.conversation else "a case"
        raise InputError(f"{what} with id {name!r} already exists", golden.where(where))
    for other in golden.cases:
        if (other.turn or 1) == 1 and other.question.strip().lower() == (
            first.question.strip().lower()
        ):
            raise InputError(
                f"case {other.id!r} already asks this question", golden.where(other.id)
            )


def with_expect(case: Case, expect: str) -> Case:
    """The case expecting ``expect`` (``ragrail add --expect``); an InputError naming
    --expect when the value is unknown or does not fit the case's sources."""
    from pydantic import ValidationError

    data = case.model_dump(by_alias=True, exclude_defaults=True)
    try:
        return Case.model_validate({**data, "expect": expect})
    except ValidationError as exc:
        message = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
        raise InputError(f"--expect: {message}") from None


def _newline(text: str) -> str:
    """The line ending the file already uses."""
    return "\r\n" if "\r\n" in text else "\n"


def _yaml_append(text: str, data: dict[str, Any]) -> str:
    """The YAML text with one more item, indented like the file's own list."""
    import yaml

    item = yaml.safe_dump([data], allow_unicode=True, sort_keys=False, default_flow_style=None)
    root = yaml.compose(text.removeprefix(BOM), Loader=yaml.SafeLoader)
    if isinstance(root, yaml.MappingNode):
        cases = next((v for k, v in root.value if k.value == "cases"), None)
        indent = "  "
        if isinstance(cases, yaml.SequenceNode) and cases.value:
            line = text.removeprefix(BOM).split("\n")[cases.value[0].start_mark.line]
            indent = line[: len(line) - len(line.lstrip(" "))]
        item = "".join(indent + ln for ln in item.splitlines(keepends=True))
    nl = _newline(text)
    return text.rstrip("\r\n") + nl + item.replace("\n", nl)


def _csv_append(text: str, path: Path, cases: list[Case]) -> str:
    """The CSV text with one more row per case, written by the csv module under the file's
    own header (which may be quoted, reordered or lack optional columns)."""
    import csv
    import io

    nl = _newline(text)
    body = text.removeprefix(BOM)
    turns = cases[0].conversation is not None
    columns = list(CSV_COLUMNS) + (list(CSV_TURN_COLUMNS) if turns else [])
    names = _csv_header(_csv_reader(body), path) if body.strip() else columns
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator=nl)
    if not body.strip():
        writer.writerow(names)
    for case in cases:
        values = {
            "id": case.id,
            "question": case.question,
            "sources": LIST_SEPARATOR.join(
                [f"{name}:{grade}" for name, grade in case.grades.items()] or case.sources
            ),
            "facts": csv_facts_cell(list(case.facts)) if case.facts else "",
            "tags": LIST_SEPARATOR.join(case.tags),
            "expect": case.expect or "",
            "provenance": json.dumps(case.provenance, ensure_ascii=False)
            if case.provenance
            else "",
            "conversation": case.conversation or "",
            "turn": str(case.turn or ""),
        }
        lost = [k for k, v in values.items() if v and k not in names]
        if lost:
            raise InputError(
                f"the CSV has no {lost[0]!r} column for this case's {lost[0]}; add the column "
                "to its header first (nothing was written)",
                f"{path}:1",
            )
        if case.checks:
            raise InputError("a CSV golden set cannot hold checks; use JSON or YAML", str(path))
        writer.writerow([values[n] for n in names])
    head = text.rstrip("\r\n")
    return (head + nl if head.strip() else head) + buf.getvalue()
