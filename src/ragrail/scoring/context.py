"""Context metrics per question, from the labelled facts (no model needed).

A retrieved chunk is *relevant* when it contains at least one of the case's
facts (as :mod:`ragrail.text.matching` finds them) and, when the case names
sources, comes from one of them. Relevance by fact, not by chunk id, keeps the labels valid when the
chunking changes.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragrail.records.results import RetrievedChunk
from ragrail.text.matching import as_fact, find, normalise


def relevant_flags(
    facts: Sequence[str], sources: Sequence[str], retrieved: Sequence[RetrievedChunk]
) -> list[bool]:
    """One flag per retrieved chunk, in rank order."""
    needles = [as_fact(f) for f in facts]
    out = []
    for chunk in retrieved:
        if sources and chunk.source not in sources:
            out.append(False)
            continue
        text = normalise(chunk.text)
        out.append(any(find(n, text) is not None for n in needles))
    return out


def context_precision(flags: Sequence[bool]) -> float | None:
    """precision = relevant retrieved chunks / retrieved chunks.

    None (undefined) when nothing was retrieved.
    """
    if not flags:
        return None
    return sum(flags) / len(flags)


def context_average_precision(flags: Sequence[bool]) -> float | None:
    """Rank-aware precision: the mean of precision@i over the ranks i of relevant chunks,

        AP = (1 / R) * sum_{i : rel_i} (relevant in top i) / i,   R = relevant retrieved,

    so relevant chunks ranked first score higher (RAGAS's context precision).
    0.0 when chunks came back and none is relevant; None when nothing came back.
    """
    if not flags:
        return None
    hits, total = 0, 0.0
    for i, rel in enumerate(flags, start=1):
        if rel:
            hits += 1
            total += hits / i
    return total / hits if hits else 0.0


def reciprocal_rank(flags: Sequence[bool]) -> float | None:
    """RR = 1 / rank of the first relevant chunk; 0.0 if none is relevant.

    None when the case has nothing to retrieve (the caller decides; an empty
    ranking for a case with facts is 0.0).
    """
    for i, rel in enumerate(flags, start=1):
        if rel:
            return 1.0 / i
    return 0.0
