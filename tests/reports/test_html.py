"""The HTML report's size at scale: above FULL_DETAIL_UP_TO questions a passing question's
drill-down is brief, every failing one stays whole, and --full keeps everything."""

from __future__ import annotations

import re

import pytest

from ragrail.records.results import load_run
from ragrail.reports import html


@pytest.fixture
def kitebase_run(cli, tmp_path):
    """Kitebase at top_k 1: some questions pass, some fail."""
    assert cli("run", "--example", "kitebase", "--top-k", "1", "--json", "r.json").code in (0, 1)
    return load_run(tmp_path / "r.json", "results")


def _details(page: str) -> dict[str, str]:
    return dict(re.findall(r"<details class='case' id='case-([^']+)'.*?>(.*?)</details>", page, re.S))


def test_a_large_run_keeps_failing_questions_whole_and_passing_ones_brief(kitebase_run, monkeypatch):
    monkeypatch.setattr(html, "FULL_DETAIL_UP_TO", len(kitebase_run.cases) - 1)
    page = html.html_report(kitebase_run)
    details = _details(page)
    passing = [c for c in kitebase_run.cases if c.answer_pass is True and c.trace.prompt]
    failing = [c for c in kitebase_run.cases if c.answer_pass is False and c.trace.prompt]
    assert passing and failing
    for case in passing:
        assert "class='prompt'" not in details[case.id]
        assert "<div class='text'>" not in details[case.id]
        assert "class='answer'" in details[case.id]  # the answer itself is always shown
    for case in failing:
        assert "class='prompt'" in details[case.id]
        assert "<div class='text'>" in details[case.id] or not case.trace.retrieved
    assert "ragrail report --full" in page

    whole = html.html_report(kitebase_run, full=True)
    assert all("class='prompt'" in _details(whole)[c.id] for c in passing)
    assert "ragrail report --full" not in whole
    assert len(page) < len(whole)


def test_a_run_within_the_limit_is_whole(kitebase_run):
    page = html.html_report(kitebase_run)
    assert all(
        "class='prompt'" in body
        for case_id, body in _details(page).items()
        if next(c for c in kitebase_run.cases if c.id == case_id).trace.prompt
    )
    assert "ragrail report --full" not in page
