"""The batch ranking metrics: hand-computed cases, then agreement with the per-query
functions of ragrail.scoring.ranking to 1e-12 on 2,000 random graded queries."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from ragrail.scoring import ranking
from ragrail.scoring import ranking_batch as rb

PER_QUERY = rb.PER_QUERY


def test_hand_computed():
    # q0: relevant a, b, c; ranked a x b y. q1: a duplicate counts once, at its first rank.
    # q2: nothing relevant (only a grade-0 judgement): undefined. q3: nothing came back.
    b = rb.from_rankings(
        [["a", "x", "b", "y"], ["x", "x", "a"], ["a"], []],
        [{"a", "b", "c"}, {"a"}, {"a": 0}, {"z"}],
    )
    assert b.grades.tolist() == [[1, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]
    assert b.n_relevant.tolist() == [3, 1, 0, 1]
    assert rb.as_optional(rb.precision_at_k(b, 3)) == [2 / 3, 1 / 3, None, 0.0]
    assert rb.as_optional(rb.recall_at_k(b, 3)) == [2 / 3, 1.0, None, 0.0]
    assert rb.as_optional(rb.success_at_k(b, 1)) == [1.0, 0.0, None, 0.0]
    assert rb.as_optional(rb.reciprocal_rank_at_k(b)) == [1.0, 0.5, None, 0.0]
    assert rb.as_optional(rb.reciprocal_rank_at_k(b, 1)) == [1.0, 0.0, None, 0.0]
    # AP = (1/1 + 2/3) / 3 relevant; q1: (1/2) / 1
    assert rb.as_optional(rb.average_precision(b)) == pytest.approx(
        [(1 + 2 / 3) / 3, 0.5, None, 0.0]
    )
    # nDCG@3: DCG = 1 + 1/log2(4) = 1.5; IDCG = 1 + 1/log2(3) + 1/log2(4)
    ndcg = rb.as_optional(rb.ndcg_at_k(b, 3))
    assert ndcg[0] == pytest.approx(1.5 / (1 + 1 / math.log2(3) + 0.5))
    assert ndcg[1] == pytest.approx(1 / math.log2(3)) and ndcg[2] is None and ndcg[3] == 0.0


def test_graded_ndcg_and_the_relevance_threshold():
    # grades: a 3, b 1, c 2 (never retrieved), d 0 (judged non-relevant), e -1
    b = rb.from_rankings([["d", "b", "e", "a"]], [{"a": 3, "b": 1, "c": 2, "d": 0, "e": -1}])
    assert b.ideal.tolist() == [[3, 2, 1]]
    # DCG@4 = 1/log2(3) + 3/log2(5); IDCG@4 = 3 + 2/log2(3) + 1/log2(4)
    expected = (1 / math.log2(3) + 3 / math.log2(5)) / (3 + 2 / math.log2(3) + 0.5)
    assert rb.ndcg_at_k(b, 4)[0] == pytest.approx(expected)
    assert rb.recall_at_k(b, 4)[0] == pytest.approx(2 / 3)  # a, b of a, b, c (grade >= 1)
    assert rb.precision_at_k(b, 10)[0] == pytest.approx(2 / 10)  # divides by k


def test_from_matrix_takes_a_relevance_matrix():
    m = np.array([[0, 1, 0, 1], [0, 0, 0, 0], [2, 0, 1, 0]])
    b = rb.from_matrix(m)
    assert rb.as_optional(rb.precision_at_k(b, 2)) == [0.5, None, 0.5]
    assert rb.as_optional(rb.reciprocal_rank_at_k(b, 4)) == [0.5, None, 1.0]
    # DCG = 2 + 1/log2(4); the best order 2, 1 gives IDCG = 2 + 1/log2(3)
    assert rb.ndcg_at_k(b, 4)[2] == pytest.approx(2.5 / (2 + 1 / math.log2(3)))
    assert rb.ndcg_at_k(rb.from_matrix(np.array([[3, 1, 0]])), 3)[0] == 1.0
    # two relevant items were never retrieved for the first query
    b = rb.from_matrix(m, n_relevant=np.array([4, 0, 2]))
    assert rb.recall_at_k(b, 4).tolist()[0] == 0.5
    with pytest.raises(ValueError, match="matrix"):
        rb.from_matrix(np.zeros(3))


def test_bad_arguments_are_refused():
    b = rb.from_rankings([["a"]], [{"a"}])
    with pytest.raises(ValueError, match="at least 1"):
        rb.precision_at_k(b, 0)
    with pytest.raises(ValueError, match="at least 1"):
        rb.ndcg_at_k(b, 0)
    with pytest.raises(ValueError, match="depth must be at least 1"):
        rb.from_rankings([["a"]], [{"a"}], depth=0)
    with pytest.raises(ValueError, match="2 rankings but 1 judgements"):
        rb.from_rankings([["a"], ["b"]], [{"a"}])
    empty = rb.from_rankings([], [])
    assert len(empty) == 0 and rb.ndcg_at_k(empty, 3).shape == (0,)


def random_queries(seed: int, n: int = 2_000, docs: int = 100):
    """Rankings of up to 100 docs, with duplicates; graded judgements (-1 to 3), some
    with nothing relevant, some as plain sets, some with relevant docs never ranked."""
    rng = random.Random(seed)
    pool = [f"d{i}" for i in range(docs + 20)]
    rankings, judgements = [], []
    for _ in range(n):
        ranked = rng.sample(pool[:docs], rng.randint(0, docs))
        if ranked and rng.random() < 0.2:
            ranked += rng.choices(ranked, k=5)  # repeats count once, at their first rank
        rankings.append(ranked)
        judged = rng.sample(pool, rng.randint(0, 15))
        if rng.random() < 0.2:
            judgements.append(set(judged))
        else:
            judgements.append({d: rng.choice([-1, 0, 0, 1, 2, 3]) for d in judged})
    return rankings, judgements


@pytest.mark.parametrize("k", [1, 3, 10, 100, 150])
def test_agrees_with_the_per_query_functions_on_2000_random_graded_queries(k):
    rankings, judgements = random_queries(seed=k)
    batch = rb.from_rankings(rankings, judgements)
    assert batch.grades.shape == (2_000, 100)
    undefined = 0
    for name, values in rb.all_measures(batch, k).items():
        per_query = PER_QUERY[name]
        for q, (ranked, judged) in enumerate(zip(rankings, judgements, strict=True)):
            expected = per_query(ranked, judged, k)
            if expected is None:
                assert math.isnan(values[q]), (name, q)
                undefined += 1
            else:
                assert abs(values[q] - expected) <= 1e-12, (name, q, values[q], expected)
    assert 0 < undefined < 6 * 2_000  # both kinds of query were compared


def test_reciprocal_rank_and_ap_without_a_cut_off_agree_too():
    rankings, judgements = random_queries(seed=99, n=500)
    batch = rb.from_rankings(rankings, judgements)
    for name, per_query in (
        ("reciprocal_rank", ranking.reciprocal_rank_at_k),
        ("average_precision", ranking.average_precision),
    ):
        values = rb.as_optional(rb.MEASURES[name](batch, None))
        expected = [per_query(r, j) for r, j in zip(rankings, judgements, strict=True)]
        assert values == pytest.approx(expected, abs=1e-12, nan_ok=False)


def test_a_depth_keeps_the_first_distinct_ids_and_every_measure_up_to_it():
    rankings, judgements = random_queries(seed=5, n=300)
    full = rb.from_rankings(rankings, judgements)
    cut = rb.from_rankings(rankings, judgements, depth=3)
    assert cut.grades.shape == (300, 3)
    # a ranking a, a, b: the depth counts distinct ids, so b is still at rank 2
    assert rb.from_rankings([["a", "a", "b"]], [{"b"}], depth=2).grades.tolist() == [[0, 1]]
    for k in (1, 3):
        for name, values in rb.all_measures(cut, k).items():
            np.testing.assert_array_equal(values, rb.all_measures(full, k)[name], err_msg=name)
