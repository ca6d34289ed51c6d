"""The per-question work a backend hands out: answer and score one slice of the golden
set, flag one batch of logged conversations, or make one slice of a judge's calls. Plain functions of picklable jobs, so
any process can run them (a Ray worker, or this one); nothing here imports Ray."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from ragrail.calls.layer import UsageTotals
    from ragrail.calls.prices import Price
    from ragrail.judge.config import JudgeConfig, Prompts
    from ragrail.online.record import Conversation
    from ragrail.project import SystemConfig
    from ragrail.records.case import Case
    from ragrail.records.results import CaseResult, RunConfig, Trace
    from ragrail.scoring.case import ScoringOptions
    from ragrail.scoring.memo import ScoringCache
    from ragrail.system.answerers import AnswererSpec
    from ragrail.system.pipeline import Pipeline, PipelineSettings


@dataclass
class PipelineJob:
    """What every slice of a built-in pipeline run shares."""

    name: str
    settings: PipelineSettings
    spec: AnswererSpec  # its rpm/tpm cleared: ``limiter`` is the cluster-wide one
    repeats: int
    options: ScoringOptions
    n_cases: int  # the whole run's, for its RunConfig
    limiter: RemoteLimiter | None = None  # None: no rate limit


@dataclass
class SystemJob:
    """What every slice of a run of the user's own system shares."""

    root: Path  # the project's folder
    config: SystemConfig  # [system], as resolved (the run's call flags over its own)
    options: ScoringOptions
    system: Any = None  # the user's system as given to the API (None: the project's)
    repeats: int = 1  # each question asked this many times (ragrail.system.rounds)


@dataclass
class Piece:
    """What one slice gives back: its questions' results in golden-set order."""

    results: list[CaseResult]
    usage: UsageTotals | None = None  # the model calls it made (None: no model)
    config: RunConfig | None = None  # the pipeline's, as the slice's worker built it


class RemoteLimiter:
    """The call layer's limiter, held by one Ray actor for the whole cluster: each request
    waits its turn there (FIFO across every worker), so the model's rpm/tpm hold for the
    run, not per worker. Duck-types :class:`ragrail.calls.limiter.RateLimiter`."""

    def __init__(self, actor: Any, counts_tokens: bool) -> None:
        self.actor = actor
        self.counts_tokens = counts_tokens
        self.waited = 0.0

    async def acquire(self, tokens: int = 0) -> float:
        waited = float(await self.actor.acquire.remote(tokens))
        self.waited += waited
        return waited

    def settle(self, estimate: int, input_tokens: int | None, output_tokens: int | None) -> None:
        self.actor.settle.remote(estimate, input_tokens, output_tokens)  # no need to wait


# One worker process answers many slices: each index (chunking, retriever) is built once.
_PIPELINES: dict[PipelineSettings, Pipeline] = {}
_MAX_PIPELINES = 4


def pipeline_for(settings: PipelineSettings) -> Pipeline:
    """The pipeline for ``settings``, indexed once per process."""
    from ragrail.system.pipeline import Pipeline

    pipeline = _PIPELINES.get(settings)
    if pipeline is None:
        if len(_PIPELINES) >= _MAX_PIPELINES:
            _PIPELINES.pop(next(iter(_PIPELINES)))
        pipeline = _PIPELINES[settings] = Pipeline(settings)
    return pipeline


def pipeline_piece(job: PipelineJob, cases: Sequence[Case]) -> Piece:
    """Retrieve, answer and score one slice through the built-in pipeline (a slice holds
    whole conversations: they are asked turn by turn, ``ragrail.system.rounds``)."""
    from ragrail.run import run_config, score_cases
    from ragrail.system.answerers import build_answerer
    from ragrail.system.rounds import run_in_rounds

    pipeline = pipeline_for(job.settings)
    answerer = build_answerer(job.spec)
    layer = getattr(answerer, "layer", None)
    if layer is not None and job.limiter is not None:
        layer.limiter = job.limiter
    try:
        traces = run_in_rounds(pipeline, cases, answerer, job.repeats)
    finally:
        if layer is not None and layer.cache is not None:
            layer.cache.close()
    config = run_config(job.name, pipeline, answerer, job.n_cases, job.repeats)
    results = score_cases(config.min_score, cases, traces, job.options, pipeline)
    return Piece(results, getattr(answerer, "usage", None), config)


def system_piece(job: SystemJob, cases: Sequence[Case], traces: Sequence[Trace] | None) -> Piece:
    """Score one slice of the user's system: ``traces`` when the driver has them (an
    outputs file), else this slice's questions are put to the system here."""
    from ragrail.run import score_cases
    from ragrail.system.adapters.records import named_sources
    from ragrail.text.names import DocumentNames

    if traces is None:
        from ragrail.system.adapters import make_system
        from ragrail.system.rounds import ask_in_rounds

        system = make_system(job.config, job.root, job.system)
        traces = ask_in_rounds(system, cases, job.repeats)
    # the sources read as the documents they name (job.options.documents: the driver's)
    traces = named_sources(traces, DocumentNames(job.options.documents))
    return Piece(score_cases(0.0, cases, traces, job.options))


@dataclass
class LogJob:
    """What every batch of one production-log scoring shares: the label-free scoring
    options, sent without their cache, and a token naming this scoring, so that the
    batches one worker process flags share one cache (built there)."""

    options: ScoringOptions
    token: str


# One worker process flags many batches of a scoring: a context or claim met in one
# batch is tokenised once for all of them. One scoring's cache at a time.
_LOG_CACHES: dict[str, ScoringCache] = {}


def log_flags_piece(job: LogJob, conversations: Sequence[Conversation]) -> list[tuple[str, ...]]:
    """The flags of one batch of logged conversations, in its order
    (:func:`ragrail.online.score.flags_for`, pure: the driver counts and stores them)."""
    import dataclasses

    from ragrail.online.score import flags_for
    from ragrail.scoring.memo import ScoringCache

    cache = _LOG_CACHES.get(job.token)
    if cache is None:
        _LOG_CACHES.clear()  # an earlier scoring's cache: that scoring is over
        cache = _LOG_CACHES[job.token] = ScoringCache()
    options = dataclasses.replace(job.options, cache=cache)
    return [flags_for(c, options) for c in conversations]


@dataclass
class JudgeJob:
    """What every slice of one judge's calls shares: picklable inputs to build the same
    judge in any process (its provider reads the API key from that process's env)."""

    config: JudgeConfig  # its rpm/tpm cleared: ``limiter`` is the cluster-wide one
    prompts: Prompts
    cache_path: Path | None  # the project's reply cache (None: the judge had none)
    price: Price | None
    abstain_phrases: tuple[str, ...] | None
    limiter: RemoteLimiter | None = None  # None: no rate limit


def judge_piece(
    job: JudgeJob, prompts: list[tuple[str, int]], validate: Any
) -> tuple[list[Any], UsageTotals]:
    """Make one slice of a judge's calls ``(prompt, repeat)``: their results in order
    and what they cost (the driver adds that to its judge's totals)."""
    from ragrail.calls.cache import ResponseCache
    from ragrail.calls.providers import JUDGE_URL, make_provider
    from ragrail.judge.core import Judge

    c = job.config
    assert c.provider is not None  # the job's config is a built judge's
    judge = Judge(
        config=c,
        provider=make_provider(c.provider, c.model, c.base_url, c.timeout, JUDGE_URL),
        prompts=job.prompts,
        cache=ResponseCache(job.cache_path) if job.cache_path is not None else None,
        price=job.price,
        abstain_phrases=job.abstain_phrases,
        limiter=job.limiter,
    )
    try:
        results = judge.call(prompts, validate)
    finally:
        if judge.cache is not None:
            judge.cache.close()
    return results, judge.totals
