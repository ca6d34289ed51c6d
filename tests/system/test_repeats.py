"""Asking a user's own system each question more than once (system/adapters/repeats.py)."""

from __future__ import annotations

import pytest

from ragrail.errors import InputError
from ragrail.records.case import Case
from ragrail.records.trace import RetrievedChunk, Trace
from ragrail.scoring.case import ScoringOptions, score_case
from ragrail.system.adapters.repeats import ask_repeatedly


class Counting:
    """Answers question q with "<q> #<how often q was asked>", citing the context only on
    even askings: the repeats must keep each answer's own citations."""

    def __init__(self, extra: int = 0) -> None:
        self.asked: dict[str, int] = {}
        self.extra = extra

    def traces(self, cases: list[Case]) -> list[Trace]:
        out = []
        for c in cases:
            n = self.asked[c.id] = self.asked.get(c.id, 0) + 1
            chunk = RetrievedChunk(id=f"{c.id}#1", source="doc", text="the answer is x", score=1, rank=1)
            out.append(
                Trace(
                    case_id=c.id,
                    retrieved=[chunk],
                    answer=f"x {c.id} #{n}",
                    cited=[f"{c.id}#1"] if n % 2 == 0 else [],
                    escalated=n == 3 or None,
                )
            )
        return out + out[: self.extra]


CASES = [Case(id=i, question=f"q {i}?", facts=["x"], sources=["doc"]) for i in ("a", "b")]


def test_each_question_is_asked_again_and_its_answers_become_samples_in_order():
    traces = ask_repeatedly(Counting(), CASES, 3)
    assert [t.case_id for t in traces] == ["a", "b"]
    a = traces[0]
    assert a.answer == "x a #1" and [s.answer for s in a.samples] == ["x a #2", "x a #3"]
    assert [s.cited for s in a.samples] == [["a#1"], []]
    assert [s.escalated for s in a.samples] == [None, True]


def test_one_asking_is_the_system_s_traces_as_they_are():
    traces = ask_repeatedly(Counting(), CASES, 1)
    assert [t.samples for t in traces] == [[], []]


def test_a_system_that_returns_more_traces_than_asked_is_an_input_error():
    with pytest.raises(InputError, match="returned 8 traces for 6 questions asked"):
        ask_repeatedly(Counting(extra=2), CASES, 3)


def test_each_repeat_is_scored_with_its_own_citations():
    (trace, _) = ask_repeatedly(Counting(), CASES, 2)
    options = ScoringOptions(k=1, require_citation=True)
    result = score_case(CASES[0], trace, options)
    # the first answer cites nothing (fails), the second cites its context (passes)
    assert (result.answer_passes, result.answer_runs) == (1, 2)
    assert result.checks["citation"] == 1
