from __future__ import annotations

from ragrail.records.results import RetrievedChunk
from ragrail.scoring.retrieval import facts_retrieved, hit, recall


def chunk(cid: str, text: str, rank: int = 1) -> RetrievedChunk:
    return RetrievedChunk(id=cid, source=cid.split("#")[0], rank=rank, score=0.5, text=text)


def test_a_fact_counts_only_in_a_chunk_of_a_source_article():
    retrieved = [
        chunk("recovery#1", "Add a Recovery Email here"),
        chunk("faq#1", "authenticator app"),
    ]
    found = facts_retrieved(
        ["recovery email", "authenticator app"], ["recovery", "two-factor"], retrieved
    )
    assert found == ["recovery email"]
    assert hit(found, ["recovery email", "authenticator app"]) is True
    assert recall(found, ["recovery email", "authenticator app"]) == 0.5


def test_no_facts_is_undefined_not_zero():
    assert hit([], []) is None
    assert recall([], []) is None


def test_nothing_retrieved_is_a_miss():
    assert facts_retrieved(["x"], ["a"], []) == []
    assert hit([], ["x"]) is False
    assert recall([], ["x"]) == 0.0


def test_fact_cut_across_two_chunks_is_not_found():
    retrieved = [
        chunk("plans#1", "Downgrades apply at the"),
        chunk("plans#2", "end of the billing period.", 2),
    ]
    assert facts_retrieved(["end of the billing period"], ["plans"], retrieved) == [
        "end of the billing period"
    ]
    assert facts_retrieved(["at the end of the billing period"], ["plans"], retrieved) == []
