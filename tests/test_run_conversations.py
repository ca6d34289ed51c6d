"""Totals count a conversation's turns as questions and the conversations apart: one
passes when every turn passes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragrail.golden import parse_golden
from ragrail.records.results import CaseResult, Totals
from ragrail.records.trace import Trace
from ragrail.run import compute_totals
from ragrail.scoring.case import score_case


def _turn(conversation: str | None, turn: int | None, ok: bool = True, **kw: object) -> CaseResult:
    case_id = f"{conversation} turn {turn}" if conversation else f"q{id(kw)}"
    return CaseResult(
        id=case_id,
        question="q?",
        sources=["a"],
        facts=["x"],
        retrieval_hit=True,
        retrieval_recall=1.0 if ok else 0.0,
        answer_pass=True,
        answer_runs=1,
        answer_passes=1,
        conversation=conversation,
        turn=turn,
        trace=Trace(case_id=case_id, answer="x", **kw),  # type: ignore[arg-type]
    )


def test_conversations_counted_apart_from_turns() -> None:
    cases = [
        _turn(None, None),
        _turn("a", 1),
        _turn("a", 2),
        _turn("b", 1),
        _turn("b", 2, ok=False),  # its retrieval missed a fact: b fails
        _turn("c", 1),
        _turn("c", 2, error="timeout"),  # a failed call: c fails
    ]
    totals = compute_totals(cases)
    assert totals.n_cases == 7
    assert (totals.n_conversations, totals.conversations_passed) == (3, 1)


def test_no_conversations_writes_nothing_new() -> None:
    totals = compute_totals([_turn(None, None)])
    assert (totals.n_conversations, totals.conversations_passed) == (0, 0)
    dumped = json.loads(totals.model_dump_json())
    assert "n_conversations" not in dumped
    assert "conversations_passed" not in dumped


def test_more_passed_than_conversations_is_refused() -> None:
    fields = compute_totals([_turn("a", 1)]).model_dump()
    with pytest.raises(ValueError, match="conversations_passed"):
        Totals.model_validate({**fields, "conversations_passed": 2})


def test_a_turns_result_names_its_conversation() -> None:
    entry = {"id": "c", "turns": [{"question": "a?"}, {"question": "b?"}]}
    case = parse_golden(json.dumps([entry]), Path("g.json")).cases[1]
    result = score_case(case, Trace(case_id=case.id, answer="I don't know"))
    assert (result.id, result.conversation, result.turn) == ("c turn 2", "c", 2)
    saved = json.loads(result.model_dump_json())
    assert (saved["conversation"], saved["turn"]) == ("c", 2)
    assert CaseResult.model_validate(saved) == result
