"""Runs as tables: the columns of :meth:`ragrail.records.results.RunResult.to_pandas`, one
row per question, and the frame made of them.

pandas is optional (``pip install pandas``, or the ``ragrail[pandas]`` extra) and
imported only here, when a table is asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

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


def table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The rows (each a question as :func:`ragrail.records.results.case_row` makes it) as a
    frame indexed by case id, in the order given."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(
            "RunResult.to_pandas() needs pandas: pip install pandas "
            "(or pip install 'ragrail[pandas]')"
        ) from None
    frame = pd.DataFrame(rows, columns=list(CASE_COLUMNS))
    return frame.astype(_DTYPES).set_index("id")
