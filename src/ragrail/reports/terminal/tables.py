"""The dry-run plan, the re-runs of failing questions, and the sweep table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragrail.text.guard import visible

if TYPE_CHECKING:  # a scorecard loads neither the sweep nor the call layer
    from ragrail.judge import JudgePlan
    from ragrail.sweep import SweepRow
    from ragrail.system.answerers import CallPlan
from ragrail.reports.terminal.layout import (
    terminal_width,
    wrap,
)
from ragrail.reports.terminal.scorecard import (
    _num,
    money,
)


def plan_text(
    plan: CallPlan | None, n_cases: int, skipped: int, judge: JudgePlan | None = None
) -> str:
    """The --dry-run report: what would be sent and what it would cost, re-runs
    (--rerun-failures) and judge calls included, with a bound on the total."""
    bounds: list[float | None] = []
    if plan is None:
        lines = ["Dry run: nothing is sent."]
    else:
        typical = plan.cost(plan.typical_output_tokens)
        worst = plan.cost(plan.max_output_tokens)
        bounds.append(worst)
        where = f" at {plan.base_url}" if plan.base_url else ""
        lines = [
            f"Dry run: nothing is sent. {visible(f'{plan.provider} {plan.model}{where}')}",
            f"  {'questions':<18}{n_cases} ({skipped} never reach the model: search returned "
            "nothing)",
            f"  {'calls':<18}{plan.calls} to make, {plan.cached} answered from the cache",
            f"  {'input':<18}~{plan.input_tokens:,} tokens (estimated from the prompts)",
            f"  {'output':<18}~{plan.typical_output_tokens} tokens per call assumed, "
            f"at most {plan.max_output_tokens}",
        ]
        if typical is None:
            lines.append(f"  {'cost':<18}{money(None)}")
        else:
            lines.append(f"  {'cost':<18}~{money(typical)} (at most {money(worst)})")
            half = plan.price.batch_factor if plan.price is not None else None
            if half is not None and worst is not None:  # provider batch price (--batch)
                lines.append(
                    f"  {'with --batch':<18}~{money(typical * half)} (at most {money(worst * half)})"
                )
        lines.extend(_rate_lines(plan))
        if plan.rerun_times:
            bound = plan.rerun_cost_bound()
            bounds.append(bound)
            cached = plan.rerun_cases * plan.rerun_times - plan.rerun_calls
            lines.append(
                f"  {'re-runs':<18}at most {plan.rerun_calls} calls ({plan.rerun_cases} "
                f"questions that may fail x {plan.rerun_times}), {cached} cached"
            )
            lines.append(f"  {'re-run cost':<18}{_at_most(bound)}")
    if judge is not None:
        bound = judge.cost_bound()
        bounds.append(bound)
        who = visible(f"{judge.provider} {judge.model}")
        lines.append(
            f"  {'judge':<18}{judge.calls} calls to {who} (at most {judge.max_calls} with retries)"
        )
        lines.append(f"  {'judge input':<18}~{judge.input_tokens:,} tokens (answers at max_tokens)")
        lines.append(f"  {'judge cost':<18}{_at_most(bound)}")
        if bound is not None and judge.price is not None:
            half = bound * judge.price.batch_factor
            lines.append(f"  {'with --batch':<18}{_at_most(half)}")
    if len(bounds) > 1:
        total = None if any(b is None for b in bounds) else sum(b or 0.0 for b in bounds)
        lines.append(f"  {'total cost':<18}{_at_most(total)}")
    return "\n".join(lines)


def _rate_lines(plan: CallPlan) -> list[str]:
    """The least time the rate limits (--rpm, --tpm) impose on the calls, if any."""
    seconds = plan.min_seconds()
    if seconds is None:
        return []
    limits = [
        f"{v:,g} {unit}/min" for v, unit in ((plan.rpm, "requests"), (plan.tpm, "tokens")) if v
    ]
    shown = f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"
    approx = "~" if plan.tpm else ""  # tokens are estimated (each reply at max_tokens)
    return [f"  {'rate limits':<18}{', '.join(limits)}: the calls take at least {approx}{shown}"]


def _at_most(bound: float | None) -> str:
    return money(None) if bound is None else f"at most {money(bound)}"


def reruns_text(
    reruns: dict[str, list[tuple[str | None, str | None, list[str]]]], width: int | None = None
) -> str:
    """--rerun-failures: each failing question's extra answers, to read by eye."""
    w = width or terminal_width()
    lines = ["Re-runs of failing questions (read them: is the failure real?):"]
    for case_id, samples in reruns.items():
        passed = sum(1 for _, err, problems in samples if err is None and not problems)
        lines.append(f"  {visible(case_id)}: {passed} of {len(samples)} re-runs pass")
        for i, (answer, error, problems) in enumerate(samples, start=1):
            verdict = (
                f"ERROR {error}"
                if error
                else ("pass" if not problems else "FAIL " + "; ".join(problems))
            )
            lines.append(f"    #{i} {visible(verdict)}")
            body = visible(" ".join((answer or "").split()))
            if body:
                lines.extend(wrap("       " + body, w - 1, subsequent="       "))
    return "\n".join(lines)


def sweep_table(rows: Sequence[SweepRow], thresholds: bool | None = None) -> str:
    """One row per configuration, best first; * marks the best value of each metric.

    With ``thresholds`` (by default: when the rows try more than one minimum score),
    each row also shows its minimum score, the abstain cases that pass and the
    answerable cases that lost retrieval to the threshold.
    """
    from ragrail.sweep import best_per_metric

    if thresholds is None:
        thresholds = len({r.min_score for r in rows}) > 1
    best = best_per_metric(rows)
    # hybrid+rerank is wider than the column's usual 10
    rw = max([10, *(len(visible(r.retriever)) + 1 for r in rows)])
    lines = [
        f"  {'chunking':<18}{'retriever':<{rw}}{'k':>2}"
        + (f"{'min':>6}" if thresholds else "")
        + f"{'hit':>7}{'recall':>8}{'answers':>9}{'prec':>7}{'MRR':>7}{'tokens':>8}"
        + (f"{'abstain':>9}{'lost':>6}" if thresholds else "")
    ]

    def cell(r: SweepRow, metric: str, as_pct: bool, width: int) -> str:
        value = getattr(r, metric)
        mark = (
            "*"
            if metric in best and value is not None and value == getattr(best[metric], metric)
            else " "
        )
        return f"{_num(value, as_pct) + mark:>{width}}"

    for r in rows:
        tokens = "-" if r.prompt_tokens is None else f"~{round(r.prompt_tokens)}"
        abstain = f"{r.abstain_passed}/{r.abstain_cases}" if r.abstain_cases else "-"
        lines.append(
            f"  {visible(r.chunking):<18}{visible(r.retriever):<{rw}}{r.top_k:>2}"
            + (f"{r.min_score:>6g}" if thresholds else "")
            + cell(r, "hit_rate", True, 7)
            + cell(r, "recall", True, 8)
            + cell(r, "answer_pass_rate", True, 9)
            + cell(r, "context_precision", False, 7)
            + cell(r, "mrr", False, 7)
            + f"{tokens:>8}"
            + (f"{abstain:>9}{r.answerable_lost:>6}" if thresholds else "")
        )
    lines.append("  (* best value of each metric; rows best first by recall, hit rate, answers)")
    if thresholds:
        lines.append(
            "  (min: minimum score, on the retriever's own scale; abstain: abstain cases "
            "that pass;\n   lost: answerable cases retrieving fewer facts than with no minimum)"
        )
    return "\n".join(lines)
