"""Retrieval scores by labelled fact.

A fact counts as retrieved when a retrieved chunk *from one of the case's
source articles* contains it, as :mod:`ragrail.scoring.matching` finds facts
(normalised text, token boundaries, alternatives, regexes). Matching by fact
rather than chunk id keeps the labels valid when the chunking changes.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragrail.results import RetrievedChunk
from ragrail.scoring.matching import Fact, as_fact, find, normalise


def facts_retrieved(
    facts: Sequence[str], sources: Sequence[str], retrieved: Sequence[RetrievedChunk]
) -> list[Fact]:
    """The facts (in label order) found in a retrieved chunk of a source article."""
    texts = [normalise(c.text) for c in retrieved if c.source in sources]
    return [as_fact(f) for f in facts if any(find(f, t) is not None for t in texts)]


def hit(found: Sequence[str], facts: Sequence[str]) -> bool | None:
    """hit = 1 if at least one expected fact was retrieved, else 0; None when there are no facts."""
    if not facts:
        return None
    return bool(found)


def recall(found: Sequence[str], facts: Sequence[str]) -> float | None:
    """recall = |facts retrieved| / |facts|; None (undefined) when there are no facts."""
    if not facts:
        return None
    return len(found) / len(facts)
