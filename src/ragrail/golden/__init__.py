"""The golden set: labelled questions, their loading and their lint.

A case names the articles (``sources``) that answer it and the ``facts`` a
correct answer must contain. Labels never name chunk ids, so a change of
chunking can be evaluated against the same golden set. A case with no sources
is one the documents do not cover: the right answer is "I don't know".

The modules: ``model`` (Case, GoldenSet), ``formats`` (loading), ``lint`` and
``add``; everything is importable from ``ragrail.golden``.
"""

from __future__ import annotations

from ragrail.golden.add import add_case
from ragrail.golden.formats import (
    CSV_COLUMNS,
    CSV_MAX_CELL,
    GOLDEN_SUFFIXES,
    LIST_SEPARATOR,
    _build,
    _csv_reader,
    csv_facts,
    csv_facts_cell,
    csv_graded_sources,
    load_golden,
    parse_golden,
)
from ragrail.golden.lint import LintProblem, lint_golden, question_words
from ragrail.records.case import Case, GoldenSet, grade_problem

__all__ = [
    "CSV_COLUMNS",
    "CSV_MAX_CELL",
    "GOLDEN_SUFFIXES",
    "LIST_SEPARATOR",
    "Case",
    "GoldenSet",
    "LintProblem",
    "_build",
    "_csv_reader",
    "add_case",
    "csv_facts",
    "csv_facts_cell",
    "csv_graded_sources",
    "grade_problem",
    "lint_golden",
    "load_golden",
    "parse_golden",
    "question_words",
]
