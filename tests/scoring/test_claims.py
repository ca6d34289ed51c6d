"""Deterministic faithfulness, on the second article's four late-refund scenarios."""

from __future__ import annotations

import pytest

from ragrail.scoring.answers import answer_correctness
from ragrail.scoring.claims import check_claims, faithfulness, numbers, split_claims

GOOD = [
    "10% refund for orders over 30 min late",
    "late refunds capped at ₹150",
    "wallet refunds are instant",
]
NOISY = [
    "Gold costs ₹149/month",
    "10% refund for orders over 30 min late",
    "tips go to the partner",
]
FACTS = ["10%", "₹150"]


def faith(answer: str, context: list[str]) -> float | None:
    return faithfulness(check_claims(answer, context))


def test_split_claims():
    assert split_claims(
        "You get a 10% refund [p#1], capped at ₹150 [p#2], and a free voucher."
    ) == ["You get a 10% refund", "capped at ₹150", "a free voucher"]
    assert split_claims("First. Second one!\n- third item\n* fourth") == [
        "First",
        "Second one",
        "third item",
        "fourth",
    ]
    assert split_claims("Yes. Thanks!") == []  # no content word, no number: not a claim
    assert split_claims("") == []


def test_numbers_must_match_exactly():
    assert numbers("10% off, ₹1,500 or 30 min, v2") == {"10%", "1500", "30"}
    assert not check_claims("capped at ₹150", NOISY)[0].supported  # ₹149 is not ₹150


@pytest.mark.parametrize(
    ("answer", "context", "faithful", "correct"),
    [
        ("You get a 10% refund, capped at ₹150.", GOOD, 1.0, 1.0),
        ("You get a 10% refund, capped at ₹150, and a free dessert voucher.", GOOD, 2 / 3, 1.0),
        ("You get a 10% refund, capped at ₹150.", NOISY, 0.5, 1.0),
        ("You get a 10% refund.", GOOD, 1.0, 0.5),
    ],
    ids=["right", "voucher", "noisy", "only-10"],
)
def test_the_four_scenarios(answer, context, faithful, correct):
    assert faith(answer, context) == pytest.approx(faithful)
    assert answer_correctness(FACTS, answer) == correct


def test_no_claims_is_undefined_and_content_words_need_half_coverage():
    assert faith("Thanks!", GOOD) is None
    verdicts = check_claims("wallet refunds arrive by carrier pigeon", GOOD)
    assert not verdicts[0].supported and "content words" in verdicts[0].reason
    assert check_claims("refunds to the wallet are instant", GOOD)[0].supported
