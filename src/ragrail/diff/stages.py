"""Per-stage changes of a question's retrieval (``CaseResult.stages``), baseline against now.

Each stage both runs have (by name) is compared by its recall and the facts it found:
``stage:  pro-price: bm25 recall 100% -> 0% (lost "$12")``. These lines are shown beside
the verdict and never decide it. The final contexts are what the answer got, and their
recall already makes a ``WORSE`` line when it drops; a stage that dropped while the final
contexts held is a pipeline that still works (a rerank that no longer needs the candidate
the first stage lost), so it warns a reader without failing a build, and a stage that
dropped along with the final contexts explains the ``WORSE`` line beside it.

The compact baseline (``ragrail.store.baseline``) keeps each question's stages, as a whole
saved run does.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragrail.diff.lines import BaselineCaseLike, Change, pct, rounded_score
from ragrail.records.results import CaseResult, StageScores


def stage_changes(old: BaselineCaseLike, new: CaseResult) -> list[Change]:
    """A ``stage`` line for each stage of ``new`` whose recall moved since ``old``, or
    that lost or found a fact; none when either side has no stages (or the call errored)."""
    before: Sequence[StageScores] = getattr(old, "stages", None) or ()
    if not before or not new.stages or new.errored:
        return []
    by_name = {s.name: s for s in before}
    out = []
    for now in new.stages:
        was = by_name.get(now.name)
        if was is None or was.recall is None or now.recall is None:
            continue
        had = {str(f) for f in was.facts_retrieved}
        has = {str(f) for f in now.facts_retrieved}
        if rounded_score(was.recall) == rounded_score(now.recall) and had == has:
            continue
        parts = []
        lost = [str(f) for f in was.facts_retrieved if str(f) not in has]
        found = [str(f) for f in now.facts_retrieved if str(f) not in had]
        if lost:
            parts.append("lost " + ", ".join(f'"{f}"' for f in lost))
        if found:
            parts.append("found " + ", ".join(f'"{f}"' for f in found))
        detail = f"{now.name} recall {pct(was.recall)} -> {pct(now.recall)}"
        out.append(Change(new.id, "stage", "retrieval", f"{detail} ({'; '.join(parts)})"))
    return out


def with_stage_changes(
    changes: list[Change], run_cases: Sequence[CaseResult], base: dict[str, BaselineCaseLike]
) -> list[Change]:
    """``changes`` with every question's stage lines placed before the ``WORSE`` and
    ``ERROR`` lines (what a reviewer must act on stays last), in golden-set order."""
    stage = [
        line
        for new in run_cases
        if new.stages and (old := base.get(new.id)) is not None
        for line in stage_changes(old, new)
    ]
    if not stage:
        return changes
    cut = next((i for i, c in enumerate(changes) if c.kind in ("WORSE", "ERROR")), len(changes))
    return changes[:cut] + stage + changes[cut:]
