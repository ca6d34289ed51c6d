"""Citation markers as framework apps write them: a source's number (``[1]``, as
LlamaIndex's CitationQueryEngine numbers its sources) or a context's own opaque id."""

from __future__ import annotations

import pytest

from ragrail.golden import Case
from ragrail.records.results import RetrievedChunk, Trace
from ragrail.scoring.answers import check_answer
from ragrail.scoring.case import ScoringOptions, score_case
from ragrail.scoring.citing import citation_rule
from ragrail.scoring.claims import check_claims
from ragrail.scoring.markers import citations, cites

UUID = "348ac1c2-7f7e-5b7e-9a4e-3f3b0f0a1c22"
IDS = ["install-ci#2", UUID, "node-7"]


@pytest.mark.parametrize(
    ("answer", "ids", "expected"),
    [
        ("Use quill ci [1].", IDS, ["install-ci#2"]),
        ("Use quill ci [2].", IDS, [UUID]),
        ("Use quill ci [1, 3].", IDS, ["install-ci#2", "node-7"]),
        ("Use quill ci [1][3].", IDS, ["install-ci#2", "node-7"]),
        (f"Use quill ci [{UUID}].", IDS, [UUID]),
        (f"Use quill ci [ {UUID} ; node-7 ].", IDS, [UUID, "node-7"]),
        ("Use quill ci [7].", IDS, ["7"]),  # past the last context: a chunk never given
        ("Use quill ci [sso#1].", IDS, ["sso#1"]),  # the id form reads as ever
        ("Use quill ci [1, Save].", IDS, []),  # a part that is no citation: not a marker
        ("Click [Save], then [node-8].", IDS, []),  # neither a given id nor a number
        ("Use quill ci [0].", IDS, []),  # sources are numbered from 1
        ("Use quill ci [1].", [], []),  # with no contexts a number names none
        (f"Use quill ci [{UUID}].", [], []),
    ],
)
def test_a_bracket_cites_by_position_or_by_a_given_id(answer, ids, expected):
    assert citations(answer, None, ids) == expected


def test_without_the_contexts_only_the_id_form_is_read():
    assert citations("Use quill ci [1] [sso#1].") == ["sso#1"]
    assert cites(["Use quill ci [1]."]) is False
    assert cites(["Use quill ci [1]."], ids=["n1"]) is True


GIVEN = {"n-a": "install-ci", UUID: "logs"}  # chunk id -> article, in rank order


@pytest.mark.parametrize(
    ("answer", "problems"),
    [
        ("Use quill ci [1].", []),
        ("Use quill ci [2].", [f"wrong article cited ({UUID} from logs)"]),
        ("Use quill ci [1, 2].", []),  # one of them points at the source article
        ("Use quill ci [3].", ["cites a chunk it was never given (3)"]),
        (f"Use quill ci [{UUID}].", [f"wrong article cited ({UUID} from logs)"]),
        ("Use quill ci.", ["no citation"]),
    ],
)
def test_check_answer_reads_positions_against_the_contexts_given(answer, problems):
    assert check_answer(["quill ci"], ["install-ci"], answer, GIVEN) == problems


@pytest.mark.parametrize(
    "answer",
    ["Run quill ci in CI [1].", "Run quill ci in CI [1, 2].", f"Run quill ci in CI [{UUID}]."],
)
def test_a_marker_is_no_part_of_the_claim_it_follows(answer):
    verdicts = check_claims(answer, ["Run quill ci in CI to install what the lockfile says."])
    assert [(v.claim, v.supported) for v in verdicts] == [("Run quill ci in CI", True)]


def test_other_brackets_stay_in_the_claim():
    (verdict,) = check_claims("Click [Save] in CI.", ["Run quill ci in CI."])
    assert verdict.claim == "Click [Save] in CI"


def test_an_app_numbering_its_sources_is_held_to_its_citations():
    chunks = [
        RetrievedChunk(id="n-a", source="install-ci", rank=1, score=2.0, text="Run quill ci in CI."),
        RetrievedChunk(id=UUID, source="logs", rank=2, score=1.0, text="Logs go to _logs."),
    ]  # fmt: skip
    case = Case(id="ci", question="How in CI?", sources=["install-ci"], facts=["quill ci"])
    right = Trace(case_id="ci", retrieved=chunks, answer="Run quill ci in CI [1].")
    wrong = Trace(case_id="ci", retrieved=chunks, answer="Run quill ci in CI [2].")
    # the auto rule sees the numbers as citations, so the run requires them
    assert citation_rule("auto", [right]) == (True, "required")
    options = ScoringOptions(require_citation=True)
    scored = score_case(case, right, options)
    assert (scored.answer_pass, scored.faithfulness) == (True, 1.0)
    assert score_case(case, wrong, options).problems == [
        f"wrong article cited ({UUID} from logs)"
    ]


@pytest.mark.parametrize(
    "answer",
    [
        "Read the second item with `args[2]`.",
        "```python\nprint(sys.argv[1])\n```",
        "```\nleft open: x[3]",
        "Use ``items[1]`` here.",
    ],
)
def test_a_bracket_in_code_is_an_index_not_a_source_number(answer: str) -> None:
    # hostile review of 3e459c8: `args[2]` cited the second context, so one code answer
    # of an app that never cites turned "auto" into "required" and failed every answer
    assert citations(answer, None, IDS) == []
    assert not cites([answer], None, None, IDS)
    assert citation_rule("auto", [Trace(case_id="a", answer=answer, retrieved=_chunks())]) == (
        False,
        "none cited",
    )


def test_in_code_an_id_with_its_number_still_cites() -> None:
    assert citations("See `[install-ci#2]` and [1].", None, IDS) == ["install-ci#2"] * 2


def test_the_cached_citations_are_not_changed_by_a_caller() -> None:
    first = citations("Use quill ci [1].", None, IDS)
    first.append("x")
    assert citations("Use quill ci [1].", None, IDS) == ["install-ci#2"]


def test_a_bracket_in_code_stays_in_the_claim() -> None:
    from ragrail.scoring.claims import strip_citations

    assert strip_citations("Run `x[2]` now [1].") == "Run `x[2]` now."
    assert strip_citations("See `[sso#1]`.") == "See ``."  # the id form, as ever


def _chunks() -> list[RetrievedChunk]:
    return [
        RetrievedChunk(id=i, source="install-ci", rank=r, score=1.0, text="Run quill ci.")
        for r, i in enumerate(IDS, 1)
    ]


def test_code_spans_answer_by_position_at_their_edges():
    from ragrail.scoring.markers import CodeSpans

    text = "a `b[1]` c ```\nd[2]\n``` e `f"  # an open backtick is no span
    code = CodeSpans(text)
    inside = [i for i in range(len(text)) if i in code]
    assert inside == [*range(2, 8), *range(11, 23)]
    assert 0 not in CodeSpans("[1]") and 3 not in CodeSpans("no code")
