"""Retrieval scored per stage of a pipeline (retrieve -> rerank -> final), and which stage
lost a fact.

A system may say what each step of its retrieval kept (``Trace.stages``: a name and its
contexts in rank order). Each stage is scored exactly as the final contexts are
(:mod:`ragrail.scoring.retrieval`, :mod:`ragrail.scoring.context`), over its own
contexts:

    hit     = 1 if some fact is in a context of a source article, else 0
    recall  = |facts found in the stage's contexts| / |facts|
    RR      = 1 / rank of the stage's first relevant context (0 when none is)

so a stage's figures can be read beside the final ones: recall that falls from one
stage to the next is what that step dropped. Totals per stage average over the
questions with facts that have the stage (hit rate: Wilson's interval; recall and MRR:
as ``Totals.stats``'s means).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ragrail.records.results import CaseResult, StageScores, Stat
from ragrail.records.trace import RetrievedChunk, Stage
from ragrail.scoring import context as ctx
from ragrail.scoring import retrieval as rs
from ragrail.text.matching import as_fact, find, normalise


def score_stages(
    facts: Sequence[str],
    sources: Sequence[str],
    stages: Sequence[Stage],
    normalised: Callable[[str], str] = normalise,
) -> list[StageScores]:
    """Each stage's hit, recall and reciprocal rank, in the stages' order."""
    out = []
    for stage in stages:
        found, flags = rs.match_facts(facts, sources, stage.contexts, normalised)
        out.append(
            StageScores(
                name=stage.name,
                n_contexts=len(stage.contexts),
                facts_retrieved=found,
                hit=rs.hit(found, facts),
                recall=rs.recall(found, facts),
                reciprocal_rank=ctx.reciprocal_rank(flags) if facts else None,
            )
        )
    return out


def stage_totals(cases: Sequence[CaseResult]) -> dict[str, dict[str, Stat]]:
    """Per stage name (in the order first seen): ``hit_rate``, ``recall`` and ``mrr``, each
    with its n and 95% interval, over the questions with facts that have the stage."""
    from ragrail.stats import mean_intervals, wilson

    columns: dict[str, tuple[list[float], list[float], list[float]]] = {}
    for case in cases:
        for s in case.stages:
            if s.recall is None:
                continue
            hits, recalls, rrs = columns.setdefault(s.name, ([], [], []))
            hits.append(1.0 if s.hit else 0.0)
            recalls.append(s.recall)
            rrs.append(s.reciprocal_rank or 0.0)
    out: dict[str, dict[str, Stat]] = {}
    for name, (hits, recalls, rrs) in columns.items():
        intervals = mean_intervals([recalls, rrs])
        for i, values in enumerate((recalls, rrs)):
            if all(v in (0.0, 1.0) for v in values):  # a rate: Wilson's, as Totals.stats
                intervals[i] = wilson(sum(values), len(values))
        stats = {}
        for key, values, interval in (
            ("hit_rate", hits, wilson(sum(hits), len(hits))),
            ("recall", recalls, intervals[0]),
            ("mrr", rrs, intervals[1]),
        ):
            stats[key] = Stat(
                value=sum(values) / len(values),
                low=interval.low if interval else None,
                high=interval.high if interval else None,
                n=len(values),
            )
        out[name] = stats
    return out


def _rank_of(
    fact: str,
    sources: Sequence[str],
    contexts: Sequence[RetrievedChunk],
    normalised: Callable[[str], str],
) -> int | None:
    """The rank of the first context of a source article holding ``fact``, or None."""
    needle = as_fact(fact)
    for position, c in enumerate(contexts, start=1):
        if c.source in sources and find(needle, normalised(c.text)) is not None:
            return c.rank or position
    return None


def where_lost(
    fact: str,
    sources: Sequence[str],
    stages: Sequence[Stage],
    normalised: Callable[[str], str] = normalise,
) -> str | None:
    """Which stage lost a fact the final contexts lack: ``retrieved at rank 17 by bm25,
    dropped by rerank``. The stage that dropped it is the one after the last stage that
    held it (stages that ran side by side, as a hybrid's bm25 and dense, each say their
    rank); when the last stage held it, it was dropped after every stage. None when no
    stage held it (retrieval never found it: the usual diagnosis applies)."""
    ranks = [_rank_of(fact, sources, s.contexts, normalised) for s in stages]
    held = [i for i, r in enumerate(ranks) if r is not None]
    if not held:
        return None
    last = held[-1]
    said = [f"rank {ranks[i]} by {stages[i].name}" for i in held]
    where = " and ".join([", ".join(said[:-1]), said[-1]] if len(said) > 1 else said)
    if last + 1 < len(stages):
        return f"retrieved at {where}, dropped by {stages[last + 1].name}"
    return f"retrieved at {where}, not in the contexts returned"
