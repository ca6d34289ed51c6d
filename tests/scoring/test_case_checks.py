"""Each check an answer faces, named and counted (CaseResult.checks), as the diff reads them."""

from __future__ import annotations

from pydantic import TypeAdapter

from ragrail.golden import Case
from ragrail.records.results import RetrievedChunk, Sample, Trace
from ragrail.scoring.case import ScoringOptions, score_case
from ragrail.scoring.checks import CheckSpec

SPEC = TypeAdapter(CheckSpec)
CHUNK = RetrievedChunk(id="refunds#1", source="refunds", rank=1, score=1.0,
                       text="Late orders get a 10% refund.")  # fmt: skip


def trace(answer: str, *repeats: str) -> Trace:
    return Trace(case_id="q", retrieved=[CHUNK], answer=answer,
                 samples=[Sample(answer=a) for a in repeats])  # fmt: skip


def test_two_checks_of_one_label_are_two_checks():
    checks = (
        SPEC.validate_python({"type": "not_contains", "value": "minutes"}),
        SPEC.validate_python({"type": "not_contains", "value": "yyy"}),
    )
    case = Case(id="q", question="refund?", sources=["refunds"], facts=["10%"])
    result = score_case(case, trace("A 10% refund within 30 minutes [refunds#1]."),
                        ScoringOptions(checks=checks))  # fmt: skip
    assert result.checks == {
        "behaviour": 1, "fact: 10%": 1, "citation": 1,
        "check: not_contains": 0, "check: not_contains #2": 1, "claims supported": 0,
    }  # fmt: skip


def test_claims_are_counted_over_every_answer_an_abstention_supporting_them_vacuously():
    case = Case(id="q", question="refund?", sources=["refunds"], facts=["10%"])
    answers = ("Late orders get a 10% refund [refunds#1].", "I don't know.",
               "I don't know.", "Late orders get a 90% refund [refunds#1].")  # fmt: skip
    result = score_case(case, trace(*answers))
    assert result.answer_runs == 4
    # held: the first (supported), the two abstentions (nothing claimed); not the last
    assert result.checks["claims supported"] == 3
    assert result.checks["fact: 10%"] == 1
    assert result.checks["behaviour"] == 4
