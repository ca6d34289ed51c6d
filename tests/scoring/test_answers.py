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


# ---------------------------------------------------------------- cited by the system

SOURCES = {"n1": "reset-password", "n2": "sso"}  # LlamaIndex-style node ids -> articles


def test_contexts_the_system_says_it_used_count_as_citations():
    answer = "The link expires after 30 minutes."  # no markers, as LlamaIndex answers
    assert check_answer(["30 minutes"], ["reset-password"], answer, SOURCES, used=["n1"]) == []
    # an opaque id says nothing of its article: the problem names it
    assert check_answer(["30 minutes"], ["reset-password"], answer, SOURCES, used=["n2"]) == [
        "wrong article cited (n2 from sso)"
    ]
    assert check_answer(["30 minutes"], ["reset-password"], answer, SOURCES, used=["n9"]) == [
        "cites a chunk it was never given (n9)"
    ]


def test_used_ids_join_the_markers_and_are_read_as_ids_are():
    answer = "30 minutes [sso#1]"
    given = {"reset-password#1": "reset-password", "sso#1": "sso"}
    # the marker alone cites the wrong article; the used id adds the right one
    assert check_answer(["30 minutes"], ["reset-password"], answer, given) == [
        "wrong article cited (sso#1)"
    ]
    assert (
        check_answer(["30 minutes"], ["reset-password"], answer, given, used=["Reset Password#1"])
        == []
    )


def test_without_the_requirement_no_citation_passes_but_a_bad_one_still_fails():
    def check(answer: str, used: list[str]) -> list[str]:
        return check_answer(
            ["30 minutes"], ["reset-password"], answer, SOURCES, used=used, require_citation=False
        )

    assert check("30 minutes.", []) == []
    assert check("30 minutes [n7#1].", []) == ["cites a chunk it was never given (n7#1)"]
    assert check("30 minutes.", ["n2"]) == ["wrong article cited (n2 from sso)"]
    assert check("1 hour.", []) == ['missing "30 minutes"']


def test_cites_reads_markers_valid_or_not_and_the_systems_own_list():
    from ragrail.scoring.answers import cites

    assert not cites(["30 minutes.", None, ""])
    assert cites(["30 minutes.", "see [nowhere#4]"])
    assert cites(["30 minutes."], ["n1"])
    assert not cites(["30 minutes."], [])
