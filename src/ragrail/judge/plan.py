"""The judge's part of a --dry-run: how many calls, how many tokens at most, what cost."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from string import Template
from typing import TYPE_CHECKING, Any

from ragrail.judge.config import JudgeConfig, Prompts, criteria_text

if TYPE_CHECKING:
    from ragrail.calls.prices import Price


@dataclass(frozen=True)
class JudgePlan:
    """The most a judge would send, for --dry-run (the answers are not known yet)."""

    provider: str
    model: str
    calls: int  # first asks
    max_calls: int  # with every retry and re-ask of a malformed reply
    input_tokens: int  # estimated, first asks
    max_input_tokens: int  # estimated, with every re-ask (each carries the bad reply)
    max_output_tokens: int
    price: Price | None

    def cost_bound(self) -> float | None:
        from ragrail.calls.prices import cost_usd

        return cost_usd(self.price, self.max_input_tokens, self.max_calls * self.max_output_tokens)


def plan_items(cases: Sequence[Any], traces: Sequence[Any]) -> list[tuple[str, str, bool]]:
    """(question, context, claimable) per golden case and its prepared trace: a question
    search found nothing for gets the no-context answer, which makes no claim."""
    return [
        (
            case.question,
            "\n\n".join(f"[{c.id}] {c.text}" for c in trace.retrieved) or "(none)",
            bool(case.sources) and trace.prompt is not None,
        )
        for case, trace in zip(cases, traces, strict=True)
    ]


def plan_judge(
    cfg: JudgeConfig,
    prompts: Prompts,
    items: Sequence[tuple[str, str, bool]],
    answer_tokens: int,
    prices: dict[str, Any],
) -> JudgePlan:
    """Count the judge calls a run would make and bound their tokens, sending nothing.

    items: (question, retrieved context, whether the answer can have claims to
    check). Each prompt is estimated with an answer of ``answer_tokens`` (the
    answerer's max_tokens); each re-ask adds the bad reply (the judge's
    max_tokens) and the correction.
    """
    from ragrail.system.prompt import estimate_tokens

    filler = "x" * (4 * answer_tokens)
    sizes = []
    for question, context, claimable in items:
        if cfg.faithfulness and claimable:
            text = Template(prompts.claims).safe_substitute(
                question=question, context=context, answer=filler
            )
            sizes.extend([estimate_tokens(text)] * cfg.repeats)
        if cfg.criteria:
            text = Template(prompts.rubric).safe_substitute(
                question=question, answer=filler, criteria=criteria_text(cfg.criteria)
            )
            sizes.extend([estimate_tokens(text)] * cfg.repeats)
    return _plan(cfg, sizes, prices)


def plan_judge_run(
    cfg: JudgeConfig,
    prompts: Prompts,
    run: Any,
    prices: dict[str, Any],
    abstain_phrases: Sequence[str] | None = None,
) -> JudgePlan:
    """The judge calls on a run whose answers are known (an outputs file, imported
    results): the very prompts the judge would send, estimated, sending nothing."""
    from ragrail.judge.core import judge_jobs
    from ragrail.system.prompt import estimate_tokens

    jobs = judge_jobs(cfg, prompts, run, abstain_phrases)
    sizes = [estimate_tokens(p) for p, _ in jobs.claim_prompts + jobs.rubric_prompts]
    return _plan(cfg, sizes, prices)


def _plan(cfg: JudgeConfig, sizes: list[int], prices: dict[str, Any]) -> JudgePlan:
    """First asks of ``sizes`` tokens each, and the most their retries and re-asks add."""
    from ragrail.calls.layer import correction
    from ragrail.system.prompt import estimate_tokens

    reask = cfg.max_tokens + estimate_tokens(correction("x" * 200))
    attempts = 1 + cfg.max_retries
    return JudgePlan(
        provider=cfg.provider or "",
        model=cfg.model or "",
        calls=len(sizes),
        max_calls=len(sizes) * attempts,
        input_tokens=sum(sizes),
        max_input_tokens=sum(n * attempts + reask * cfg.max_retries for n in sizes),
        max_output_tokens=cfg.max_tokens,
        price=prices.get(cfg.model or ""),
    )
