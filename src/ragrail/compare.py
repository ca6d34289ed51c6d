"""Compare a run with a baseline, question by question.

A regression (a ``WORSE`` line) is decided per question, never by totals:
its retrieval recall dropped, or its answer passed in the baseline and fails
now. ``fixed`` is the reverse. Totals are reported beside, for reading only.
Answers are compared only when both runs used the same answerer and model,
since a stand-in's answers say nothing about a real model's and vice versa.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ragrail.results import CaseResult, RunResult
from ragrail.stats import McNemar, mcnemar_exact

Kind = Literal["fixed", "WORSE"]


@dataclass(frozen=True)
class Change:
    case_id: str
    kind: Kind
    aspect: Literal["retrieval", "answer"]
    detail: str

    def line(self) -> str:
        return f"{self.kind}:  {self.case_id}: {self.detail}"


@dataclass
class Diff:
    baseline: RunResult
    run: RunResult
    answers_compared: bool
    answers_note: str | None
    config_changes: list[str]
    changes: list[Change] = field(default_factory=list)
    new_cases: list[str] = field(default_factory=list)
    removed_cases: list[str] = field(default_factory=list)
    errored_cases: list[str] = field(default_factory=list)
    answer_flips: McNemar | None = None  # paired test on per-question pass/fail flips

    @property
    def worse(self) -> list[Change]:
        return [c for c in self.changes if c.kind == "WORSE"]

    @property
    def fixed(self) -> list[Change]:
        return [c for c in self.changes if c.kind == "fixed"]

    @property
    def regressed(self) -> bool:
        return bool(self.worse)


def pct(value: float | None) -> str:
    return "-" if value is None else f"{round(value * 100)}%"


def config_changes(before: RunResult, after: RunResult) -> list[str]:
    """Human-readable list of settings that differ, e.g. ``top_k 3 -> 1``."""
    a, b = before.config, after.config
    out = []
    for name in ("chunking", "top_k", "min_score", "retriever", "answerer", "model"):
        old, new = getattr(a, name), getattr(b, name)
        if old != new:
            out.append(f"{name} {old} -> {new}")
    return out


def _retrieval_change(old: CaseResult, new: CaseResult) -> Change | None:
    if old.retrieval_recall is None or new.retrieval_recall is None:
        return None
    if new.retrieval_recall == old.retrieval_recall:
        return None
    kind: Kind = "WORSE" if new.retrieval_recall < old.retrieval_recall else "fixed"
    detail = f"retrieval {pct(old.retrieval_recall)} -> {pct(new.retrieval_recall)}"
    return Change(new.id, kind, "retrieval", detail)


SIGNIFICANCE = 0.05


def fisher_one_sided(better_pass: int, better_runs: int, worse_pass: int, worse_runs: int) -> float:
    """p-value of a one-sided Fisher exact test that the first pass rate exceeds the second.

    Table [[better_pass, better_fail], [worse_pass, worse_fail]], alternative "greater".
    """
    from scipy.stats import fisher_exact

    table = [[better_pass, better_runs - better_pass], [worse_pass, worse_runs - worse_pass]]
    return float(fisher_exact(table, alternative="greater").pvalue)


def _answer_change(old: CaseResult, new: CaseResult) -> Change | None:
    """Single answers: pass -> fail is WORSE, fail -> pass is fixed.

    Repeated answers (either side sampled more than once) are samples, so a
    drop in pass rate is WORSE only when it is unlikely to be noise: a
    one-sided Fisher exact test on the pass/fail counts gives p < 0.05, or the
    case always passed before and never passes now. ``fixed`` mirrors it.
    """
    if not old.answer_runs or not new.answer_runs:
        return None
    a, n = (old.answer_passes, old.answer_runs), (new.answer_passes, new.answer_runs)
    old_rate, new_rate = a[0] / a[1], n[0] / n[1]
    if old_rate == new_rate:
        return None
    if a[1] == 1 and n[1] == 1:
        if new.answer_pass:
            return Change(new.id, "fixed", "answer", "answer now passes")
        return Change(new.id, "WORSE", "answer", f"answer now fails, {'; '.join(new.problems)}")
    rates = f"answer pass rate {a[0]}/{a[1]} -> {n[0]}/{n[1]}"
    if new_rate < old_rate:
        p = fisher_one_sided(*a, *n)
        if p < SIGNIFICANCE or (a[0] == a[1] and n[0] == 0):
            return Change(
                new.id, "WORSE", "answer", f"{rates} (p={p:.3f}), {'; '.join(new.problems)}"
            )
        return None
    p = fisher_one_sided(*n, *a)
    if p < SIGNIFICANCE or (a[0] == 0 and n[0] == n[1]):
        return Change(new.id, "fixed", "answer", f"{rates} (p={p:.3f})")
    return None


def compare(run: RunResult, baseline: RunResult) -> Diff:
    same_answerer = (run.config.answerer, run.config.model) == (
        baseline.config.answerer,
        baseline.config.model,
    )
    note = None
    if not same_answerer:
        note = (
            f"answers not compared: the baseline's answers come from "
            f"{_who(baseline)}, this run's from {_who(run)}; retrieval is still compared"
        )
    diff = Diff(
        baseline=baseline,
        run=run,
        answers_compared=same_answerer,
        answers_note=note,
        config_changes=config_changes(baseline, run),
    )
    base_ids = {c.id for c in baseline.cases}
    run_ids = {c.id for c in run.cases}
    diff.new_cases = [c.id for c in run.cases if c.id not in base_ids]
    diff.removed_cases = [c.id for c in baseline.cases if c.id not in run_ids]
    fixed: list[Change] = []
    worse: list[Change] = []
    for new in run.cases:
        old = baseline.case(new.id)
        if old is None:
            continue
        if new.errored:
            diff.errored_cases.append(new.id)
        changes = [_retrieval_change(old, new)]
        if same_answerer:
            changes.append(_answer_change(old, new))
        for change in changes:
            if change is not None:
                (fixed if change.kind == "fixed" else worse).append(change)
    if same_answerer:
        diff.answer_flips = answer_flip_test(run, baseline)
    # fixed lines first, then WORSE, each in golden-set order: the lines a
    # reviewer must act on end up last, next to the exit status.
    diff.changes = fixed + worse
    return diff


def answer_flip_test(run: RunResult, baseline: RunResult) -> McNemar:
    """McNemar's exact test on the questions answered in both runs whose verdict flipped
    (a question passes when all its answers pass)."""
    worse = better = 0
    for new in run.cases:
        old = baseline.case(new.id)
        if old is None or not old.answer_runs or not new.answer_runs:
            continue
        if old.answer_pass and not new.answer_pass:
            worse += 1
        elif new.answer_pass and not old.answer_pass:
            better += 1
    return mcnemar_exact(worse, better)


def _who(run: RunResult) -> str:
    c = run.config
    return f"{c.answerer} {c.model}" if c.model else c.answerer
