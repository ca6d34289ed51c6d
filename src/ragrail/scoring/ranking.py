"""Ranking metrics over (ranked ids, relevant ids), with trec_eval's definitions.

Use them to score any ranking: ragrail applies them at article level (the
documents of the retrieved chunks, first occurrence kept) against a case's
``sources``. The ranking is taken in the order given: ties must be broken by
the caller (ragrail's retrievers break them by chunk order, earlier documents
and sections first). Duplicate ids count once, at their first rank. Every
function returns None when there is nothing relevant (the measure is
undefined), never NaN.

Relevance is either a collection of relevant ids (grade 1 each) or a mapping
of judged ids to integer grades, as in a trec_eval qrels file. As in trec_eval
(relevance level 1), the binary measures count an id as relevant when its
grade is >= 1; grade 0 is judged non-relevant, exactly like an unjudged id.
nDCG uses the grade itself as the gain (trec_eval's ``ndcg_cut``).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

Relevance = Mapping[str, int] | Collection[str]


def grades(relevant: Relevance) -> dict[str, int]:
    """Every judged id with its grade; a plain collection is grade 1 each."""
    if isinstance(relevant, Mapping):
        return dict(relevant)
    return dict.fromkeys(relevant, 1)


def relevant_ids(relevant: Relevance) -> set[str]:
    """The ids with grade >= 1: relevant for the binary measures."""
    return {doc for doc, grade in grades(relevant).items() if grade >= 1}


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


def _dcg(gains: Sequence[float]) -> float:
    """DCG = sum over ranks i of gain_i / log2(i + 1)."""
    return sum(g / math.log2(i + 1) for i, g in enumerate(gains, start=1) if g)


def precision_at_k(ranked: Sequence[str], relevant: Relevance, k: int) -> float | None:
    """P@k = |relevant in the top k| / k, dividing by k even when fewer came back."""
    rel = relevant_ids(relevant)
    if not rel:
        return None
    return sum(_hits(ranked, rel, k)) / k


def recall_at_k(ranked: Sequence[str], relevant: Relevance, k: int) -> float | None:
    """R@k = |relevant in the top k| / |relevant|."""
    rel = relevant_ids(relevant)
    if not rel:
        return None
    return sum(_hits(ranked, rel, k)) / len(rel)


def success_at_k(ranked: Sequence[str], relevant: Relevance, k: int) -> float | None:
    """Success@k = 1 if any relevant id is in the top k, else 0."""
    rel = relevant_ids(relevant)
    if not rel:
        return None
    return 1.0 if any(_hits(ranked, rel, k)) else 0.0


def reciprocal_rank_at_k(
    ranked: Sequence[str], relevant: Relevance, k: int | None = None
) -> float | None:
    """RR@k = 1 / rank of the first relevant id within the top k, else 0 (MRR is its mean)."""
    rel = relevant_ids(relevant)
    if not rel:
        return None
    for i, hit in enumerate(_hits(ranked, rel, k), start=1):
        if hit:
            return 1.0 / i
    return 0.0


def average_precision(
    ranked: Sequence[str], relevant: Relevance, k: int | None = None
) -> float | None:
    """AP = (1 / |relevant|) * sum over ranks i <= k of relevant ids of P@i.

    Divides by every relevant id, retrieved or not (trec_eval's ``map``).
    """
    rel = relevant_ids(relevant)
    if not rel:
        return None
    hits, total = 0, 0.0
    for i, hit in enumerate(_hits(ranked, rel, k), start=1):
        if hit:
            hits += 1
            total += hits / i
    return total / len(rel)


def ndcg_at_k(ranked: Sequence[str], relevant: Relevance, k: int) -> float | None:
    """nDCG@k = DCG@k / IDCG@k, DCG@k = sum_{i<=k} gain_i / log2(i + 1), where gain_i is
    the grade of the id at rank i (0 when unjudged; 1 for every id of a plain collection)
    and IDCG@k is the DCG@k of the judged ids sorted by grade (trec_eval's ``ndcg_cut``)."""
    judged = grades(relevant)
    if not relevant_ids(judged):
        return None
    dcg = _dcg([max(judged.get(doc, 0), 0) for doc in dedupe(ranked)[:k]])
    ideal = _dcg(sorted((g for g in judged.values() if g > 0), reverse=True)[:k])
    return dcg / ideal
