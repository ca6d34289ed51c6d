"""The golden set: labelled questions, their loading and their lint.

A case names the articles (``sources``) that answer it and the ``facts`` a
correct answer must contain. Labels never name chunk ids, so a change of
chunking can be evaluated against the same golden set. A case with no sources
is one the documents do not cover: the right answer is "I don't know".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    ValidationError,
    field_validator,
    model_validator,
)

from ragrail.errors import InputError
from ragrail.fileio import BOM, json_array_items, parse_json, read_text
from ragrail.scoring.checks import CheckSpec
from ragrail.scoring.matching import Fact, FactField


class Case(BaseModel):
    """One golden-set entry."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    question: str
    # The relevant articles (grade >= 1), in the order given. Graded sources
    # ({"plans": 2, "billing": 1, "faq": 0}) fill ``grades`` with every judged grade.
    sources: list[str] = Field(default_factory=list)
    grades: dict[str, StrictInt] = Field(default_factory=dict, exclude_if=lambda g: not g)
    # a string, {"any": [...]} or {"regex": "..."}; see ragrail.scoring.matching
    facts: list[FactField] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    checks: list[CheckSpec] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _graded_sources(cls, data: Any) -> Any:
        """Sources given as a mapping of article to grade: the names graded >= 1 become
        ``sources`` and every grade is kept in ``grades``. A malformed mapping is left
        for the ``sources`` field to report."""
        if not isinstance(data, dict) or not isinstance(data.get("sources"), dict):
            return data
        graded = data["sources"]
        if grade_problem(graded) is not None:
            return data
        if "grades" in data:
            raise ValueError('give grades in "sources" only, not also in "grades"')
        relevant = [name for name, grade in graded.items() if grade >= 1]
        return {**data, "sources": relevant, "grades": dict(graded)}

    @field_validator("sources", mode="before")
    @classmethod
    def _grades_are_whole_numbers(cls, value: Any) -> Any:
        problem = grade_problem(value) if isinstance(value, dict) else None
        if problem is not None:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _grades_match_sources(self) -> Case:
        if self.grades:
            problem = grade_problem(self.grades)
            if problem is not None:
                raise ValueError(problem)
            relevant = [name for name, grade in self.grades.items() if grade >= 1]
            if relevant != self.sources:
                raise ValueError('"grades" must grade exactly the sources, in order')
        return self

    @field_validator("question")
    @classmethod
    def _question_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("sources")
    @classmethod
    def _no_blank_items(cls, value: list[str]) -> list[str]:
        if any(not item.strip() for item in value):
            raise ValueError("must not contain empty strings")
        return value

    @property
    def expects_abstain(self) -> bool:
        """True when the documents do not cover the question."""
        return not self.sources

    @property
    def relevance(self) -> dict[str, int]:
        """Every judged article with its grade: a plain list of sources is grade 1 each."""
        return dict(self.grades) if self.grades else dict.fromkeys(self.sources, 1)


def grade_problem(graded: dict[Any, Any]) -> str | None:
    """Why a mapping of article to grade is not one (names non-blank strings,
    grades whole numbers >= 0), or None when it is."""
    for name, grade in graded.items():
        if not isinstance(name, str) or not name.strip():
            return "must not contain empty strings"
        if isinstance(grade, bool) or not isinstance(grade, int) or grade < 0:
            return f"the grade of {name!r} must be a whole number >= 0, not {grade!r}"
    return None


@dataclass(frozen=True)
class GoldenSet:
    path: Path
    cases: list[Case]
    lines: dict[str, int]  # case id -> line in the file, for error messages

    def where(self, case_id: str) -> str:
        line = self.lines.get(case_id)
        return f"{self.path}:{line}" if line else str(self.path)


GOLDEN_SUFFIXES = (".json", ".jsonl", ".yaml", ".yml", ".csv")
LIST_SEPARATOR = "|"  # between sources, facts or tags in one CSV cell


CSV_COLUMNS = ("id", "question", "sources", "facts", "tags")
CSV_MAX_CELL = 10 * 1024 * 1024  # characters in one CSV cell (Python's csv stops at 128 KiB)


def load_golden(path: Path, root: Path | None = None) -> GoldenSet:
    """Load a golden set from JSON (an array, or ``{"cases": [...]}``), JSONL, YAML
    (a list, or ``cases:``) or CSV (columns id, question, sources, facts, tags; several
    values in one cell separated by ``|``; a facts cell starting with ``[`` is a JSON
    list of facts). A UTF-8 byte-order mark is allowed. A fact is a string,
    ``{"any": [...]}`` or ``{"regex": "..."}`` (see :mod:`ragrail.scoring.matching`).

    Every problem is an InputError naming the file, line and field. The ``python``
    checks' functions are imported from ``root`` (the project folder; by default
    the golden set's own folder), so a missing one fails here.
    """
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
        raw = json_array_items(text, path)
        if raw is None:
            data = parse_json(text, path)
            if isinstance(data, dict) and isinstance(data.get("cases"), list):
                raw = [(item, 0) for item in data["cases"]]
            else:
                raise InputError('expected a JSON array of cases (or {"cases": [...]})', str(path))
    else:
        raise InputError(
            f"unknown golden-set format {path.suffix or '(no extension)'!r}; "
            f"use one of {', '.join(GOLDEN_SUFFIXES)}",
            str(path),
        )
    return _build(path, raw, path.parent if root is None else root)


def _yaml_loader() -> type:
    """PyYAML's SafeLoader, except that a key given twice in one mapping is an error:
    YAML says keys are unique, and PyYAML would silently keep the last one."""
    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):
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


def _yaml_items(text: str, path: Path) -> list[tuple[Any, int]]:
    import yaml

    loader = _yaml_loader()(text)
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(f"invalid YAML: {problem}", where) from None
    except RecursionError:
        raise InputError("invalid YAML: nested too deeply", str(path)) from None
    finally:
        loader.dispose()
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

    if csv.field_size_limit() < CSV_MAX_CELL:
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
    unknown = [f for f in names if f not in CSV_COLUMNS]
    if unknown:
        raise InputError(
            f"unknown CSV column {unknown[0]!r}; expected {', '.join(CSV_COLUMNS)}", f"{path}:1"
        )
    repeated = sorted({f for f in names if names.count(f) > 1})
    if repeated:
        raise InputError(f"CSV column {repeated[0]!r} appears twice", f"{path}:1")
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
    items = []
    start = reader.line_num + 1
    while True:
        try:
            row = next(reader, None)
        except csv.Error as exc:
            if "field larger than field limit" in str(exc):
                exc = f"a cell is longer than {CSV_MAX_CELL:,} characters"  # type: ignore[assignment]
            raise InputError(f"invalid CSV: {exc}", f"{path}:{start}") from None
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
            try:
                item["sources"] = csv_graded_sources(item["sources"])
            except ValueError as exc:
                raise InputError(f"field 'sources': {exc}", f"{path}:{start}") from None
            items.append((item, start))
        start = reader.line_num + 1


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
    for index, (item, line) in enumerate(raw):
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
    return GoldenSet(path=path, cases=cases, lines=lines)


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


@dataclass(frozen=True)
class LintProblem:
    where: str
    case_id: str
    message: str
    warning: bool = False

    def __str__(self) -> str:
        kind = "warning: " if self.warning else ""
        subject = f"case {self.case_id!r}: " if self.case_id else ""
        return f"{self.where}: {kind}{subject}{self.message}"


def lint_golden(
    golden: GoldenSet, documents: dict[str, str], language: str = "en"
) -> list[LintProblem]:
    """Check the labels against the documents.

    - every source names an existing document;
    - every fact is found (by :mod:`ragrail.scoring.matching`, as scoring finds it)
      in one of the case's source documents, so a typo in a label fails here
      instead of looking like a bot failure;
    - a case with facts has sources, since a fact is only found in a source.
    """
    from ragrail.scoring.matching import find, normalise

    texts = {name: normalise(text) for name, text in documents.items()}
    problems = []
    for case in golden.cases:
        where = golden.where(case.id)
        unknown = [s for s in case.relevance if s not in texts]  # grade-0 names too
        for source in unknown:
            problems.append(LintProblem(where, case.id, f"unknown source {source!r}"))
        if case.facts and not case.sources:
            problems.append(LintProblem(where, case.id, "has facts but no sources"))
        known = [s for s in case.sources if s in texts]
        for fact in case.facts:
            if known and not any(find(fact, texts[s]) is not None for s in known):
                problems.append(
                    LintProblem(where, case.id, f'fact "{fact}" not found in {", ".join(known)}')
                )
    problems.extend(_near_duplicates(golden, language=language))
    used = {s for case in golden.cases for s in case.relevance}
    for name in sorted(set(documents) - used):
        problems.append(
            LintProblem(str(golden.path), "", f"no case uses the document {name!r}", warning=True)
        )
    return problems


def question_words(question: str, language: str = "en") -> frozenset[str]:
    """A question's content terms in the project's language (Japanese: character bigrams)."""
    from ragrail.scoring.tokens import terms

    return frozenset(terms(question, language))


def _near_duplicates(
    golden: GoldenSet, threshold: float = 0.8, language: str = "en"
) -> list[LintProblem]:
    """Warn about questions whose content words overlap by Jaccard >= 0.8 (or are identical):
    a near-duplicate adds weight to one behaviour without testing a new one."""
    words = [(c, question_words(c.question, language)) for c in golden.cases]
    out = []
    for i, (a, wa) in enumerate(words):
        for b, wb in words[i + 1 :]:
            if not wa or not wb:
                continue
            jaccard = len(wa & wb) / len(wa | wb)
            if jaccard >= threshold:
                out.append(
                    LintProblem(
                        golden.where(b.id),
                        b.id,
                        f"question is a near-duplicate of {a.id!r} ({jaccard:.0%} shared words)",
                        warning=True,
                    )
                )
    return out


def add_case(path: Path, case: Case) -> None:
    """Append a case to a golden-set file in its own format, refusing duplicates.

    The existing text is kept as it is (a JSON array gets the case inserted before
    its closing bracket). The new text is parsed again before it replaces the
    file, atomically: if the case does not read back exactly as given, nothing is
    written.
    """
    from ragrail.fileio import atomic_write_text

    read_text(path, "golden set")  # a clear error for a missing, special or non-UTF-8 file
    text = path.read_bytes().decode("utf-8")  # as it is: read_text would turn CRLF into LF
    golden = parse_golden(text, path)
    for other in golden.cases:
        if other.id == case.id:
            raise InputError(f"a case with id {case.id!r} already exists", golden.where(case.id))
        if other.question.strip().lower() == case.question.strip().lower():
            raise InputError(
                f"case {other.id!r} already asks this question", golden.where(other.id)
            )
    data = case.model_dump(
        by_alias=True, exclude_defaults=True, exclude={"checks"} if not case.checks else set()
    )
    data.setdefault("sources", [])
    data.setdefault("facts", [])
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        new = text.rstrip("\r\n") + _newline(text) + json.dumps(data, ensure_ascii=False) + "\n"
    elif suffix in (".yaml", ".yml"):
        new = _yaml_append(text, data)
    elif suffix == ".csv":
        new = _csv_append(text, path, case)
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
    if added is None or added.cases[:-1] != golden.cases or added.cases[-1] != case:
        raise InputError(
            "cannot append to this file's layout without changing its cases; "
            "add the case by hand (nothing was written)",
            str(path),
        )
    atomic_write_text(path, new, "golden set")


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


def _csv_append(text: str, path: Path, case: Case) -> str:
    """The CSV text with one more row, written by the csv module under the file's own
    header (which may be quoted, reordered or lack optional columns)."""
    import csv
    import io

    nl = _newline(text)
    body = text.removeprefix(BOM)
    names = _csv_header(_csv_reader(body), path) if body.strip() else list(CSV_COLUMNS)
    values = {
        "id": case.id,
        "question": case.question,
        "sources": LIST_SEPARATOR.join(
            [f"{name}:{grade}" for name, grade in case.grades.items()] or case.sources
        ),
        "facts": csv_facts_cell(list(case.facts)) if case.facts else "",
        "tags": LIST_SEPARATOR.join(case.tags),
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
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator=nl)
    if not body.strip():
        writer.writerow(names)
    writer.writerow([values[n] for n in names])
    head = text.rstrip("\r\n")
    return (head + nl if head.strip() else head) + buf.getvalue()
