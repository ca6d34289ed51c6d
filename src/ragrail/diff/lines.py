"""The pieces a diff is made of: a change line, the p-values and rounding it prints, and
what a run is compared with (a whole saved run or a compact baseline)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias

from ragrail.records.results import CaseResult, RunResult
from ragrail.stats import McNemar, mcnemar_exact
from ragrail.store.baseline.records import rounded

if TYPE_CHECKING:
    from ragrail.store.baseline import Baseline, BaselineCase

# noise: a repeated question's pass rate (or a check's) moved within noise; shown, never
# a regression (ragrail.diff.noise)
# stage: a retrieval stage's recall moved (ragrail.diff.stages); shown, never a regression
Kind = Literal["fixed", "WORSE", "ERROR", "lower", "noise", "stage"]


# What a run is compared with: a whole saved run, or a compact baseline (ragrail.store.baseline);
# of a baseline's cases compare reads only the verdicts both kinds have.
BaselineRun: TypeAlias = "RunResult | Baseline"


BaselineCaseLike: TypeAlias = "CaseResult | BaselineCase"


@dataclass(frozen=True)
class Change:
    case_id: str
    kind: Kind
    aspect: Literal["retrieval", "answer", "error", "score"]
    detail: str

    def line(self) -> str:
        return f"{self.kind}:  {self.case_id}: {self.detail}"


@functools.lru_cache(maxsize=1 << 12)  # a diff of 100,000 questions prints few distinct rates
def pct(value: float | None) -> str:
    """A rate to the whole percent (``reports.judged.pct_tenths`` keeps one decimal)."""
    return "-" if value is None else f"{round(value * 100)}%"


SIGNIFICANCE = 0.05


def fisher_one_sided(better_pass: int, better_runs: int, worse_pass: int, worse_runs: int) -> float:
    """p-value of a one-sided Fisher exact test that the first pass rate exceeds the second.

    Table [[better_pass, better_fail], [worse_pass, worse_fail]], alternative "greater".
    """
    from scipy.stats import fisher_exact

    table = [[better_pass, better_runs - better_pass], [worse_pass, worse_runs - worse_pass]]
    return float(fisher_exact(table, alternative="greater").pvalue)


def rounded_score(value: float) -> float:
    try:
        return rounded(value)
    except ValueError:  # NaN or infinity: never in a loaded run, compared as it is
        return value


def p_text(p: float) -> str:
    """A p-value as it is printed: two decimals, three below 0.01, and in scientific
    notation below 0.001 (``3.6e-89``), never ``0.00``."""
    if p >= 0.01:
        return f"{p:.2f}"
    if p >= 0.001:
        return f"{p:.3f}"
    return f"{p:.1e}".replace("e-0", "e-")


def by_id(run: BaselineRun) -> dict[str, BaselineCaseLike]:
    """Cases by id, the first of any duplicate winning (as ``RunResult.case`` does)."""
    out: dict[str, BaselineCaseLike] = {}
    for c in run.cases:
        out.setdefault(c.id, c)
    return out


def config_changes(before: BaselineRun, after: RunResult) -> list[str]:
    """Human-readable list of settings that differ, e.g. ``top_k 3 -> 1``: the run's, each
    setting a user's system reported (``-`` where one run has none), and whether answers
    had to cite."""
    a, b = before.config, after.config
    out = []
    for name in ("chunking", "top_k", "min_score", "retriever", "answerer", "model"):
        old, new = getattr(a, name), getattr(b, name)
        if old != new:
            out.append(f"{name} {old} -> {new}")
    for name in sorted(a.settings.keys() | b.settings.keys()):
        old, new = a.settings.get(name, "-"), b.settings.get(name, "-")
        line = f"{name} {old} -> {new}"
        if old != new and line not in out:  # its own top_k may be the run's
            out.append(line)
    need = {True: "required", False: "not required"}
    old_need, new_need = a.citations == "required", b.citations == "required"
    if old_need != new_need:
        out.append(f"citations {need[old_need]} -> {need[new_need]}")
    return out


def answer_flip_test(
    run: RunResult, baseline: BaselineRun, base: dict[str, BaselineCaseLike] | None = None
) -> McNemar:
    """McNemar's exact test on the questions answered in both runs whose verdict flipped
    (a question passes when all its answers pass). ``base``: the baseline's cases by id."""
    base = by_id(baseline) if base is None else base
    worse = better = 0
    for new in run.cases:
        old = base.get(new.id)
        if old is None or not old.answer_runs or not new.answer_runs:
            continue
        if old.answer_pass and not new.answer_pass:
            worse += 1
        elif new.answer_pass and not old.answer_pass:
            better += 1
    return mcnemar_exact(worse, better)
