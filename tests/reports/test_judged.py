"""The judge's section of the Markdown and HTML reports (ragrail.reports.judged)."""

from __future__ import annotations

from ragrail.judge.config import CriterionConfig
from ragrail.judge.core import judge_totals
from ragrail.judge.correct import Target, correct_totals
from ragrail.reports.html import html_report
from ragrail.reports.markdown import markdown_summary
from tests.judge.test_correct import PAIRS, RUN, run_of, stored

NAME = "<b>polite</b>|x"


def test_a_judge_with_no_verdict_to_total_gets_no_empty_table():
    run = run_of([None, None])
    run.judge_stats = judge_totals(run)
    assert "### Judge" not in markdown_summary(run)
    assert "judge-totals" not in html_report(run)


def test_a_corrected_total_shows_raw_corrected_and_labels_escaped():
    run = run_of(RUN)
    for case in run.cases:
        for cr in case.judge.criteria:
            cr.name = NAME
    run.judge_stats = judge_totals(run)
    target = Target(NAME, CriterionConfig(name=NAME, description="d"), "k")
    run.judge_corrected = correct_totals(run, [target], {("k", NAME): stored(PAIRS)})
    c = run.judge_corrected[f"judge_{NAME}"]
    md = markdown_summary(run)
    row = f"| &lt;b&gt;polite&lt;/b&gt;\\|x | 75.0% | {c.estimate:.1%} | [{c.low:.1%}, {c.high:.1%}] | 8 |"
    assert row in md
    page = html_report(run)
    assert "&lt;b&gt;polite&lt;/b&gt;|x" in page and "<b>polite</b>" not in page
    assert (
        f">{c.estimate:.1%}<" in page and "uncorrected" not in page.split("judge-totals")[1][:2000]
    )
