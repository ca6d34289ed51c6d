"""The ranking metrics of :mod:`ragrail.scoring.ranking` over many queries at once (numpy).

Same definitions (trec_eval's), same edge cases, agreeing with the per-query
functions to 1e-12 (a test compares them on 2,000 random graded queries):

- a ranking counts each id once, at its first rank; ids past its end are not
  relevant (P@k still divides by k);
- an id is relevant for the binary measures when its grade is >= 1; nDCG's gain
  is the grade itself (0 when unjudged, negative grades count 0);
- a query with no relevant id has no value: NaN here, where the per-query
  function returns None (:func:`as_optional` turns one into the other).

A batch holds one row per query: ``grades[q, i]``, the grade of the id at rank
i + 1 of query q (0 when unjudged or past the ranking's end), ``n_relevant[q]``,
how many of q's judged ids have grade >= 1 (retrieved or not), and ``ideal[q]``,
q's positive grades sorted best first (for IDCG). Build it from id lists and
judgements with :func:`from_rankings`, or from a relevance matrix with
:func:`from_matrix`. Every measure is then a few array operations over the
batch, with ``rel[q, i] = grades[q, i] >= 1`` and ``hits@k[q] = sum_{i<=k} rel[q, i]``.

A run does not use it: each case is scored on its own (``scoring.case``), where the
per-query functions cost microseconds; this is for scoring many rankings at once.

    >>> b = from_rankings([["a", "x", "b"]], [{"a", "b", "c"}])
    >>> precision_at_k(b, 3).tolist(), recall_at_k(b, 3).tolist()
    ([0.6666666666666666], [0.6666666666666666])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain, repeat

import numpy as np

from ragrail.scoring import ranking
from ragrail.scoring.ranking import Relevance


@dataclass(frozen=True)
class RankingBatch:
    """One row per query: the grades down each ranking, the relevant count, the ideal gains."""

    grades: np.ndarray  # (queries, depth) float: grade at each rank, 0 unjudged or padding
    n_relevant: np.ndarray  # (queries,) int: judged ids with grade >= 1
    ideal: np.ndarray  # (queries, width) float: positive grades, best first, 0-padded

    def __len__(self) -> int:
        return len(self.n_relevant)


def from_rankings(
    rankings: Sequence[Sequence[str]],
    relevance: Sequence[Relevance],
    depth: int | None = None,
) -> RankingBatch:
    """A batch from each query's ranked ids and its judgements (a collection of relevant
    ids, grade 1 each, or a mapping of ids to grades, as the per-query functions take).

    ``depth`` keeps the first ``depth`` distinct ids of each ranking (None: all of
    them): every measure at a cut-off k <= depth is unchanged by it.
    """
    if len(rankings) != len(relevance):
        raise ValueError(f"{len(rankings)} rankings but {len(relevance)} judgements")
    if depth is not None and depth < 1:
        raise ValueError("depth must be at least 1")
    judged = [ranking.grades(r) for r in relevance]
    # dict.fromkeys keeps each id at its first rank, as ranking.dedupe does, at C speed
    ranked = [list(dict.fromkeys(r))[:depth] for r in rankings]
    table = _rows([list(map(g.get, ids, repeat(0))) for ids, g in zip(ranked, judged, strict=True)])
    ideal = _rows([sorted((v for v in g.values() if v > 0), reverse=True) for g in judged])
    n_relevant = np.array([sum(v >= 1 for v in g.values()) for g in judged], dtype=int)
    return RankingBatch(table, n_relevant, ideal)


def _rows(rows: list[list[int]]) -> np.ndarray:
    """Ragged rows as one float matrix, 0-padded on the right."""
    lengths = np.array([len(r) for r in rows], dtype=int)
    table = np.zeros((len(rows), int(lengths.max(initial=0))))
    table[np.arange(table.shape[1]) < lengths[:, None]] = list(chain.from_iterable(rows))
    return table


def from_matrix(
    grades: np.ndarray,
    n_relevant: np.ndarray | None = None,
    ideal: np.ndarray | None = None,
) -> RankingBatch:
    """A batch from a relevance matrix: ``grades[q, i]`` is the grade of query q's item at
    rank i + 1 (a 0/1 matrix for binary relevance; no item twice in a row).

    ``n_relevant`` defaults to the items of grade >= 1 in the row, and ``ideal`` to the
    row's positive grades sorted best first: right when every judged item is ranked.
    Pass them when some relevant items were not retrieved.
    """
    table = np.asarray(grades, dtype=float)
    if table.ndim != 2:
        raise ValueError(f"grades must be a (queries, ranks) matrix, not {table.ndim}-d")
    if n_relevant is None:
        n_relevant = (table >= 1).sum(axis=1)
    if ideal is None:
        ideal = -np.sort(-np.where(table > 0, table, 0.0), axis=1)
    return RankingBatch(table, np.asarray(n_relevant, dtype=int), np.asarray(ideal, dtype=float))


def _cut(batch: RankingBatch, k: int | None) -> np.ndarray:
    """rel[q, i] for the ranks i <= k (every rank when k is None)."""
    if k is not None and k < 1:
        raise ValueError("k must be at least 1")
    return batch.grades[:, :k] >= 1


def _undefined(batch: RankingBatch, values: np.ndarray) -> np.ndarray:
    """NaN where a query has nothing relevant (the per-query None)."""
    return np.where(batch.n_relevant > 0, values, np.nan)


def _per_relevant(batch: RankingBatch, values: np.ndarray) -> np.ndarray:
    """values / n_relevant, NaN (not a division warning) where n_relevant is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return _undefined(batch, values / batch.n_relevant)


def precision_at_k(batch: RankingBatch, k: int) -> np.ndarray:
    """P@k[q] = hits@k[q] / k, dividing by k even when fewer came back."""
    return _undefined(batch, _cut(batch, k).sum(axis=1) / k)


def recall_at_k(batch: RankingBatch, k: int) -> np.ndarray:
    """R@k[q] = hits@k[q] / n_relevant[q]."""
    return _per_relevant(batch, _cut(batch, k).sum(axis=1).astype(float))


def success_at_k(batch: RankingBatch, k: int) -> np.ndarray:
    """Success@k[q] = 1 if hits@k[q] > 0, else 0."""
    return _undefined(batch, _cut(batch, k).any(axis=1).astype(float))


def reciprocal_rank_at_k(batch: RankingBatch, k: int | None = None) -> np.ndarray:
    """RR@k[q] = 1 / (rank of q's first relevant id within the top k), 0 when none is."""
    rel = _cut(batch, k)
    first = rel.argmax(axis=1) + 1.0  # argmax: the first True; 0 when there is none
    return _undefined(batch, np.where(rel.any(axis=1), 1.0 / first, 0.0))


def average_precision(batch: RankingBatch, k: int | None = None) -> np.ndarray:
    """AP@k[q] = (1 / n_relevant[q]) * sum_{i<=k, rel[q, i]} hits@i[q] / i: the precision at
    each relevant rank, over every relevant id, retrieved or not (trec_eval's ``map``)."""
    rel = _cut(batch, k)
    ranks = np.arange(1, rel.shape[1] + 1)
    precision_at = np.cumsum(rel, axis=1) / ranks
    return _per_relevant(batch, np.where(rel, precision_at, 0.0).sum(axis=1))


def _discounts(n: int) -> np.ndarray:
    """1 / log2(i + 1) for the ranks i = 1..n, with math.log2 as the per-query DCG."""
    return np.array([1.0 / math.log2(i + 1) for i in range(1, n + 1)])


def ndcg_at_k(batch: RankingBatch, k: int) -> np.ndarray:
    """nDCG@k[q] = DCG@k[q] / IDCG@k[q], DCG@k = sum_{i<=k} gain_i / log2(i + 1) with
    gain_i = max(grades[q, i], 0), and IDCG@k the same sum over ``ideal[q]`` (q's
    positive grades, best first): trec_eval's ``ndcg_cut``."""
    if k < 1:
        raise ValueError("k must be at least 1")
    gains = np.maximum(batch.grades[:, :k], 0.0)
    best = batch.ideal[:, :k]
    dcg = gains @ _discounts(gains.shape[1]) if gains.shape[1] else np.zeros(len(batch))
    idcg = best @ _discounts(best.shape[1]) if best.shape[1] else np.zeros(len(batch))
    with np.errstate(divide="ignore", invalid="ignore"):
        return _undefined(batch, dcg / idcg)


MEASURES = {
    "precision_at_k": precision_at_k,
    "recall_at_k": recall_at_k,
    "success_at_k": success_at_k,
    "reciprocal_rank": reciprocal_rank_at_k,
    "average_precision": average_precision,
    "ndcg_at_k": ndcg_at_k,
}


def all_measures(batch: RankingBatch, k: int) -> dict[str, np.ndarray]:
    """Every measure at cut-off k, named as ragrail's per-case article scores."""
    return {name: measure(batch, k) for name, measure in MEASURES.items()}


def as_optional(values: np.ndarray) -> list[float | None]:
    """Per-query values as the per-query functions give them: None where NaN."""
    return [None if math.isnan(v) else v for v in values.tolist()]


# Each batch metric by name, with the per-query function in ranking it agrees with (to 1e-12):
# the pairing the tests check and the benchmark times.
PER_QUERY = {
    "precision_at_k": ranking.precision_at_k,
    "recall_at_k": ranking.recall_at_k,
    "success_at_k": ranking.success_at_k,
    "reciprocal_rank": ranking.reciprocal_rank_at_k,
    "average_precision": ranking.average_precision,
    "ndcg_at_k": ranking.ndcg_at_k,
}
