"""Runs as tables: :meth:`ragrail.records.results.RunResult.to_pandas`, one row per question.

pandas is optional (``pip install pandas``, or the ``ragrail[pandas]`` extra) and
imported only here, when a table is asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from ragrail.records.results import CaseResult, RunResult

# The columns of RunResult.to_pandas(), in order.
CASE_COLUMNS = (
    "id",
    "question",
    "tags",
    "sources",
    "retrieval_hit",
    "retrieval_recall",
    "answer_pass",
    "answer_pass_rate",
    "answer_runs",
    "flaky",
    "errored",
    "error",
    "cause",
    "cause_detail",
    "problems",
    "missed_facts",
    "retrieved",
    "answer",
    "context_precision",
    "context_average_precision",
    "reciprocal_rank",
    "correctness",
    "faithfulness",
    "judge_faithfulness",
    "prompt_tokens",
    "latency_ms",
)
# Missing values stay missing, not object columns: a bool is True/False/<NA> (not
# scored), a score NaN, a token count <NA>.
_DTYPES = {
    **dict.fromkeys(("retrieval_hit", "answer_pass", "flaky", "errored"), "boolean"),
    **dict.fromkeys(
        (
            "retrieval_recall",
            "answer_pass_rate",
            "context_precision",
            "context_average_precision",
            "reciprocal_rank",
            "correctness",
            "faithfulness",
            "judge_faithfulness",
            "latency_ms",
        ),
        "float64",
    ),
    "answer_runs": "int64",
    "prompt_tokens": "Int64",
}


def case_row(case: CaseResult) -> dict[str, Any]:
    """One question as a flat record (a row of :meth:`RunResult.to_pandas`): scores as
    numbers (None: not scored), facts as their labels (``missed_facts``: those not in any
    retrieved chunk), chunks as their ids in rank order."""
    first_error = next((s.error for s in case.trace.all_samples() if s.error), None)
    retrieved_facts = set(case.facts_retrieved)
    return {
        "id": case.id,
        "question": case.question,
        "tags": list(case.tags),
        "sources": list(case.sources),
        "retrieval_hit": case.retrieval_hit,
        "retrieval_recall": case.retrieval_recall,
        "answer_pass": case.answer_pass,
        "answer_pass_rate": case.answer_pass_rate,
        "answer_runs": case.answer_runs,
        "flaky": case.flaky,
        "errored": case.errored,
        "error": first_error,
        "cause": case.cause,
        "cause_detail": case.cause_detail,
        "problems": list(case.problems),
        "missed_facts": [str(f) for f in case.facts if f not in retrieved_facts],
        "retrieved": [c.id for c in sorted(case.trace.retrieved, key=lambda c: c.rank)],
        "answer": case.trace.answer,
        "context_precision": case.context_precision,
        "context_average_precision": case.context_average_precision,
        "reciprocal_rank": case.reciprocal_rank,
        "correctness": case.correctness,
        "faithfulness": case.faithfulness,
        "judge_faithfulness": case.judge.faithfulness if case.judge is not None else None,
        "prompt_tokens": case.trace.prompt_tokens,
        "latency_ms": case.trace.latency_ms,
    }


def run_frame(run: RunResult) -> pd.DataFrame:
    """One row per question (:func:`case_row`), indexed by case id, in golden-set order."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(
            "RunResult.to_pandas() needs pandas: pip install pandas "
            "(or pip install 'ragrail[pandas]')"
        ) from None
    frame = pd.DataFrame([case_row(c) for c in run.cases], columns=list(CASE_COLUMNS))
    return frame.astype(_DTYPES).set_index("id")
