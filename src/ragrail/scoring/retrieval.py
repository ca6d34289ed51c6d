"""Retrieval scores by labelled fact.

A fact counts as retrieved when a retrieved chunk *from one of the case's
source articles* contains it, as :mod:`ragrail.text.matching` finds facts
(normalised text, token boundaries, alternatives, regexes). Matching by fact
rather than chunk id keeps the labels valid when the chunking changes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ragrail.records.results import RetrievedChunk
from ragrail.text.matching import Fact, as_fact, find, normalise


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


def match_facts(
    facts: Sequence[str],
    sources: Sequence[str],
    retrieved: Sequence[RetrievedChunk],
    normalised: Callable[[str], str] = normalise,
) -> tuple[list[Fact], list[bool]]:
    """(:func:`facts_retrieved`, ``context.relevant_flags``) in one pass over the chunks,
    each fact searched in each chunk at most once; ``normalised`` is how a chunk's text
    is normalised (a run's memo of :func:`~ragrail.text.matching.normalise`)."""
    needles = [as_fact(f) for f in facts]
    found = [False] * len(needles)
    flags = []
    for chunk in retrieved:
        in_sources = chunk.source in sources
        if sources and not in_sources:
            flags.append(False)  # relevance needs a source article, when the case names any
            continue
        text = normalised(chunk.text)
        relevant = False
        for j, fact in enumerate(needles):
            # search only where the answer is still open: the chunk's flag, or (in a
            # source article) whether the fact was retrieved
            if (not relevant or (in_sources and not found[j])) and find(fact, text) is not None:
                relevant = True
                found[j] = found[j] or in_sources
        flags.append(relevant)
    return [fact for fact, hit in zip(needles, found, strict=True) if hit], flags
