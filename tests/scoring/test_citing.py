"""[scoring] require_citation: true, false, or auto (decided from the run's answers)."""

from __future__ import annotations

import pytest

from ragrail.golden import Case
from ragrail.records.results import RetrievedChunk, RunConfig, Sample, Trace
from ragrail.run import score_run, settle_citations
from ragrail.scoring.case import ScoringOptions, score_case
from ragrail.scoring.citing import any_cited, citation_rule, citations_note

PLAIN = Trace(case_id="a", answer="Run npm ci.")
MARKED = Trace(case_id="b", answer="Run npm ci [npm-ci#1].")
CITED = Trace(case_id="c", answer="Run npm ci.", cited=["node-7"])
REPEAT_CITES = Trace(
    case_id="d", answer="Run npm ci.", samples=[Sample(answer="Run it [npm-ci#1].")]
)


@pytest.mark.parametrize(
    ("setting", "traces", "expected"),
    [
        ("auto", [PLAIN, PLAIN], (False, "none cited")),
        ("auto", [PLAIN, MARKED], (True, "required")),
        ("auto", [PLAIN, CITED], (True, "required")),
        ("auto", [REPEAT_CITES], (True, "required")),
        ("auto", [], (False, "none cited")),
        (True, [PLAIN], (True, "required")),
        (False, [MARKED], (False, "off")),
    ],
)
def test_the_rule(setting, traces, expected):
    assert citation_rule(setting, traces) == expected


def test_an_empty_cited_list_cites_nothing():
    assert not any_cited([Trace(case_id="a", answer="x", cited=[])])


def config(citations: str) -> RunConfig:
    return RunConfig(
        name="n", chunking="python callable", top_k=3, min_score=0.0, retriever="python",
        answerer="python", answerer_label="python callable app:answer", n_chunks=5, n_cases=2,
        citations=citations,
    )  # fmt: skip


def test_the_scorecard_line_says_why_citations_are_not_required():
    assert citations_note(config("required")) is None
    assert citations_note(config("none cited")) == (
        "citations: not required, no answer cites a source "
        '([scoring] require_citation = "auto")'
    )
    assert citations_note(config("off")) == (
        "citations: not required ([scoring] require_citation = false)"
    )


# ---------------------------------------------------------------- scoring a run

CASES = [
    Case(id="ci", question="How do I install exactly?", sources=["npm-ci"], facts=["npm ci"]),
    Case(id="audit", question="How do I fix advisories?", sources=["npm-audit"], facts=["audit fix"]),
]  # fmt: skip
NODES = {
    "ci": RetrievedChunk(id="n1", source="npm-ci", rank=1, score=1.0, text="Use npm ci in CI."),
    "audit": RetrievedChunk(id="n2", source="npm-audit", rank=1, score=1.0, text="Run npm audit fix."),
}  # fmt: skip


def traces(answers: dict[str, str], cited: dict[str, list[str]] | None = None) -> list[Trace]:
    return [
        Trace(
            case_id=c.id,
            retrieved=[NODES[c.id]],
            answer=answers[c.id],
            cited=(cited or {}).get(c.id),
        )
        for c in CASES
    ]


def run_of(ts: list[Trace], setting: bool | str) -> tuple[list[list[str]], str]:
    run = score_run(config("required"), CASES, ts, ScoringOptions(require_citation=setting))
    return [c.problems for c in run.cases], run.config.citations


PLAIN_ANSWERS = {"ci": "Use npm ci.", "audit": "Run npm audit fix."}


def test_auto_with_no_citation_anywhere_passes_right_answers_and_says_so():
    assert run_of(traces(PLAIN_ANSWERS), "auto") == ([[], []], "none cited")


def test_auto_holds_an_app_that_cites_to_it_a_miss_included():
    answers = {"ci": "Use npm ci [n1#1].", "audit": "Run npm audit fix."}
    problems, citations = run_of(traces(answers), "auto")
    assert citations == "required"
    assert problems == [["cites a chunk it was never given (n1#1)"], ["no citation"]]
    cited = traces(PLAIN_ANSWERS, {"ci": ["n1"]})
    assert run_of(cited, "auto") == ([[], ["no citation"]], "required")


def test_true_requires_and_false_waives_whatever_the_answers():
    assert run_of(traces(PLAIN_ANSWERS), True) == ([["no citation"], ["no citation"]], "required")
    assert run_of(traces(PLAIN_ANSWERS), False) == ([[], []], "off")


def test_a_case_scored_alone_counts_auto_as_required():
    result = score_case(CASES[0], traces(PLAIN_ANSWERS)[0], ScoringOptions(require_citation="auto"))
    assert result.problems == ["no citation"] and result.checks["citation"] == 0


def test_a_run_scored_in_slices_settles_to_what_one_run_decides():
    """A backend scores slices with "auto" counted as required; the driver settles it."""
    options = ScoringOptions(require_citation="auto")
    ts = traces(PLAIN_ANSWERS)
    sliced = [score_case(c, t, options) for c, t in zip(CASES, ts, strict=True)]
    assert [c.answer_pass for c in sliced] == [False, False]
    settled_config, settled = settle_citations(config("required"), CASES, sliced, options)
    whole = score_run(config("required"), CASES, ts, options)
    assert settled_config.citations == whole.config.citations == "none cited"
    assert [c.model_dump() for c in settled] == [c.model_dump() for c in whole.cases]
    # an app that cites keeps the slices' scores as they are
    marked = traces(PLAIN_ANSWERS, {"ci": ["n1"]})
    kept = [score_case(c, t, options) for c, t in zip(CASES, marked, strict=True)]
    assert settle_citations(config("required"), CASES, kept, options)[1] is kept
