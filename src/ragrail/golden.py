"""The golden set: labelled questions, their loading and their lint.

A case names the articles (``sources``) that answer it and the ``facts`` a
correct answer must contain. Labels never name chunk ids, so a change of
chunking can be evaluated against the same golden set. A case with no sources
is one the documents do not cover: the right answer is "I don't know".
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ragrail.errors import InputError
from ragrail.fileio import json_array_items, parse_json, read_text
from ragrail.scoring.checks import CheckSpec


class Case(BaseModel):
    """One golden-set entry."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    question: str
    sources: list[str] = Field(default_factory=list)
    facts: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    checks: list[CheckSpec] = Field(default_factory=list)

    @field_validator("question")
    @classmethod
    def _question_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("facts", "sources")
    @classmethod
    def _no_blank_items(cls, value: list[str]) -> list[str]:
        if any(not item.strip() for item in value):
            raise ValueError("must not contain empty strings")
        return value

    @property
    def expects_abstain(self) -> bool:
        """True when the documents do not cover the question."""
        return not self.sources


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


def load_golden(path: Path) -> GoldenSet:
    """Load a golden set from JSON (an array, or ``{"cases": [...]}``), JSONL, YAML
    (a list, or ``cases:``) or CSV (columns id, question, sources, facts, tags; several
    values in one cell separated by ``|``).

    Every problem is an InputError naming the file, line and field.
    """
    text = read_text(path, "golden set")
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        raw = _jsonl_items(text, path)
    elif suffix in (".yaml", ".yml"):
        raw = _yaml_items(text, path)
    elif suffix == ".csv":
        raw = _csv_items(text, path)
    else:
        raw = json_array_items(text, path)
        if raw is None:
            data = parse_json(text, path)
            if isinstance(data, dict) and isinstance(data.get("cases"), list):
                raw = [(item, 0) for item in data["cases"]]
            else:
                raise InputError('expected a JSON array of cases (or {"cases": [...]})', str(path))
    return _build(path, raw)


def _yaml_items(text: str, path: Path) -> list[tuple[Any, int]]:
    import yaml

    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(f"invalid YAML: {problem}", where) from None
    if isinstance(data, dict) and "cases" in data and isinstance(root, yaml.MappingNode):
        data = data["cases"]
        root = next(v for k, v in root.value if k.value == "cases")
    if not isinstance(data, list) or not isinstance(root, yaml.SequenceNode):
        raise InputError("expected a YAML list of cases (or cases: [...])", str(path))
    return [(item, node.start_mark.line + 1) for item, node in zip(data, root.value, strict=True)]


def _csv_items(text: str, path: Path) -> list[tuple[Any, int]]:
    import csv
    import io

    reader = csv.DictReader(io.StringIO(text))
    known = {"id", "question", "sources", "facts", "tags"}
    unknown = [f for f in reader.fieldnames or [] if f not in known]
    if unknown:
        raise InputError(
            f"unknown CSV column {unknown[0]!r}; expected id, question, sources, facts, tags",
            f"{path}:1",
        )
    items = []
    for row in reader:
        item: dict[str, Any] = {"id": row.get("id") or "", "question": row.get("question") or ""}
        for key in ("sources", "facts", "tags"):
            cell = (row.get(key) or "").strip()
            item[key] = [v.strip() for v in cell.split(LIST_SEPARATOR) if v.strip()] if cell else []
        items.append((item, reader.line_num))
    return items


def _jsonl_items(text: str, path: Path) -> list[tuple[Any, int]]:
    items = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append((json.loads(line), lineno))
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}", f"{path}:{lineno}:{exc.colno}") from None
    return items


def _build(path: Path, raw: Iterable[tuple[Any, int]]) -> GoldenSet:
    cases: list[Case] = []
    lines: dict[str, int] = {}
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
        cases.append(case)
        lines[case.id] = line
    if not cases:
        raise InputError("the golden set has no cases", str(path))
    return GoldenSet(path=path, cases=cases, lines=lines)


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err["loc"]) or "case"
    kind = err["type"]
    if kind == "missing":
        return f"missing field {field!r}"
    if kind == "extra_forbidden":
        return f"unknown field {field!r}"
    msg = err["msg"].removeprefix("Value error, ")
    return f"field {field!r}: {msg}"


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


def lint_golden(golden: GoldenSet, documents: dict[str, str]) -> list[LintProblem]:
    """Check the labels against the documents.

    - every source names an existing document;
    - every fact appears (case-insensitive, whitespace collapsed) in one of the
      case's source documents, so a typo in a label fails here instead of
      looking like a bot failure;
    - a case with facts has sources, since a fact is only found in a source.
    """
    from ragrail.scoring.answers import normalise

    texts = {name: normalise(text) for name, text in documents.items()}
    problems = []
    for case in golden.cases:
        where = golden.where(case.id)
        unknown = [s for s in case.sources if s not in texts]
        for source in unknown:
            problems.append(LintProblem(where, case.id, f"unknown source {source!r}"))
        if case.facts and not case.sources:
            problems.append(LintProblem(where, case.id, "has facts but no sources"))
        known = [s for s in case.sources if s in texts]
        for fact in case.facts:
            if known and not any(normalise(fact) in texts[s] for s in known):
                problems.append(
                    LintProblem(where, case.id, f'fact "{fact}" not found in {", ".join(known)}')
                )
    problems.extend(_near_duplicates(golden))
    used = {s for case in golden.cases for s in case.sources}
    for name in sorted(set(documents) - used):
        problems.append(
            LintProblem(str(golden.path), "", f"no case uses the document {name!r}", warning=True)
        )
    return problems


def question_words(question: str) -> frozenset[str]:
    from ragrail.retrieval import terms

    return frozenset(terms(question))


def _near_duplicates(golden: GoldenSet, threshold: float = 0.8) -> list[LintProblem]:
    """Warn about questions whose content words overlap by Jaccard >= 0.8 (or are identical):
    a near-duplicate adds weight to one behaviour without testing a new one."""
    words = [(c, question_words(c.question)) for c in golden.cases]
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
    its closing bracket), and the file is replaced atomically.
    """
    from ragrail.fileio import atomic_write_text

    golden = load_golden(path)
    for other in golden.cases:
        if other.id == case.id:
            raise InputError(f"a case with id {case.id!r} already exists", golden.where(case.id))
        if other.question.strip().lower() == case.question.strip().lower():
            raise InputError(
                f"case {other.id!r} already asks this question", golden.where(other.id)
            )
    text = read_text(path, "golden set")
    data = case.model_dump(exclude_defaults=True, exclude={"checks"} if not case.checks else set())
    data.setdefault("sources", [])
    data.setdefault("facts", [])
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        new = text.rstrip("\n") + "\n" + json.dumps(data, ensure_ascii=False) + "\n"
    elif suffix in (".yaml", ".yml"):
        import yaml

        item = yaml.safe_dump([data], allow_unicode=True, sort_keys=False, default_flow_style=None)
        if text.lstrip().startswith("cases:"):
            item = "".join("  " + line for line in item.splitlines(keepends=True))
        new = text.rstrip("\n") + "\n" + item
    elif suffix == ".csv":
        import csv
        import io

        buf = io.StringIO()
        header = (
            text.splitlines()[0].split(",")
            if text.strip()
            else ["id", "question", "sources", "facts", "tags"]
        )
        writer = csv.DictWriter(buf, fieldnames=[h.strip() for h in header], lineterminator="\n")
        writer.writerow(
            {
                k: LIST_SEPARATOR.join(v) if isinstance(v, list) else v
                for k, v in {**data, "tags": data.get("tags", [])}.items()
                if k in writer.fieldnames
            }
        )
        new = text.rstrip("\n") + "\n" + buf.getvalue()
    else:
        end = text.rstrip().rfind("]")
        if end < 0 or not text.lstrip().startswith("["):
            raise InputError("ragrail add appends to a golden set that is a JSON array", str(path))
        head = text[:end].rstrip()
        sep = "," if not head.endswith("[") else ""
        new = f"{head}{sep}\n  {json.dumps(data, ensure_ascii=False)}\n]\n"
    atomic_write_text(path, new)
