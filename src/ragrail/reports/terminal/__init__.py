"""The plain-text scorecard and baseline diff, laid out for the terminal's width.

Every id, fact, reason, answer or name that reaches the terminal goes through
:func:`~ragrail.text.guard.visible` first, so no input can draw a line of its own
(a case id with a newline and ``WORSE:`` after it) or send a terminal escape.

Widths are measured in terminal cells (a CJK character takes two), from ``COLUMNS``,
the terminal, or 100 columns for a pipe or a CI log. Long ids are cut in the middle
with an ellipsis so the verdict and its reason keep their room; a reason or cause
wraps to a few lines at most, one in a long report, and ends in … when cut (the
JSON and HTML reports keep every word).

The modules: ``layout`` (widths, cutting, wrapping), ``scorecard``, ``diff``
(the baseline diff and verdict lines) and ``tables`` (dry-run plan, re-runs,
sweep); everything is importable from ``ragrail.reports.terminal``.
"""

from __future__ import annotations

from ragrail.reports.terminal.diff import diff_text, id_list, verdict_lines
from ragrail.reports.terminal.layout import (
    DEFAULT_WIDTH,
    ELLIPSIS,
    LINES_PER_QUESTION,
    LONG_REPORT,
    MIN_WIDTH,
    cell_len,
    cut,
    cut_middle,
    fit,
    id_column,
    pad,
    terminal_width,
    wrap,
)
from ragrail.reports.terminal.scorecard import (
    NO_USAGE,
    answer_label,
    answer_reason,
    answers_note,
    causes_lines,
    causes_text,
    header,
    id_cell,
    judge_lines,
    metrics_table,
    money,
    per_question_lines,
    retrieval_label,
    score_rows,
    scorecard,
    stat_line,
    totals_lines,
    usage_cost,
    usage_lines,
)
from ragrail.reports.terminal.tables import plan_text, reruns_text, sweep_table

__all__ = [
    "DEFAULT_WIDTH",
    "ELLIPSIS",
    "LINES_PER_QUESTION",
    "LONG_REPORT",
    "MIN_WIDTH",
    "NO_USAGE",
    "answer_label",
    "answer_reason",
    "answers_note",
    "causes_lines",
    "causes_text",
    "cell_len",
    "cut",
    "cut_middle",
    "diff_text",
    "fit",
    "header",
    "id_cell",
    "id_column",
    "id_list",
    "judge_lines",
    "metrics_table",
    "money",
    "pad",
    "per_question_lines",
    "plan_text",
    "reruns_text",
    "retrieval_label",
    "score_rows",
    "scorecard",
    "stat_line",
    "sweep_table",
    "terminal_width",
    "totals_lines",
    "usage_cost",
    "usage_lines",
    "verdict_lines",
    "wrap",
]
