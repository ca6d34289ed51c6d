"""Systems under test other than the built-in pipeline.

``OutputsFile``: precomputed outputs, one JSON object per line:

    {"id": "case-id", "answer": "...", "contexts": [{"id": "doc#1", "source": "doc",
     "text": "...", "score": 0.9}]}

``id`` may be replaced by ``question`` (matched exactly). Context order is
rank order; ``score`` is optional. This is also how results from other tools
are imported: write their answers and retrieved passages in this shape.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragrail.errors import InputError
from ragrail.fileio import read_text
from ragrail.golden import Case
from ragrail.results import RetrievedChunk, Trace


class OutputContext(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    source: str | None = None
    text: str
    score: float | None = None


class OutputRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | None = None
    question: str | None = None
    answer: str | None = None
    error: str | None = None
    contexts: list[OutputContext] = Field(default_factory=list)


class OutputsFile:
    """Traces read from a JSONL file instead of produced by running a system."""

    name = "outputs"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: dict[str, OutputRecord] = {}
        self.by_question: dict[str, OutputRecord] = {}
        text = read_text(path, "outputs file")
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                record = OutputRecord.model_validate(json.loads(line))
            except json.JSONDecodeError as exc:
                raise InputError(f"invalid JSON: {exc.msg}", f"{where}:{exc.colno}") from None
            except ValidationError as exc:
                err = exc.errors()[0]
                field = ".".join(str(p) for p in err["loc"])
                raise InputError(f"field {field!r}: {err['msg']}", where) from None
            if record.id is None and record.question is None:
                raise InputError("each line needs an 'id' or a 'question'", where)
            if record.id is not None:
                self.records[record.id] = record
            if record.question is not None:
                self.by_question[record.question.strip()] = record

    @property
    def max_contexts(self) -> int:
        return max((len(r.contexts) for r in self.records.values()), default=0)

    @property
    def n_contexts(self) -> int:
        return len(
            {c.id for r in [*self.records.values(), *self.by_question.values()] for c in r.contexts}
        )

    def trace(self, case: Case) -> Trace:
        record = self.records.get(case.id) or self.by_question.get(case.question.strip())
        if record is None:
            return Trace(case_id=case.id, error=f"no output for this case in {self.path.name}")
        retrieved = [
            RetrievedChunk(
                id=c.id,
                source=c.source or c.id.split("#")[0],
                rank=rank,
                score=c.score if c.score is not None else 0.0,
                text=c.text,
            )
            for rank, c in enumerate(record.contexts, start=1)
        ]
        return Trace(case_id=case.id, retrieved=retrieved, answer=record.answer, error=record.error)

    def traces(self, cases: list[Case]) -> list[Trace]:
        return [self.trace(c) for c in cases]
