"""Every report shows a conversation's turns together, in order, with its verdict, and
counts conversations apart from questions."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ragrail.records.results import CaseResult
from ragrail.records.trace import Trace
from ragrail.reports.conversations import conversations_of, together
from ragrail.reports.html import html_report
from ragrail.reports.junit import junit_xml
from ragrail.reports.markdown import markdown_summary
from ragrail.reports.terminal.scorecard import scorecard
from tests.factories import run_result


def _case(case_id: str, turn: int | None = None, ok: bool = True) -> CaseResult:
    conversation = case_id.rsplit(" turn ", 1)[0] if turn else None
    return CaseResult(
        id=case_id,
        question=f"{case_id}?",
        sources=["a"],
        facts=["x"],
        retrieval_hit=True,
        retrieval_recall=1.0,
        answer_pass=ok,
        answer_runs=1,
        answer_passes=int(ok),
        problems=[] if ok else ['missing "x"'],
        cause=None if ok else "answer missed a retrieved fact",
        conversation=conversation,
        turn=turn,
        trace=Trace(case_id=case_id, answer="x" if ok else "y"),
    )


# as rounds may leave them: every first turn, then every second turn
CASES = [
    _case("plan turn 1", 1),
    _case("single"),
    _case("invite turn 1", 1),
    _case("plan turn 2", 2, ok=False),
    _case("invite turn 2", 2),
]
ORDER = ["plan turn 1", "plan turn 2", "single", "invite turn 1", "invite turn 2"]


def test_turns_are_moved_next_to_their_first_and_verdicts_name_the_turn():
    assert [c.id for c in together(CASES)] == ORDER
    chats = conversations_of(CASES)
    assert [(c.id, c.verdict()) for c in chats] == [
        ("plan", "FAIL (turn 2 of 2)"),
        ("invite", "pass"),
    ]


def test_scorecard_rows_and_totals():
    text = scorecard(run_result(CASES), width=100)
    rows = [line.split("  ")[1].strip() for line in text.splitlines() if line.endswith("pass")]
    rows += [line.split("  ")[1].strip() for line in text.splitlines() if "FAIL" in line]
    table = text[: text.index("total")]
    assert sorted(rows) == sorted(ORDER)
    assert [table.index(f"  {i} ") for i in ORDER] == sorted(table.index(f"  {i} ") for i in ORDER)
    assert "conversations 1 of 2 pass" in text


def test_html_groups_a_conversations_turns_under_its_verdict():
    page = html_report(run_result(CASES))
    assert "conversations 1 of 2 pass" in page
    plan = page.index("<section class='conversation'><h3>conversation plan: FAIL (turn 2 of 2)")
    end = page.index("</section>", plan)
    assert plan < page.index("plan turn 1?", plan) < page.index("plan turn 2?", plan) < end
    assert page.index("single?") > end


def test_markdown_counts_conversations():
    assert "\nconversations 1 of 2 pass.\n" in markdown_summary(run_result(CASES))


def test_junit_keeps_turn_ids_and_groups_them_by_conversation():
    root = ET.fromstring(junit_xml(run_result(CASES)))
    cases = [(tc.get("name"), tc.get("classname")) for tc in root.iter("testcase")]
    assert cases == [
        ("plan turn 1", "ragrail.t.plan"),
        ("plan turn 2", "ragrail.t.plan"),
        ("single", "ragrail.t"),
        ("invite turn 1", "ragrail.t.invite"),
        ("invite turn 2", "ragrail.t.invite"),
    ]
