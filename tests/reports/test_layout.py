"""The terminal layout: width from COLUMNS or the terminal, cells measured for wide
characters, long ids cut in the middle, a long golden set still a readable list."""

from __future__ import annotations

import json
import os
import re

import pytest
from rich.cells import cell_len

from ragrail.diff import compare
from ragrail.records.results import CaseResult
from ragrail.reports.terminal import (
    DEFAULT_WIDTH,
    MIN_WIDTH,
    cut,
    cut_middle,
    diff_text,
    fit,
    id_list,
    metrics_table,
    pad,
    scorecard,
    terminal_width,
    wrap,
)
from tests.test_diff import case, errored, run

N = 120
LONG_REASONS = [
    'missing "the refund window is thirty days from the delivery date"',
    "wrong article cited (billing-and-refunds-policy#3)",
]
LONG_CAUSE = (
    '"the refund window is thirty days from the delivery date" was retrieved at rank 2 '
    "(billing-and-refunds-policy#3) but the answer does not say it"
)


def long_id(i: int) -> str:
    """60 characters; every fifth one in Japanese (120 cells), each unique in its tail."""
    if i % 5 == 0:
        return ("返金の期限はいつまでですか配達日から数えて" * 3)[:55] + f"-{i:04d}"
    return f"how-do-i-get-a-refund-when-my-order-arrives-late-case-{i:06d}"


def failing(cid: str, recall: float = 1.0) -> CaseResult:
    c = case(cid, recall, False, LONG_REASONS)
    c.cause, c.cause_detail = "answer missed a retrieved fact", LONG_CAUSE
    return c


def big_run(n: int = N):
    cases = []
    for i in range(n):
        # a third pass: a real set is never all failures, but the test must hold if it were
        cases.append(case(long_id(i), 1.0, True) if i % 3 == 2 else failing(long_id(i)))
    return run(cases)


def rows_section(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("question"))
    end = lines.index("", start)
    return lines[start + 1 : end]


def test_the_long_ids_are_what_the_test_says():
    assert all(len(long_id(i)) == 60 for i in range(N))
    assert len({long_id(i) for i in range(N)}) == N
    assert cell_len(long_id(0)) == 115  # 55 wide characters and "-0000"


@pytest.mark.parametrize("columns", [80, 100, 200])
def test_120_questions_with_60_character_ids_take_at_most_3_lines_each(monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    text = scorecard(big_run())
    lines = text.splitlines()
    assert len(lines) / N <= 3
    rows = rows_section(text)
    assert len(rows) <= 2 * N  # the per-question section on its own
    wide = [ln for ln in lines if cell_len(ln) > columns]
    assert wide == []
    # every question has its row, and the cut ids still tell the questions apart
    starts = [ln for ln in rows if not ln.startswith("   ")]
    assert len(starts) == N
    shown = [re.split(r"  +", ln.strip())[0] for ln in starts]
    assert len(set(shown)) == N
    assert any("…" in s for s in shown)


def test_a_long_report_cuts_reasons_to_one_line_then_causes(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    text = scorecard(big_run())
    rows = rows_section(text)
    assert len(rows) == N  # one line each
    failing_rows = [ln for ln in rows if "FAIL" in ln]
    assert failing_rows and all(ln.endswith("…") for ln in failing_rows)
    why = text.split("Why they failed:\n")[1].splitlines()
    # 80 failing: causes keep two lines each while the report stays in its budget
    assert why[-1].startswith("  causes: ") and len(why) == 2 * len(failing_rows) + 1
    assert all(ln.endswith("…") for ln in why[1:-1:2])
    # all 120 failing: every cause on one line as well
    every = run([failing(long_id(i)) for i in range(N)])
    why = scorecard(every).split("Why they failed:\n")[1].splitlines()
    assert len(why) == N + 1


def test_a_short_scorecard_keeps_its_reasons_whole():
    cases = [failing(f"case-{i}") for i in range(3)]
    text = scorecard(run(cases), width=100)
    assert "…" not in text
    flat = " ".join(text.split())
    assert " ".join(LONG_REASONS[0].split()) in flat and "the answer does not say it" in flat
    # each reason wraps to two lines at most, hanging under the reason column
    rows = rows_section(text)
    assert len(rows) == 6
    reason_at = rows[0].index("missing")
    assert all(ln[:reason_at].strip() == "" for ln in rows[1::2])


def test_cjk_ids_align_by_cell_width():
    ids = ["返金はいつ", "refund-window", "配達が遅れた場合の返金について教えてください"]
    text = scorecard(run([failing(i) for i in ids]), width=100)
    starts = [ln for ln in rows_section(text) if not ln.startswith("   ")]
    verdict_cells = set()
    reason_cells = set()
    for ln in starts:
        m = re.match(r"  (.+?)  +(hit) +(FAIL) +(\S)", ln)
        assert m, ln
        verdict_cells.add(cell_len(ln[: m.start(2)]))
        reason_cells.add(cell_len(ln[: m.start(4)]))
    assert len(verdict_cells) == 1 and len(reason_cells) == 1
    # the long Japanese id is cut in the middle; the short ones are whole
    assert "返金はいつ" in text and "refund-window" in text
    assert "配達が遅れた場合の返金について教えてください" not in text
    assert any("…" in ln and ln.lstrip().startswith("配達") for ln in starts)


def test_width_comes_from_columns_then_the_terminal_then_100(monkeypatch):
    monkeypatch.setenv("COLUMNS", "132")
    assert terminal_width() == 132
    monkeypatch.setenv("COLUMNS", "12")
    assert terminal_width() == MIN_WIDTH
    for unset in ("", "abc", "0"):
        monkeypatch.setenv("COLUMNS", unset)
        monkeypatch.setattr(os, "get_terminal_size", lambda *a: os.terminal_size((90, 30)))
        assert terminal_width() == 90

        def no_terminal(*args: object) -> os.terminal_size:
            raise OSError("not a terminal")

        monkeypatch.setattr(os, "get_terminal_size", no_terminal)
        assert terminal_width() == DEFAULT_WIDTH
    monkeypatch.delenv("COLUMNS")
    assert terminal_width() == DEFAULT_WIDTH


def test_cut_pad_and_cut_middle_measure_cells():
    assert cut("abc", 3) == "abc"
    assert cut("abcdef", 4) == "abc…"
    assert cut("日本語テキスト", 7) == "日本語…" and cell_len(cut("日本語テキスト", 7)) == 7
    assert cell_len(pad("日本", 6)) == 6 and pad("日本", 6) == "日本  "
    shown = cut_middle("billing-refund-window-question-0042", 21)
    assert shown == "billing-ref…ion-0042" or cell_len(shown) <= 21
    assert shown.startswith("billing") and shown.endswith("0042") and cell_len(shown) <= 21
    assert cell_len(cut_middle("返金" * 20 + "-7", 15)) <= 15
    assert cut_middle("返金" * 20 + "-7", 15).endswith("-7")


def test_fit_keeps_facts_whole_breaks_cjk_and_cuts_after_max_lines():
    text = 'missing "Settings > Profile"; wrong article cited (account-recovery#1)'
    lines = fit(text, 30)
    assert any('"Settings > Profile"' in ln for ln in lines)  # never split
    assert all(cell_len(ln) <= 30 for ln in lines)
    assert fit(text, 22)[:2] == ["missing", '"Settings > Profile";']
    japanese = "返金は配達日から三十日以内に申請してください" * 3
    lines = fit(japanese, 20)
    assert all(cell_len(ln) <= 20 for ln in lines) and "".join(lines) == japanese
    capped = fit(text, 30, max_lines=2)
    assert len(capped) == 2 and capped[-1].endswith("…") and cell_len(capped[-1]) <= 30
    assert fit("", 10) == [""]


def test_wrap_keeps_the_indent_and_never_cuts():
    line = '  WORSE:  downgrade-timing: answer now fails, missing "end of the billing period"'
    lines = wrap(line, 80, subsequent=" " * 10)
    assert lines[0].startswith("  WORSE:") and lines[1].startswith(" " * 10 + '"end')
    assert " ".join(" ".join(lines).split()) == " ".join(line.split())


def test_diff_worse_lines_wrap_whole_at_any_width():
    base = run([case(long_id(i), 1.0, True) for i in range(5)])
    new = run([case(long_id(i), 0.0, False, LONG_REASONS) for i in range(5)])
    for width in (40, 80, 200):
        text = diff_text(compare(new, base), width=width)
        assert all(cell_len(ln) <= width for ln in text.splitlines())
        # a word wider than the line (the Japanese id) is broken, never cut
        flat = "".join(text.split())
        for i in range(5):
            assert f"WORSE:{long_id(i)}:retrieval100%->0%" in flat


def test_a_hundred_new_ids_are_counted_not_listed():
    ids = [long_id(i) for i in range(N)]
    lines = id_list("new (not in baseline)", ids, 100)
    assert len(lines) == 3 and all(cell_len(ln) <= 100 for ln in lines)
    assert lines[-1].endswith(" more")
    kept = int(re.search(r"and (\d+) more", lines[-1]).group(1))
    assert " ".join(lines).count(", ") == N - kept  # the ids shown and the count add up
    assert id_list("new", ["a", "b"], 100) == ["  new: a, b"]


def test_every_line_of_a_scorecard_with_errors_fits_40_to_80_columns():
    long_error = "HTTP 500 from the answering service: " + "upstream timed out " * 6
    r = run([errored(long_id(i), long_error) for i in range(3)] + [failing("ok-id")])
    for width in (40, 60, 80):
        text = scorecard(r, width=width)
        assert [ln for ln in text.splitlines() if cell_len(ln) > width] == []
        # the totals' notes wrap rather than run off: every word is still there
        assert "never a pass, never dropped" in " ".join(text.split())


def test_metrics_table_fits_the_width_with_long_ids():
    text = metrics_table(big_run(), width=100)
    assert all(cell_len(ln) <= 100 for ln in text.splitlines())


def test_cli_scorecard_of_120_kitebase_questions_follows_columns(
    cli, kitebase, tmp_path, monkeypatch
):
    golden = json.loads((kitebase / "golden.json").read_text())
    cases = []
    for i in range(N):
        c = dict(golden[i % len(golden)])
        c["id"] = long_id(i)
        cases.append(c)
    path = tmp_path / "golden.json"
    path.write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
    for columns in (80, 100):
        monkeypatch.setenv("COLUMNS", str(columns))
        r = cli(
            "run", "--example", "kitebase", "--golden", str(path),
            "--baseline", str(tmp_path / "none.json"), "--no-history",
        )  # fmt: skip
        assert r.code == 0, r.err
        lines = r.out.splitlines()
        assert len(lines) / N <= 3
        # the CLI's own note names a path; the scorecard and diff fit the width
        wide = [ln for ln in lines if cell_len(ln) > columns and not ln.startswith("No baseline")]
        assert wide == []
        assert len(rows_section(r.out)) <= 2 * N


def test_the_judges_uncorrected_note_wraps_under_itself_not_the_value_column():
    from ragrail.records.results import Stat
    from tests.test_diff_checks import case as checked_case
    from tests.test_diff_checks import run as checked_run

    r = checked_run(checked_case("q1", {"behaviour": 1}, judge={"polite": True}))
    r.judge = "anthropic claude-opus-5"
    r.judge_stats = {"judge_polite": Stat(value=1.0, low=0.21, high=1.0, n=1)}
    lines = scorecard(r, width=100).splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("  (uncorrected: "))
    # the note is 104 columns at 100: its second line is indented by 3, as the note's text
    assert lines[at + 1].startswith("   ") and not lines[at + 1].startswith("    ")
    assert all(cell_len(ln) <= 100 for ln in lines)
