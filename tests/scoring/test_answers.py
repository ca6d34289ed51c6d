from __future__ import annotations

from ragrail.scoring.answers import abstains, check_answer, citations, normalise

GIVEN = {"reset-password#1", "sso#1"}


def test_pass_with_fact_and_right_citation():
    answer = "The link expires after 30 Minutes [reset-password#1]."
    assert check_answer(["30 minutes"], ["reset-password"], answer, GIVEN) == []


def test_missing_fact_and_wrong_article():
    answer = "Ask your admin [sso#1]."
    assert check_answer(["30 minutes"], ["reset-password"], answer, GIVEN) == [
        'missing "30 minutes"',
        "wrong article cited (sso#1)",
    ]


def test_citation_of_a_chunk_never_given():
    answer = "30 minutes [reset-password#7] [sso#1]"
    assert check_answer(["30 minutes"], ["reset-password"], answer, GIVEN) == [
        "cites a chunk it was never given (reset-password#7)"
    ]


def test_no_citation_at_all():
    assert check_answer(["30 minutes"], ["reset-password"], "30 minutes.", GIVEN) == ["no citation"]


def test_abstain_cases_accept_curly_apostrophes():
    assert check_answer([], [], "I don’t know.", set()) == []
    assert check_answer([], [], "I do not know that.", set()) == []
    assert check_answer([], [], "Pay by card [plans#1]", set()) == ["should say it doesn't know"]
    assert abstains("I DON'T KNOW")


def test_normalise_and_citations():
    assert normalise("Don’t\n  Know") == "don't know"
    assert citations("a [two-factor#2] b [x] c [sso#10]") == ["two-factor#2", "sso#10"]
