"""Diagnosis on hand-built chunkings: a fact split across chunks, a fact whose sentence
was split from its context, and section chunks, which are never said to be cut."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragrail.diagnose import (
    SPLIT_FACT,
    SPLIT_SENTENCE,
    assign_cause,
    locate_facts,
    locate_missed_facts,
)
from ragrail.golden import Case
from ragrail.records.results import CaseResult, MissedFact, Trace
from ragrail.system.corpus import Chunk
from ragrail.system.pipeline import Pipeline, PipelineSettings


def chunks_of(*texts: str, source: str = "refunds") -> list[Chunk]:
    """Consecutive chunks of one document, numbered as the chunker numbers them."""
    return [Chunk(id=f"{source}#{i}", source=source, text=t) for i, t in enumerate(texts, 1)]


def locate(chunks: list[Chunk], fact: str, cuts_text: bool = True, rank: int = 5):
    """Where ``fact`` is, every chunk ranked ``rank`` with score 0.1 (above a 0 minimum)."""
    [missed] = locate_facts([fact], ["refunds"], chunks, lambda i: (rank, 0.1), 0.0, cuts_text)
    return missed


def test_the_fact_itself_cut_between_two_chunks_is_a_split_fact():
    chunks = chunks_of("Refunds are paid within 30", "days of the request.")
    missed = locate(chunks, "30 days")
    assert missed.where == "cut" and missed.chunks == ["refunds#1", "refunds#2"]
    assert missed.rank is None  # no chunk holds it, so none has a rank


def test_a_whole_fact_whose_sentence_began_in_the_previous_chunk_is_a_sentence_split():
    chunks = chunks_of("Intro. The refund window for annual plans", "is 30 days from purchase.")
    missed = locate(chunks, "30 days")
    assert missed.where == "sentence_split"
    assert missed.chunks == ["refunds#2", "refunds#1"]  # the holder, then the other part
    assert (missed.rank, missed.score) == (5, 0.1)


def test_a_whole_fact_whose_sentence_goes_on_in_the_next_chunk_is_a_sentence_split():
    chunks = chunks_of("Intro. Refunds take 30 days when you", "ask by e-mail.")
    assert locate(chunks, "30 days").chunks == ["refunds#1", "refunds#2"]
    assert locate(chunks, "30 days").where == "sentence_split"


def test_a_whole_sentence_in_one_chunk_is_neither_split():
    chunks = chunks_of("Read this first.", "Refunds take 30 days.", "Then we e-mail you.")
    missed = locate(chunks, "30 days")
    assert missed.where == "below_k" and missed.chunks == ["refunds#2"]


def test_a_sentence_ended_before_the_fact_inside_the_chunk_is_not_split():
    # the previous chunk runs on, but the fact's own sentence starts after "ends."
    chunks = chunks_of("The first sentence", "ends. Refunds take 30 days.")
    assert locate(chunks, "30 days").where == "below_k"


def test_cjk_and_devanagari_full_stops_end_sentences():
    assert locate(chunks_of("返金について。", "返金は30日以内です。"), "30日").where == "below_k"
    assert locate(chunks_of("पहला वाक्य।", "रिफंड 30 दिन में।"), "30 दिन").where == "below_k"
    # without the full stop the sentence runs over the boundary
    assert locate(chunks_of("返金について", "返金は30日以内です。"), "30日").where == (
        "sentence_split"
    )


def test_section_chunks_are_never_said_to_be_cut():
    # a section that ends in a list item (no full stop) is still a whole section
    sections = chunks_of(
        "Steps\n\n- Open Settings\n- Click Refund", "Timing\n\nRefunds take 30 days"
    )
    missed = locate(sections, "30 days", cuts_text=False)
    assert missed.where == "below_k" and missed.chunks == ["refunds#2"]
    # a fact running from one section into the next is held by no chunk, but not "cut"
    across = locate(chunks_of("Pay within 30", "days of the invoice."), "30 days", cuts_text=False)
    assert across.where == "across_sections"


def test_chunks_of_different_documents_never_split_a_fact():
    chunks = [
        Chunk(id="refunds#1", source="refunds", text="Paid within 30"),
        Chunk(id="billing#1", source="billing", text="days of the request."),
    ]
    assert locate(chunks, "30 days").where == "not_in_corpus"


def test_a_fact_only_in_another_article_says_where_it_is():
    chunks = [
        Chunk(id="refunds#1", source="refunds", text="Ask support."),
        Chunk(id="billing#1", source="billing", text="Refunds take 30 days."),
    ]
    missed = locate(chunks, "30 days")
    assert missed.where == "not_in_sources" and missed.chunks == ["billing#1"]


def test_token_boundaries_hold_in_the_diagnosis_too():
    # "30 days" is not in "130 days", whole or split
    assert locate(chunks_of("Refunds take 130 days."), "30 days").where == "not_in_corpus"
    assert locate(chunks_of("Refunds take 130", "days."), "30 days").where == "not_in_corpus"


def write_docs(folder: Path) -> Path:
    docs = folder / "docs"
    docs.mkdir()
    (docs / "refunds.md").write_text(
        "# Steps\n\n- Open Settings\n- Click Refund\n\n# Timing\n\nRefunds are paid within 30 days\n",
        encoding="utf-8",
    )
    return docs


@pytest.mark.parametrize("chunk_words", [0, None])
def test_by_section_the_pipeline_never_says_cut(tmp_path, chunk_words):
    docs = write_docs(tmp_path)
    pipeline = Pipeline(
        PipelineSettings(docs=docs, chunk_words=chunk_words, top_k=1, min_score=0.0)
    )
    case = Case(
        id="c",
        question="How do I open settings and click refund?",
        sources=["refunds"],
        facts=["30 days"],
    )
    [missed] = locate_missed_facts(case, [], pipeline)
    assert missed.where in ("below_k", "below_min_score")
    assert missed.chunks == ["refunds#2"]


def test_fixed_size_chunks_through_the_pipeline_find_the_sentence_split(tmp_path):
    docs = write_docs(tmp_path)
    # words: Steps - Open Settings - Click Refund Timing | Refunds are paid within 30 days
    pipeline = Pipeline(PipelineSettings(docs=docs, chunk_words=9, top_k=1, min_score=0.0))
    case = Case(id="c", question="open settings", sources=["refunds"], facts=["paid within"])
    [missed] = locate_missed_facts(case, [], pipeline)
    assert missed.where == "sentence_split", pipeline.chunks
    assert missed.chunks == ["refunds#2", "refunds#1"]


def failing(*missed: MissedFact) -> CaseResult:
    facts = [m.fact for m in missed]
    return CaseResult(
        id="c",
        question="q",
        sources=["refunds"],
        facts=facts,
        answer_pass=False,
        answer_runs=1,
        problems=[f'missing "{f}"' for f in facts],
        missed_facts=list(missed),
        trace=Trace(case_id="c", answer="I don't know."),
    )


def test_causes_name_the_split_fact_before_the_split_sentence():
    split = MissedFact(fact="30 days", where="cut", chunks=["refunds#1", "refunds#2"])
    sentence = MissedFact(
        fact="by e-mail",
        where="sentence_split",
        chunks=["refunds#3", "refunds#2"],
        rank=4,
        score=0.25,
    )
    both = failing(split, sentence)
    assign_cause(both)
    assert both.cause == SPLIT_FACT
    assert both.cause_detail == '"30 days" is split between refunds#1 and refunds#2'
    only_sentence = failing(sentence)
    assign_cause(only_sentence)
    assert only_sentence.cause == SPLIT_SENTENCE == "fact's sentence split from its context"
    assert only_sentence.cause_detail == (
        '"by e-mail" is whole in refunds#3, ranked 4 (score 0.25), but the chunker cut its '
        "sentence, leaving part of it in refunds#2"
    )


def test_across_sections_is_a_retrieval_miss_not_a_cut():
    result = failing(
        MissedFact(fact="30 days", where="across_sections", chunks=["refunds#1", "refunds#2"])
    )
    assign_cause(result)
    assert result.cause == "retrieval miss"
    assert result.cause_detail == (
        '"30 days" runs from refunds#1 into refunds#2, so no section chunk holds it whole'
    )


def test_a_cut_recorded_with_a_rank_by_an_older_run_reads_as_a_sentence_split():
    old = MissedFact(fact="x y", where="cut", chunks=["a#1", "a#2"], rank=3, score=0.5)
    result = failing(old)
    assign_cause(result)
    assert result.cause == SPLIT_SENTENCE
