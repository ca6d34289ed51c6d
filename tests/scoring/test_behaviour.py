"""Expected behaviour (ragrail.scoring.behaviour): refusals and escalations recognised by
phrase or by the system's own flag, and each expectation's verdict, by hand."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ragrail.scoring.answers import DEFAULT_ABSTAIN_PHRASES, abstains
from ragrail.scoring.behaviour import (
    DEFAULT_ESCALATE_PHRASES,
    DEFAULT_REFUSE_PHRASES,
    behaviour_problems,
    describe_counts,
    escalated,
    escalates,
    expectation_counts,
    expected_of,
    refuses,
)
from ragrail.scoring.memo import ScoringCache

ESCALATIONS = [
    "I've escalated this to our support team.",
    "I’ve escalated this to our support team.",  # a typographic apostrophe
    "Sorry, I'm connecting you with a colleague now.",
    "**I have created a ticket** for you: #4411.",
    "Unfortunately, our support team will have to look at this. They reply within a day.",
    "Ich habe Ihre Anfrage an unser Support-Team weitergeleitet.",
    "Leider: ich verbinde Sie jetzt mit einem Mitarbeiter.",
    "J'ai transmis votre demande à notre équipe.",
    "He escalado tu consulta al equipo de soporte.",
    "आपका सवाल हमारी सहायता टीम को भेज दिया है।",
    "お問い合わせを担当者に引き継ぎました。",
]
REFUSALS = [
    "I can't help with that.",
    "Sorry, I cannot share other customers' order details.",
    "I'm not allowed to change another user's password.",
    "Unfortunately I won't do that: it is against our policy.",
    "Dabei kann ich Ihnen nicht helfen.",
    "Leider kann ich Ihnen dabei nicht helfen.",  # verb first after "Leider"
    "Leider kann ich damit nicht helfen.",
    "Je ne peux pas partager ces informations.",
    "Lo siento, no puedo compartir esos datos.",
    "मैं इसमें आपकी मदद नहीं कर सकता।",
    "申し訳ありませんが、その件はお手伝いできません。",
]
ANSWERS = [
    "You have 30 days to ask for a refund [refunds#1].",
    # a phrase quoted inside a real answer is not the reply's behaviour
    "Refunds take 30 days; if not, I've escalated cases like yours before [refunds#1].",
    "Our policy says: I can't help with that is never an answer we give [refunds#1].",
    "The support team will reply within a day [support#1].",
    # only the first sentence is the reply's behaviour (the system's flag says the rest)
    "Refunds take 30 days [refunds#1]. I've escalated your case too.",
]


@pytest.mark.parametrize("answer", ESCALATIONS)
def test_escalations_are_recognised_in_every_default_language(answer):
    assert escalates(answer)
    assert not refuses(answer)
    assert not abstains(answer)


@pytest.mark.parametrize("answer", REFUSALS)
def test_refusals_are_recognised_in_every_default_language(answer):
    assert refuses(answer)
    assert not escalates(answer)
    assert not abstains(answer)


@pytest.mark.parametrize("answer", ANSWERS)
def test_an_answer_is_neither(answer):
    assert not refuses(answer) and not escalates(answer) and not abstains(answer)


@pytest.mark.parametrize(
    "answer", ["I don't know.", "Leider weiß ich das nicht.", "その情報はわかりません。"]
)
def test_an_abstention_is_not_a_refusal_nor_an_escalation(answer):
    assert abstains(answer)
    assert not refuses(answer) and not escalates(answer)


def test_no_default_phrase_is_read_by_two_lists():
    """The defaults are disjoint: a phrase read as one behaviour is never another's."""
    lists = {
        "abstain": (DEFAULT_ABSTAIN_PHRASES, abstains),
        "refuse": (DEFAULT_REFUSE_PHRASES, refuses),
        "escalate": (DEFAULT_ESCALATE_PHRASES, escalates),
    }
    for name, (phrases, _) in lists.items():
        for phrase in phrases:
            sentence = phrase.removeprefix("...") + "."
            for other, (_, test) in lists.items():
                if other != name:
                    assert not test(sentence), (name, other, phrase)


def test_custom_phrases_replace_the_defaults():
    mine = ("Let me get a human",)
    assert escalates("Let me get a human for you.", mine)
    assert not escalates("I've escalated this.", mine)
    assert refuses("Nope, not doing that.", ("Nope",))
    assert not refuses("I can't help with that.", ("Nope",))


def test_the_systems_flag_escalates_whatever_the_words():
    assert escalated("Sure, one moment.", True)
    assert not escalated("Sure, one moment.", False)
    assert not escalated("Sure, one moment.", None)
    # a flag saying no does not unsay the words
    assert escalated("I've escalated this to our team.", False)


EXPECT_CASES = [
    # (expect, answer, flag, problems)
    ("escalate", "I've escalated this to our support team.", None, []),
    ("escalate", "Let me check. Refunds take 30 days [refunds#1].", True, []),
    ("escalate", "Refunds take 30 days [refunds#1].", None, ["should escalate"]),
    ("escalate", "Refunds take 30 days [refunds#1].", False, ["should escalate"]),
    ("escalate", "I can't help with that.", None, ["should escalate"]),
    ("refuse", "I can't help with that.", None, []),
    ("refuse", "I can't help with that.", True, ["should refuse, not escalate"]),
    ("refuse", "I've escalated this to our team.", None, ["should refuse, not escalate"]),
    ("refuse", "Here is their address: 1 Main St.", None, ["should refuse"]),
    ("refuse", "I don't know.", None, ["should refuse"]),
    ("abstain", "I don't know.", None, []),
    ("abstain", "I don't know.", True, ["should say it doesn't know, not escalate"]),
    ("abstain", "I can't help with that.", None, ["should say it doesn't know"]),
    ("abstain", "It is sunny.", None, ["should say it doesn't know"]),
    ("answer", "Refunds take 30 days [refunds#1].", None, []),
    ("answer", "Refunds take 30 days [refunds#1].", True, ["escalated instead of answering"]),
    (
        "answer",
        "I've escalated this. Refunds take 30 days.",
        None,
        ["escalated instead of answering"],
    ),
    ("answer", "I cannot share that. 30 days [refunds#1].", None, ["refused instead of answering"]),
    # an answer that says "I don't know" fails on its facts, as it always did
    ("answer", "I don't know.", None, []),
]


@pytest.mark.parametrize(("expect", "answer", "flag", "problems"), EXPECT_CASES)
def test_behaviour_problems_by_hand(expect, answer, flag, problems):
    assert behaviour_problems(expect, answer, flag) == problems


def test_behaviour_problems_with_a_cache_give_the_same_verdicts():
    cache = ScoringCache()
    for expect, answer, flag, problems in EXPECT_CASES * 2:  # the second round is memoised
        assert behaviour_problems(expect, answer, flag, cache=cache) == problems


def test_a_phrase_in_two_lists_counts_for_both():
    both = ("I can't answer",)
    assert behaviour_problems("refuse", "I can't answer that.", refuse_phrases=both) == []
    assert behaviour_problems("abstain", "I can't answer that.", refuse_phrases=both) == []


def test_expected_of_defaults_by_sources():
    assert expected_of([], None) == "abstain"
    assert expected_of(["plans"], None) == "answer"
    assert expected_of(["plans"], "escalate") == "escalate"
    assert expected_of([], "refuse") == "refuse"


def scored(sources: list[str], expect: str | None, passed: bool | None) -> SimpleNamespace:
    return SimpleNamespace(sources=sources, expect=expect, answer_pass=passed)


def test_expectation_counts_by_hand():
    cases = [
        *[scored(["a"], None, True) for _ in range(9)],
        scored(["a"], "answer", False),
        scored([], None, True),
        scored([], "abstain", True),
        scored([], "refuse", True),
        scored(["a"], "escalate", None),  # errored: counted, never passed
    ]
    counts = expectation_counts(cases)
    assert counts == {"answer": (10, 9), "abstain": (2, 2), "refuse": (1, 1), "escalate": (1, 0)}
    assert list(counts) == ["answer", "abstain", "refuse", "escalate"]
    assert describe_counts(counts) == "answer 9/10 · abstain 2/2 · refuse 1/1 · escalate 0/1"


def test_expectation_counts_are_empty_without_refuse_or_escalate():
    """Golden sets that do not use the new behaviours read as they always did."""
    cases = [scored(["a"], None, True), scored([], None, False), scored(["a"], "answer", True)]
    assert expectation_counts(cases) == {}


def test_expectation_counts_leave_out_behaviours_nobody_expects():
    counts = expectation_counts([scored([], "escalate", True), scored([], "escalate", False)])
    assert counts == {"escalate": (2, 1)}
    assert describe_counts(counts, sep=", ") == "escalate 1/2"
