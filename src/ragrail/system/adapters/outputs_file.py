"""Precomputed outputs: a JSONL file of answers and contexts, one line per question."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from ragrail.errors import InputError
from ragrail.fileio import iter_lines
from ragrail.jsonio import parse_json
from ragrail.records.case import Case
from ragrail.records.results import Trace
from ragrail.system.adapters.records import OutputRecord, invalid_field, record_to_trace


class OutputsFile:
    """Traces read from a JSONL file instead of produced by running a system."""

    name = "outputs"
    kind = "precomputed"

    @property
    def label(self) -> str:
        return f"precomputed outputs ({self.path.name})"

    def __init__(self, path: Path) -> None:
        self.path = path
        # Each line becomes its trace as it is read, and the parsed line is let go:
        # 100,000 lines held as parsed records took more memory than the whole run.
        self.records: dict[str, Trace] = {}
        self.by_question: dict[str, Trace] = {}
        self._given: set[int] = set()  # id() of the traces handed out to a case
        shared: dict[str, str] = {}  # one copy of each text, however many lines hold it
        id_lines: dict[str, int] = {}
        question_lines: dict[str, int] = {}  # lines with a question and no id
        for lineno, line in iter_lines(path, "outputs file"):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            data = parse_json(line, path, line=lineno)
            if not isinstance(data, dict):
                raise InputError(
                    f"each line must be a JSON object, not {type(data).__name__}", where
                )
            try:
                record = OutputRecord.model_validate(data)
            except ValidationError as exc:
                raise InputError(f"field {invalid_field(exc)}", where) from None
            if record.id is None and record.question is None:
                raise InputError("each line needs an 'id' or a 'question'", where)
            trace = record_to_trace(record.id or "", record, shared=shared)
            if record.id is not None:
                _unique(id_lines, record.id, "id", lineno, where)
                self.records[record.id] = trace
            if record.question is not None:
                question = record.question.strip()
                if record.id is None:
                    _unique(question_lines, question, "question", lineno, where)
                self.by_question.setdefault(question, trace)

    def trace(self, case: Case) -> Trace:
        found = self.records.get(case.id) or self.by_question.get(case.question.strip())
        if found is None:
            return Trace(case_id=case.id, error=f"no output for this case in {self.path.name}")
        if id(found) not in self._given:
            # a line's first case takes the trace itself (most lines have one): no copy
            self._given.add(id(found))
            found.case_id = case.id
            return found
        # a line given to a second case (matched by its question): a copy with its own
        # chunks, so changing one case's trace never changes another's (texts stay shared)
        return found.model_copy(
            update={
                "case_id": case.id,
                "retrieved": [c.model_copy() for c in found.retrieved],
                "samples": [s.model_copy() for s in found.samples],
            }
        )

    def traces(self, cases: list[Case]) -> list[Trace]:
        return [self.trace(c) for c in cases]


def _unique(seen: dict[str, int], key: str, what: str, lineno: int, where: str) -> None:
    """Refuse a second line for the same case: which of the two to score would be a guess."""
    if key in seen:
        raise InputError(
            f"duplicate {what} {key!r} on lines {seen[key]} and {lineno}; keep one", where
        )
    seen[key] = lineno
