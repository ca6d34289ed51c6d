"""Pairwise comparison: which of two runs answers better, asked in both orders so a
judge's preference for a position cannot decide."""

from __future__ import annotations

from dataclasses import dataclass, field
from string import Template
from typing import TYPE_CHECKING

from ragrail.judge.replies import PairReply, checker, parse_reply
from ragrail.judge.turns import question_in_context, run_histories
from ragrail.records.results import CaseResult, RunResult

if TYPE_CHECKING:
    from ragrail.judge.core import Judge


@dataclass
class PairwiseResult:
    wins: int = 0  # run B better than run A, in both orders
    losses: int = 0  # run A better, in both orders
    ties: int = 0  # both orders say tie
    swap_disagreements: int = 0  # the verdict changed when the answers swapped places
    errors: int = 0  # questions not judged: errored in either run, or the judge failed
    n: int = 0  # questions in both runs
    per_case: list[tuple[str, str]] = field(default_factory=list)
    errored: list[tuple[str, str]] = field(default_factory=list)  # case id, reason
    unmatched: list[str] = field(default_factory=list)  # in one run only

    @property
    def swap_rate(self) -> float | None:
        judged = self.n - self.errors
        return self.swap_disagreements / judged if judged else None

    @property
    def sign_test_p(self) -> float:
        """Two-sided exact sign test on wins vs losses (ties and swap disagreements left out)."""
        from ragrail.stats import mcnemar_exact

        return mcnemar_exact(self.wins, self.losses).p_value


def pairwise(judge: Judge, run_a: RunResult, run_b: RunResult) -> PairwiseResult:
    """Ask, per case, which answer is better in both orders; only verdicts that agree
    across the swap count, so a judge's preference for a position cannot decide."""
    b_by_id = {c.id: c for c in run_b.cases}
    a_ids = {c.id for c in run_a.cases}
    out = PairwiseResult()
    out.unmatched = [c.id for c in run_a.cases if c.id not in b_by_id]
    out.unmatched += [c.id for c in run_b.cases if c.id not in a_ids]
    cases = []
    for a in run_a.cases:
        b = b_by_id.get(a.id)
        if b is None:
            continue
        why = _not_comparable(a, "A") or _not_comparable(b, "B")
        if why is not None:
            out.errored.append((a.id, why))
            out.per_case.append((a.id, f"ERROR {why}"))
        else:
            cases.append((a, b))
    prompts = []
    # a turn after the first: its earlier questions (each run answered them its own way)
    earlier = run_histories(run_a.cases, answers=False)
    for a, b in cases:
        ctx = {c.id: c for c in [*a.trace.retrieved, *b.trace.retrieved]}
        context = "\n\n".join(f"[{c.id}] {c.text}" for c in ctx.values()) or "(none)"
        for shown_1, shown_2 in ((a, b), (b, a)):
            prompts.append(
                (
                    Template(judge.prompts.pairwise).safe_substitute(
                        question=question_in_context(a.question, earlier.get(a.id, ())),
                        context=context,
                        answer_1=shown_1.trace.answer or "",
                        answer_2=shown_2.trace.answer or "",
                    ),
                    0,
                )
            )
    results = judge.call(prompts, checker(PairReply))
    out.n = len(cases) + len(out.errored)
    out.errors = len(out.errored)
    for i, (a, _) in enumerate(cases):
        ab, ba = results[2 * i], results[2 * i + 1]
        if ab.error or ba.error:
            why = f"judge failed: {ab.error or ba.error}"
            out.errors += 1
            out.errored.append((a.id, why))
            out.per_case.append((a.id, f"ERROR {why}"))
            continue
        v1 = parse_reply(ab.text, PairReply).better  # answer 1 = run A
        v2 = parse_reply(ba.text, PairReply).better  # answer 1 = run B
        first = {"1": "A", "2": "B", "tie": "tie"}[v1]
        second = {"1": "B", "2": "A", "tie": "tie"}[v2]
        if first != second:
            out.swap_disagreements += 1
            out.per_case.append((a.id, f"changed with the order ({first} / {second})"))
        elif first == "B":
            out.wins += 1
            out.per_case.append((a.id, "B better"))
        elif first == "A":
            out.losses += 1
            out.per_case.append((a.id, "A better"))
        else:
            out.ties += 1
            out.per_case.append((a.id, "tie"))
    order = {c.id: i for i, c in enumerate(run_a.cases)}
    out.per_case.sort(key=lambda item: order[item[0]])
    return out


def _not_comparable(case: CaseResult, run: str) -> str | None:
    """Why a question cannot be judged pairwise from this run: its call failed, or no answer."""
    errors = [s.error for s in case.trace.all_samples() if s.error is not None]
    if errors:
        return f"run {run} errored: {errors[0]}"
    if case.trace.answer is None:
        return f"run {run} has no answer"
    return None
