"""Ranking metrics over (ranked ids, relevant ids), with trec_eval's definitions.

Use them to score any ranking: ragrail applies them at article level (the
documents of the retrieved chunks, first occurrence kept) against a case's
``sources``. Relevance is binary. The ranking is taken in the order given:
ties must be broken by the caller (ragrail's retrievers break them by chunk
order, earlier documents and sections first). Duplicate ids count once, at
their first rank. Every function returns None when there is nothing relevant
(the measure is undefined), never NaN.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence


def dedupe(ranked: Sequence[str]) -> list[str]:
    """Keep each id at its first rank."""
    seen: set[str] = set()
    out = []
    for item in ranked:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def _hits(ranked: Sequence[str], relevant: Collection[str], k: int | None) -> list[bool]:
    ranked = dedupe(ranked)
    if k is not None:
        ranked = ranked[:k]
    return [item in relevant for item in ranked]


def precision_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float | None:
    """P@k = |relevant in the top k| / k, dividing by k even when fewer came back."""
    if not relevant:
        return None
    return sum(_hits(ranked, relevant, k)) / k


def recall_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float | None:
    """R@k = |relevant in the top k| / |relevant|."""
    if not relevant:
        return None
    return sum(_hits(ranked, relevant, k)) / len(set(relevant))


def success_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float | None:
    """Success@k = 1 if any relevant id is in the top k, else 0."""
    if not relevant:
        return None
    return 1.0 if any(_hits(ranked, relevant, k)) else 0.0


def reciprocal_rank_at_k(
    ranked: Sequence[str], relevant: Collection[str], k: int | None = None
) -> float | None:
    """RR@k = 1 / rank of the first relevant id within the top k, else 0 (MRR is its mean)."""
    if not relevant:
        return None
    for i, hit in enumerate(_hits(ranked, relevant, k), start=1):
        if hit:
            return 1.0 / i
    return 0.0


def average_precision(
    ranked: Sequence[str], relevant: Collection[str], k: int | None = None
) -> float | None:
    """AP = (1 / |relevant|) * sum over ranks i <= k of relevant ids of P@i.

    Divides by every relevant id, retrieved or not (trec_eval's ``map``).
    """
    if not relevant:
        return None
    hits, total = 0, 0.0
    for i, hit in enumerate(_hits(ranked, relevant, k), start=1):
        if hit:
            hits += 1
            total += hits / i
    return total / len(set(relevant))


def ndcg_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float | None:
    """nDCG@k = DCG@k / IDCG@k with binary gains, DCG@k = sum_{i<=k} rel_i / log2(i + 1)."""
    if not relevant:
        return None
    dcg = sum(1.0 / math.log2(i + 1) for i, hit in enumerate(_hits(ranked, relevant, k), 1) if hit)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(k, len(set(relevant))) + 1))
    return dcg / ideal
