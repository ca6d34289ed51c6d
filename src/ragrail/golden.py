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


def load_golden(path: Path) -> GoldenSet:
    """Load a golden set from a JSON array (or ``{"cases": [...]}``) or JSONL file.

    Every problem is an InputError naming the file, line and field.
    """
    text = read_text(path, "golden set")
    if path.suffix.lower() == ".jsonl":
        raw = _jsonl_items(text, path)
    else:
        raw = json_array_items(text, path)
        if raw is None:
            data = parse_json(text, path)
            if isinstance(data, dict) and isinstance(data.get("cases"), list):
                raw = [(item, 0) for item in data["cases"]]
            else:
                raise InputError('expected a JSON array of cases (or {"cases": [...]})', str(path))
    return _build(path, raw)


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

    def __str__(self) -> str:
        return f"{self.where}: case {self.case_id!r}: {self.message}"


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
    return problems
