"""The judge: one model behind the shared call layer (concurrent, cached, costed,
retried), judging a run in place."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragrail.errors import InputError
from ragrail.judge.claims import apply_claims, claims_prompt
from ragrail.judge.config import CriterionConfig, JudgeConfig, Prompts, judge_key, model_family
from ragrail.judge.replies import ClaimsReply, checker
from ragrail.judge.rubric import apply_gates, apply_rubric, rubric_checker, rubric_prompt
from ragrail.judge.turns import Turn
from ragrail.records.results import CaseResult, JudgeResult, RunResult, Usage

if TYPE_CHECKING:
    from collections.abc import Callable

    from ragrail.calls.cache import ResponseCache
    from ragrail.calls.layer import CallLayer, CallResult, UsageTotals
    from ragrail.calls.limiter import Limiter
    from ragrail.calls.prices import Price
    from ragrail.calls.providers import Provider

    ReplyCheck = Callable[[str], str | None]  # a reply's problem, or None when it will do
    # a backend's calls made elsewhere: (prompts, check) -> (results in order, their usage)
    RemoteCall = Callable[[list[tuple[str, int]], ReplyCheck], tuple[list[CallResult], UsageTotals]]


@dataclass
class Judge:
    config: JudgeConfig
    provider: Provider
    prompts: Prompts
    cache: ResponseCache | None = None
    price: Price | None = None
    totals: UsageTotals = field(init=False)  # over every call this judge made
    abstain_phrases: tuple[str, ...] | None = None  # [scoring] abstain_phrases; None: defaults
    # over all this judge's calls (one held by the cluster's actor on Ray); None: from config
    limiter: Limiter | None = None
    # Set by a backend that makes the calls elsewhere (ragrail.backends.ray):
    # ``remote_call(prompts, validate) -> (results in order, their UsageTotals)``.
    remote_call: RemoteCall | None = None

    def __post_init__(self) -> None:
        from ragrail.calls.layer import UsageTotals
        from ragrail.calls.limiter import RateLimiter

        self.totals = UsageTotals()
        if self.limiter is None:
            self.limiter = RateLimiter.of(self.config.rpm, self.config.tpm)

    @property
    def usage(self) -> Usage:
        return self.totals.summary()

    @property
    def label(self) -> str:
        return f"{self.provider.name} {self.provider.model}"

    def key(self, criterion: CriterionConfig | None) -> str:
        prompt = self.prompts.rubric if criterion else self.prompts.claims
        return judge_key(self.provider.name, self.provider.model, prompt, criterion)

    def _layer(self, validate: ReplyCheck) -> CallLayer:
        from ragrail.calls.layer import CallLayer, CallSettings

        c = self.config
        settings = CallSettings(
            concurrency=c.concurrency,
            timeout=c.timeout,
            max_retries=c.max_retries,
            max_tokens=c.max_tokens,
            temperature=c.temperature,
            rpm=c.rpm,
            tpm=c.tpm,
            batch=c.batch,
        )
        return CallLayer(
            provider=self.provider,
            settings=settings,
            cache=self.cache,
            price=self.price,
            validate=validate,
            json_replies=True,
            limiter=self.limiter,  # one bucket over all of this judge's batches
        )

    def call(self, prompts: list[tuple[str, int]], validate: ReplyCheck) -> list[CallResult]:
        """Make the calls ``(prompt, repeat)``, adding their usage to this judge's totals."""
        from ragrail.calls.layer import CallRequest

        if not prompts:
            return []
        if self.remote_call is not None:
            results, usage = self.remote_call(prompts, validate)
            self.totals.absorb(usage)
            return results
        layer = self._layer(validate)
        results = layer.run([CallRequest(prompt=p, repeat=r) for p, r in prompts])
        self.totals.absorb(layer.usage)
        return results

    def claims_prompt(self, case: CaseResult, history: Sequence[Turn] = ()) -> str:
        return claims_prompt(self.prompts.claims, case, history)

    def rubric_prompt(
        self, case: CaseResult, answer: str | None = None, history: Sequence[Turn] = ()
    ) -> str:
        return rubric_prompt(self.prompts.rubric, case, self.config.criteria, answer, history)

    def judge_run(self, run: RunResult) -> None:
        """Judge every answered case of a run in place (claims and rubric), repeats included;
        a turn of a conversation with the turns before it (``judge.turns``)."""
        cfg = self.config
        jobs = judge_jobs(cfg, self.prompts, run, self.abstain_phrases)
        for c in jobs.cases:
            c.judge = JudgeResult()
        claim_results = self.call(jobs.claim_prompts, checker(ClaimsReply))
        rubric_results = self.call(jobs.rubric_prompts, rubric_checker(cfg.criteria))

        n = cfg.repeats
        for i, case in enumerate(jobs.claim_cases):
            apply_claims(case, claim_results[i * n : (i + 1) * n])
        for i, case in enumerate(jobs.rubric_cases):
            apply_rubric(case, cfg.criteria, rubric_results[i * n : (i + 1) * n])


@dataclass
class JudgeJobs:
    """What a judge asks of a run: the cases it judges, and the prompts (with their repeat
    index) of the claims and rubric calls, ``repeats`` per case in case order."""

    cases: list[CaseResult]
    claim_cases: list[CaseResult]
    claim_prompts: list[tuple[str, int]]
    rubric_cases: list[CaseResult]
    rubric_prompts: list[tuple[str, int]]


def judge_jobs(
    cfg: JudgeConfig,
    prompts: Prompts,
    run: RunResult,
    abstain_phrases: Sequence[str] | None = None,
) -> JudgeJobs:
    """The calls a judge makes on ``run``: every answered case gets the rubric (when there
    is one), and its claims checked unless it abstains or has nothing to check against.
    Sends nothing (the dry run counts these)."""
    from ragrail.judge.turns import run_histories
    from ragrail.scoring.answers import DEFAULT_ABSTAIN_PHRASES, abstains

    phrases = tuple(abstain_phrases or DEFAULT_ABSTAIN_PHRASES)
    cases = [c for c in run.cases if not c.errored and c.trace.answer is not None]
    claim_cases = [
        c
        for c in cases
        if cfg.faithfulness and c.sources and not abstains(c.trace.answer or "", phrases)
    ]
    said = run_histories(run.cases)
    claim_prompts = [
        (claims_prompt(prompts.claims, c, said.get(c.id, ())), r)
        for c in claim_cases
        for r in range(cfg.repeats)
    ]
    rubric_cases = cases if cfg.criteria else []
    rubric_prompts = [
        (rubric_prompt(prompts.rubric, c, cfg.criteria, None, said.get(c.id, ())), r)
        for c in rubric_cases
        for r in range(cfg.repeats)
    ]
    return JudgeJobs(cases, claim_cases, claim_prompts, rubric_cases, rubric_prompts)


def build_judge(
    cfg: JudgeConfig, cache_path: Path | None, prices: dict[str, Any], root: Path | None
) -> Judge:
    from ragrail.calls.cache import ResponseCache
    from ragrail.calls.providers import JUDGE_URL, make_provider

    if cfg.provider is None:
        raise InputError(
            "no judge configured: pass --judge claude|openai or add [judge] provider = ..."
        )
    provider = make_provider(cfg.provider, cfg.model, cfg.base_url, cfg.timeout, JUDGE_URL)
    prompts = Prompts.load(root / cfg.prompts_dir if cfg.prompts_dir and root else None)
    cache = ResponseCache(cache_path) if cache_path is not None else None
    return Judge(
        config=cfg,
        provider=provider,
        prompts=prompts,
        cache=cache,
        price=prices.get(provider.model),
    )


def same_family_warning(judge: Judge, answer_models: Sequence[str | None]) -> str | None:
    """A warning when the judge's model family answered too (judges favour their own family)."""
    family = model_family(judge.provider.model)
    if family is None or family not in {model_family(m) for m in answer_models}:
        return None
    return (
        f"the judge ({judge.provider.model}) is of the same family as an answering model; "
        "judges favour their own family's answers: prefer a judge from another family"
    )


def judge_and_rescore(judge: Judge, run: RunResult) -> int:
    """Judge a run in place, let gated criteria fail answers, recompute causes and totals,
    and attach the judge's totals and cost. Returns how many questions the judge failed on."""
    from ragrail.diagnose import assign_cause
    from ragrail.run import compute_totals

    judge.judge_run(run)
    apply_gates(run, judge.config.criteria)
    for case in run.cases:
        assign_cause(case, run.config.min_score)
    run.totals = compute_totals(run.cases)
    run.judge = judge.label
    run.judge_usage = judge.usage
    run.judge_stats = judge_totals(run)
    return sum(1 for c in run.cases if c.judge is not None and c.judge.errors)


def judge_totals(run: RunResult) -> dict[str, Any]:
    """Judge faithfulness and each criterion's pass rate, with n and 95% intervals."""
    from ragrail.run import _mean_stat, _rate

    judged = [c.judge for c in run.cases if c.judge is not None]
    out: dict[str, Any] = {"judge_faithfulness": _mean_stat([j.faithfulness for j in judged])}
    names = [cr.name for j in judged for cr in j.criteria]
    for name in dict.fromkeys(names):
        verdicts = [cr for j in judged for cr in j.criteria if cr.name == name]
        out[f"judge_{name}"] = _rate(sum(1 for v in verdicts if v.passed), len(verdicts))
    return out
