"""A scorecard of thousands of questions lists those that need a look, not every row."""

from __future__ import annotations

from pathlib import Path

from ragrail.reports.terminal import scorecard
from ragrail.reports.terminal.scorecard import (
    LIST_ALL_UP_TO,
    LISTED,
    answer_label,
    retrieval_label,
)
from ragrail.results import load_run

WHOLE_RUN = Path(__file__).parents[1] / "data" / "baselines" / "kitebase-v1.json"


def _run_of(n: int):
    run = load_run(WHOLE_RUN)
    cases = [
        run.cases[i % len(run.cases)].model_copy(update={"id": f"q{i}"}) for i in range(n)
    ]
    return run.model_copy(update={"cases": cases})


def test_a_short_run_lists_every_question():
    run = _run_of(LIST_ALL_UP_TO)
    text = scorecard(run, width=100)
    assert all(f"  q{i} " in text or f"  q{i}\n" in text for i in range(LIST_ALL_UP_TO))
    assert "listed:" not in text


def test_a_long_run_lists_the_first_that_did_not_pass_and_counts_the_rest():
    run = _run_of(3_000)
    failing = [
        c
        for c in run.cases
        if retrieval_label(c) not in ("hit", "-") or answer_label(c) not in ("pass", "-")
    ]
    assert 0 < len(failing) < len(run.cases)
    text = scorecard(run, width=200)
    table = text.split("\n\n  total")[0]
    rows = [ln for ln in table.splitlines() if ln.startswith("  q") and "retrieval" not in ln]
    listed = {ln.split()[0] for ln in rows}
    assert listed == {c.id for c in failing[:LISTED]}
    assert f"the first {LISTED} of {len(failing):,} questions that did not pass" in text
    assert f"{3_000 - len(failing):,} passed" in text
    assert "all 3,000 are in --json" in text
    assert len(text.splitlines()) < 3 * LISTED + 40
