from __future__ import annotations

import pytest

from ragrail.records.results import RetrievedChunk
from ragrail.scoring.context import (
    context_average_precision,
    context_precision,
    reciprocal_rank,
    relevant_flags,
)


def chunk(cid: str, text: str) -> RetrievedChunk:
    return RetrievedChunk(id=cid, source=cid.split("#")[0], rank=1, score=1.0, text=text)


def test_relevance_needs_a_fact_and_a_source_article():
    retrieved = [
        chunk("faq#1", "late refunds capped at ₹150"),  # has a fact, wrong article
        chunk("policy#1", "10% refund for orders over 30 min late"),
        chunk("policy#2", "wallet refunds are instant"),
    ]
    assert relevant_flags(["10%", "₹150"], ["policy"], retrieved) == [False, True, False]
    assert relevant_flags(["10%", "₹150"], [], retrieved) == [True, True, False]


def test_hand_computed_precision_ap_and_rr():
    flags = [False, True, True, False]
    assert context_precision(flags) == 0.5
    # AP over relevant ranks 2 and 3: (1/2 + 2/3) / 2
    assert context_average_precision(flags) == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert reciprocal_rank(flags) == 0.5
    assert context_average_precision([True, True, False]) == 1.0


def test_edge_cases():
    assert context_precision([]) is None  # nothing retrieved: undefined, not 0 or NaN
    assert context_average_precision([]) is None
    assert context_average_precision([False, False]) == 0.0
    assert reciprocal_rank([]) == 0.0
    assert reciprocal_rank([False]) == 0.0
    # duplicates: the same chunk twice counts twice in the denominator, as retrieved
    assert context_precision([True, True]) == 1.0
