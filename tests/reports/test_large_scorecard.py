"""A scorecard of thousands of questions lists those that need a look, not every row."""

from __future__ import annotations

from pathlib import Path

from ragrail.records.results import load_run
from ragrail.reports.terminal import scorecard
from ragrail.reports.terminal.scorecard import (
    LIST_ALL_UP_TO,
    LISTED,
    answer_label,
    retrieval_label,
)

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


HOSTILE_IDS = [
    "x\x1b[2J\x1b[31mred",
    "abc\u202edcba",
    "שאלה-מספר",
    "質問の識別子が長い場合",
    "tab\there",
    "nl\nWORSE: fake",
    "\x07bell\x7f",
]


def test_hostile_ids_stay_escaped_and_aligned_on_both_sides_of_the_cut():
    from ragrail.reports.terminal.layout import cell_len

    base = load_run(WHOLE_RUN)
    for n in (LIST_ALL_UP_TO, LIST_ALL_UP_TO + 1):
        cases = [
            base.cases[i % len(base.cases)].model_copy(
                update={"id": f"{HOSTILE_IDS[i % len(HOSTILE_IDS)]}-{i}"}
            )
            for i in range(n)
        ]
        text = scorecard(base.model_copy(update={"cases": cases}), width=100)
        # no control character reaches the terminal: a tab would jump to the next tab stop
        assert not [ch for ch in text if (ord(ch) < 32 and ch != "\n") or 0x7F <= ord(ch) < 0xA0]
        assert "\u202e" not in text and "\\t" in text and "<U+202E>" in text
        rows = [ln for ln in text.splitlines() if "FAIL  missing" in ln]
        assert len(rows) > 20
        starts = {cell_len(ln[: ln.index("FAIL")]) for ln in rows}
        assert len(starts) == 1, starts


def test_a_long_run_where_every_question_passed_shows_no_empty_table():
    from ragrail.reports.terminal.scorecard import _needs_a_look

    base = load_run(WHOLE_RUN)
    good = [c for c in base.cases if not _needs_a_look(c)]
    cases = [good[i % len(good)].model_copy(update={"id": f"q{i}"}) for i in range(201)]
    text = scorecard(base.model_copy(update={"cases": cases}), width=100)
    assert "retrieval  answer" not in text
    assert "all 201 questions passed" in text
