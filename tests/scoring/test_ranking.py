"""Article-level ranking metrics: hand-computed cases, then agreement with an
independent implementation (ir-measures, trec_eval's definitions) on seeded
random rankings."""

from __future__ import annotations

import math
import random

import pytest

from ragrail.scoring.ranking import (
    average_precision,
    dedupe,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank_at_k,
    success_at_k,
)


def test_hand_computed():
    ranked = ["a", "x", "b", "y"]
    rel = {"a", "b", "c"}
    assert precision_at_k(ranked, rel, 3) == 2 / 3
    assert precision_at_k(["a"], rel, 3) == 1 / 3  # divides by k even when fewer came back
    assert recall_at_k(ranked, rel, 3) == 2 / 3
    assert success_at_k(["x", "y", "a"], rel, 2) == 0.0
    assert reciprocal_rank_at_k(["x", "b"], rel) == 0.5
    assert reciprocal_rank_at_k(["x", "y", "b"], rel, 2) == 0.0
    # AP = (1/1 + 2/3) / 3 relevant
    assert average_precision(ranked, rel) == pytest.approx((1 + 2 / 3) / 3)
    # nDCG@3: DCG = 1/log2(2) + 1/log2(4) = 1.5; IDCG = 1 + 1/log2(3) + 1/log2(4)
    assert ndcg_at_k(ranked, rel, 3) == pytest.approx(1.5 / (1 + 1 / math.log2(3) + 0.5))


def test_edge_cases_are_none_or_zero_never_nan():
    assert precision_at_k(["a"], set(), 3) is None
    assert average_precision([], {"a"}) == 0.0
    assert ndcg_at_k([], {"a"}, 5) == 0.0
    assert reciprocal_rank_at_k([], {"a"}) == 0.0
    # duplicates count once, at their first rank (several chunks of one article)
    assert dedupe(["a", "a", "b", "a"]) == ["a", "b"]
    assert precision_at_k(["a", "a", "b"], {"a", "b"}, 2) == 1.0


def test_agrees_with_ir_measures_on_random_rankings():
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import AP, RR, P, R, Success, nDCG

    rng = random.Random(2024)
    qrels, run, ours = [], [], {}
    docs = [f"d{i}" for i in range(30)]
    for q in range(300):
        qid = f"q{q}"
        relevant = set(rng.sample(docs, rng.randint(1, 6)))
        ranked = rng.sample(docs, rng.randint(0, 12))
        qrels += [ir_measures.Qrel(qid, d, 1) for d in relevant]
        # distinct descending scores: the order is the ranking, no ties to break
        run += [ir_measures.ScoredDoc(qid, d, float(len(ranked) - i)) for i, d in enumerate(ranked)]
        ours[qid] = (ranked, relevant)
    k = 5
    measures = {
        P @ k: precision_at_k,
        R @ k: recall_at_k,
        Success @ k: success_at_k,
        RR @ k: reciprocal_rank_at_k,
        AP @ k: average_precision,
        nDCG @ k: ndcg_at_k,
    }
    seen = 0
    for m in ir_measures.iter_calc(list(measures), qrels, run):
        ranked, relevant = ours[m.query_id]
        assert measures[m.measure](ranked, relevant, k) == pytest.approx(m.value, abs=1e-9), (
            m.measure,
            m.query_id,
        )
        seen += 1
    assert seen == len(ours) * len(measures)  # every query and measure was compared


# ---------------------------------------------------------------- graded relevance


def test_graded_ndcg_uses_the_grade_as_gain():
    ranked = ["a", "x", "b", "z"]
    graded = {"a": 2, "b": 1, "c": 3, "z": 0}
    # DCG@3 = 2/log2(2) + 0 + 1/log2(4) = 2.5; IDCG@3 = 3/log2(2) + 2/log2(3) + 1/log2(4)
    assert ndcg_at_k(ranked, graded, 3) == pytest.approx(2.5 / (3.5 + 2 / math.log2(3)))
    # a grade-0 id at rank 1 gains nothing, like an unjudged one
    assert ndcg_at_k(["z", "c"], graded, 2) == ndcg_at_k(["x", "c"], graded, 2)
    assert ndcg_at_k(["c", "a", "b"], graded, 3) == pytest.approx(1.0)  # the ideal order


def test_binary_measures_count_grade_one_and_up_and_never_grade_zero():
    graded = {"a": 2, "b": 1, "z": 0}
    ranked = ["z", "b", "a"]
    assert precision_at_k(ranked, graded, 3) == pytest.approx(2 / 3)
    assert recall_at_k(ranked, graded, 1) == 0.0
    assert success_at_k(ranked, graded, 1) == 0.0
    assert reciprocal_rank_at_k(ranked, graded) == 0.5
    assert average_precision(ranked, graded) == pytest.approx((1 / 2 + 2 / 3) / 2)


def test_a_list_is_grade_one_each():
    ranked = ["a", "x", "b"]
    for k in (1, 2, 3, 5):
        assert ndcg_at_k(ranked, ["a", "b", "c"], k) == ndcg_at_k(
            ranked, dict.fromkeys("abc", 1), k
        )


def test_only_non_relevant_grades_leave_every_measure_undefined():
    judged = {"a": 0, "b": 0}
    for measure in (precision_at_k, recall_at_k, success_at_k, ndcg_at_k):
        assert measure(["a", "b"], judged, 3) is None
    assert average_precision(["a"], judged) is None and reciprocal_rank_at_k(["a"], judged) is None


def test_graded_agrees_with_ir_measures_on_200_random_rankings():
    # not importorskip: ir-measures is a test dependency, and this is issue 11's acceptance
    import ir_measures
    from ir_measures import AP, RR, P, R, Success, nDCG

    rng = random.Random(11)
    qrels, run, ours = [], [], {}
    docs = [f"d{i}" for i in range(25)]
    for q in range(200):
        qid = f"q{q}"
        judged = rng.sample(docs, rng.randint(1, 10))
        graded = {d: rng.choice((0, 0, 1, 1, 2, 3, 4)) for d in judged}
        graded[judged[0]] = rng.randint(1, 4)  # at least one relevant: every measure defined
        ranked = rng.sample(docs, rng.randint(0, 15))
        qrels += [ir_measures.Qrel(qid, d, g) for d, g in graded.items()]
        # distinct descending scores: the order is the ranking, no ties to break
        run += [ir_measures.ScoredDoc(qid, d, float(len(ranked) - i)) for i, d in enumerate(ranked)]
        ours[qid] = (ranked, graded)
    measures = {nDCG @ k: (ndcg_at_k, k) for k in (1, 3, 5, 10, 20)}
    measures |= {
        m @ 5: (f, 5)
        for m, f in (
            (P, precision_at_k),
            (R, recall_at_k),
            (Success, success_at_k),
            (RR, reciprocal_rank_at_k),
            (AP, average_precision),
        )
    }
    seen = 0
    for m in ir_measures.iter_calc(list(measures), qrels, run):
        ranked, graded = ours[m.query_id]
        func, k = measures[m.measure]
        assert func(ranked, graded, k) == pytest.approx(m.value, abs=1e-9), (m.measure, m.query_id)
        seen += 1
    assert seen == len(ours) * len(measures)  # every query and measure was compared
