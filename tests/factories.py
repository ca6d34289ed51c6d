"""Results built in tests: a run of given cases with a plain configuration."""

from __future__ import annotations

from typing import Any

from ragrail.records.results import CaseResult, RunConfig, RunResult
from ragrail.run import compute_totals


def run_result(cases: list[CaseResult], judge: str | None = None, **config: Any) -> RunResult:
    """A run of ``cases`` (totals computed), judged by ``judge`` if given; ``config``
    overrides RunConfig's fields."""
    fields: dict[str, Any] = {
        "name": "t",
        "chunking": "chunks by section",
        "top_k": 3,
        "min_score": 0.2,
        "retriever": "standin",
        "answerer": "standin",
        "answerer_label": "standin",
        "n_chunks": 1,
        "n_cases": len(cases),
    }
    return RunResult(
        config=RunConfig(**(fields | config)),
        totals=compute_totals(cases),
        cases=cases,
        judge=judge,
    )
