"""RAGAS: import an ``EvaluationDataset``, export a run as one.

RAGAS writes a dataset with ``EvaluationDataset.to_jsonl`` (one
``SingleTurnSample`` a line, its fields ``user_input``, ``retrieved_contexts``,
``reference_contexts``, ``response``, ``reference``, each left out when unset),
``to_csv`` (the same columns, a list printed as Python prints it:
``['first passage', 'second passage']``) or as a JSON array of the same records.
Datasets from RAGAS 0.1 (``question``, ``contexts``, ``answer``,
``ground_truth`` or ``ground_truths``) are read too, as is a test set from its
generator (``synthesizer_name`` is ignored).

``response`` and ``retrieved_contexts`` make the outputs file, each passage keeping
its id from ``retrieved_context_ids`` (RAGAS's ids for its ID-based metrics) when
the sample has them, so an answer citing its system's own ids still cites them;
``reference_contexts`` (found in the documents) give each case its sources, and a
``reference`` of a few words found in a source becomes its fact. A multi-turn
sample is refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragrail.interop.rows import Columns, RawImport, read_items, rows_to_cases
from ragrail.records.results import RunResult

COLUMNS = Columns(
    question=("user_input", "question"),
    id=("id",),
    answer=("response", "answer"),
    contexts=("retrieved_contexts", "contexts"),
    context_ids=("retrieved_context_ids",),
    reference=("reference", "ground_truth", "ground_truths"),
    reference_contexts=("reference_contexts",),
    reference_context_ids=("reference_context_ids",),
)
KINDS = {".jsonl": "JSON Lines", ".json": "JSON", ".csv": "CSV"}


def read(path: Path) -> RawImport:
    """A RAGAS dataset file (``.jsonl``, ``.json`` or ``.csv``) as raw cases."""
    items = read_items(path, "RAGAS dataset", list_keys=("samples",))
    cases = rows_to_cases(items, COLUMNS)
    kind = KINDS.get(path.suffix.lower(), path.suffix)
    return RawImport(path=path, label=f"RAGAS EvaluationDataset, {kind}", cases=cases)


def sample(case: Any) -> dict[str, Any]:
    """A ragrail case result as a RAGAS ``SingleTurnSample`` record (unset fields left out,
    as ``to_jsonl`` leaves them out)."""
    record: dict[str, Any] = {
        "user_input": case.question,
        "retrieved_contexts": [c.text for c in case.trace.retrieved],
        "retrieved_context_ids": [c.id for c in case.trace.retrieved],
    }
    if case.trace.answer is not None:
        record["response"] = case.trace.answer
    return record


def export_text(result: RunResult) -> str:
    """A run as an ``EvaluationDataset`` JSON Lines file, one sample per question, in the
    run's order: ``EvaluationDataset.from_jsonl`` reads it. The chunk ids go in
    ``retrieved_context_ids``, so importing the file back keeps the answers' citations.
    ragrail labels facts and articles, not reference answers, so ``reference`` is left
    out."""
    return "".join(json.dumps(sample(c), ensure_ascii=False) + "\n" for c in result.cases)
