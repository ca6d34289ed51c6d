"""How the project file and the overrides (flags, keyword arguments) combine into the
settings of each stage: retrieval, answering, scoring, judging. Nothing here runs.

:func:`resolve` combines them once (``app.prepare`` calls it, after its checks) into one
:class:`ResolvedSettings`, which the runner, the backends, shards and sweep read instead
of working any setting out again; the functions it is made of (:func:`answerer_spec`,
:func:`pipeline_settings`, :func:`scoring_options`, :func:`judge_config`) stay public
for the commands that need one stage only."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragrail.errors import InputError
from ragrail.flags import FLAGS, Overrides

if TYPE_CHECKING:
    from ragrail.backends.choice import Backend
    from ragrail.judge import JudgeConfig
    from ragrail.project import Project, SystemConfig
    from ragrail.scoring.case import ScoringOptions
    from ragrail.system.answerers import AnswererSpec
    from ragrail.system.pipeline import PipelineSettings


@dataclass(frozen=True)
class ResolvedSettings:
    """The project file and the overrides, combined once into each stage's settings."""

    answerer: AnswererSpec  # who answers, and how its calls are made
    pipeline: PipelineSettings  # the built-in pipeline's retrieval and prompt
    repeats: int  # answers per question
    scoring: ScoringOptions
    judge: JudgeConfig | None  # None: no judge
    system: SystemConfig  # [system], bound by the run's call flags
    backend: Backend  # where the questions are answered and scored

    @property
    def docs(self) -> Path:
        return self.pipeline.docs


def resolve(
    project: Project, overrides: Overrides | None = None, *, judge: JudgeConfig | None = None
) -> ResolvedSettings:
    """Every stage's settings: the overrides over the project file. ``judge``: the judge
    :func:`judge_config` chose (and the caller checked), None for none. The backend is
    chosen first: a missing Ray (InputError) before --claude contradicting --answerer."""
    from ragrail.backends.choice import choose

    o = overrides or Overrides()
    backend = choose(project, o)
    return ResolvedSettings(
        answerer=answerer_spec(project, o),
        pipeline=pipeline_settings(project, o),
        repeats=o.repeats or _configured_repeats(project),
        scoring=scoring_options(project, o),
        judge=judge,
        system=system_config(project, o),
        backend=backend,
    )


def _configured_repeats(project: Project) -> int:
    """Answers per question as the project file sets them: ``[answerer] repeats`` for the
    built-in pipeline, ``[system] repeats`` for a user's own system."""
    cfg = project.config
    return cfg.answerer.repeats if cfg.system.kind == "pipeline" else cfg.system.repeats


def system_config(project: Project, overrides: Overrides | None = None) -> SystemConfig:
    """[system], with --timeout, --concurrency and --max-retries over its own: the call
    flags set the same limits for the user's system as for model calls."""
    o = overrides or Overrides()
    limits = {
        key: value
        for key, value in (
            ("timeout", o.timeout),
            ("concurrency", o.concurrency),
            ("max_retries", o.max_retries),
        )
        if value is not None
    }
    return project.config.system.model_copy(update=limits)


def scoring_options(project: Project, overrides: Overrides | None = None) -> ScoringOptions:
    from ragrail.scoring.case import ScoringOptions

    o, cfg = overrides or Overrides(), project.config
    return ScoringOptions(
        k=o.top_k or cfg.pipeline.top_k,
        checks=tuple(cfg.checks),
        require_faithful=cfg.scoring.require_faithful,
        language=cfg.pipeline.language,
        abstain_phrases=tuple(cfg.scoring.abstain_phrases),
        refuse_phrases=tuple(cfg.scoring.refuse_phrases),
        escalate_phrases=tuple(cfg.scoring.escalate_phrases),
        require_citation=cfg.scoring.require_citation,
        docs=o.docs or project.docs,
    )


def pipeline_settings(project: Project, overrides: Overrides | None = None) -> PipelineSettings:
    from ragrail.system.pipeline import PipelineSettings

    o, cfg = overrides or Overrides(), project.config
    pipe = cfg.pipeline
    return PipelineSettings(
        docs=o.docs or project.docs,
        product=cfg.product,
        chunk_words=pipe.chunk_words if o.chunk_words is None else o.chunk_words,
        top_k=o.top_k or pipe.top_k,
        min_score=pipe.min_score if o.min_score is None else o.min_score,
        retriever=o.retriever or pipe.retriever,
        language=pipe.language,
        embeddings_cache=None if o.no_cache else project.state_dir / "embeddings.sqlite",
        rerank=pipe.rerank,
        candidates=pipe.candidates,
    )


def prices(project: Project) -> dict[str, Any]:
    """Known model prices, the project's [prices] over the bundled ones."""
    from ragrail.calls.prices import DEFAULT_PRICES, Price

    own = {m: Price(p.input, p.output) for m, p in project.config.prices.items()}
    return {**DEFAULT_PRICES, **own}


def answerer_spec(project: Project, overrides: Overrides | None = None) -> AnswererSpec:
    """Who answers, and how its calls are made: the overrides over [answerer]."""
    from ragrail.calls.layer import CallSettings
    from ragrail.calls.prices import Price
    from ragrail.system.answerers import AnswererSpec

    o, a = overrides or Overrides(), project.config.answerer
    if o.claude and o.answerer not in (None, "anthropic"):
        raise InputError("--claude and --answerer openai contradict each other")
    name = "anthropic" if o.claude else (o.answerer or a.name)
    model = o.model or ("claude-opus-5" if o.claude else None) or a.model
    if name != a.name and not o.model and not o.claude:
        model = None  # the config's model belongs to the config's answerer
    spec = AnswererSpec(
        name=name,
        model=model,
        base_url=o.base_url or (a.base_url if name == a.name else None),
        calls=CallSettings(
            concurrency=o.concurrency or a.concurrency,
            timeout=o.timeout or a.timeout,
            max_retries=a.max_retries if o.max_retries is None else o.max_retries,
            max_tokens=o.max_tokens or a.max_tokens,
            temperature=a.temperature,
            rpm=a.rpm if o.rpm is None else o.rpm,
            tpm=a.tpm if o.tpm is None else o.tpm,
            batch=o.batch or a.batch,
        ),
        cache_path=None if o.no_cache else project.state_dir / "cache.sqlite",
    )
    spec.prices.update({m: Price(p.input, p.output) for m, p in project.config.prices.items()})
    return spec


def judge_config(project: Project, overrides: Overrides | None = None) -> JudgeConfig | None:
    """The judge to use, or None: the overrides over [judge]; off unless asked for."""
    o, base = overrides or Overrides(), project.config.judge
    provider = {"claude": "anthropic"}.get(o.judge or "", o.judge) or base.provider
    if provider is None:
        given = [
            FLAGS[name].flag
            for name in (
                "judge_model",
                "judge_base_url",
                "judge_repeats",
                "judge_concurrency",
                "judge_timeout",
                "judge_max_retries",
                "judge_rpm",
                "judge_tpm",
            )
            if getattr(o, name) is not None
        ]
        if given:
            raise InputError(f"{', '.join(given)} need --judge (or [judge] provider)")
        return None
    same = provider == base.provider
    model = o.judge_model or (base.model if same else None)
    if model is None and provider == "anthropic":
        model = "claude-opus-5"
    if model is None:
        raise InputError("--judge openai needs --judge-model NAME")

    def setting(flag: Any, name: str, run_flag: Any) -> Any:
        # --judge-X, else [judge] X when the file writes it, else the run's own --X
        # (so one --concurrency 1 reaches every call), else the default
        if flag is not None:
            return flag
        return (
            getattr(base, name) if name in base.model_fields_set or run_flag is None else run_flag
        )

    return base.model_copy(
        update={
            "provider": provider,
            "model": model,
            "base_url": o.judge_base_url or (base.base_url if same else None),
            "repeats": o.judge_repeats or base.repeats,
            "concurrency": setting(o.judge_concurrency, "concurrency", o.concurrency),
            "timeout": setting(o.judge_timeout, "timeout", o.timeout),
            "max_retries": setting(o.judge_max_retries, "max_retries", o.max_retries),
            "rpm": setting(o.judge_rpm, "rpm", o.rpm),
            "tpm": setting(o.judge_tpm, "tpm", o.tpm),
            "batch": o.batch or base.batch,
        }
    )


def build_judge(project: Project, cfg: JudgeConfig, no_cache: bool = False) -> Any:
    """The judge ``cfg`` describes (a ``judge.Judge``), with the project's reply cache
    (``no_cache``: none, as ``--no-cache`` asks), prices and prompts."""
    from ragrail.judge import build_judge as build

    cache = None if no_cache else project.state_dir / "cache.sqlite"
    judge = build(cfg, cache, prices(project), project.root)
    judge.abstain_phrases = tuple(project.config.scoring.abstain_phrases)
    return judge


def check_min_score(project: Project, overrides: Overrides | None = None) -> None:
    """A minimum score the retriever can never reach (on its own scale) is an InputError,
    naming the flag or the config key that set it."""
    from ragrail.system.retrieval import min_score_problem

    o, pipe = overrides or Overrides(), project.config.pipeline
    name = o.retriever or pipe.retriever
    problem = min_score_problem(name, pipe.min_score if o.min_score is None else o.min_score)
    if problem is None:
        return
    if o.min_score is not None:
        raise InputError(f"invalid value for --min-score: {problem}")
    raise InputError(
        f"key '{FLAGS['min_score'].key}' with --retriever {name}: {problem}",
        str(project.config_path or project.root),
    )


# ---------------------------------------------------------------- checks before any work


def history_path(project: Project) -> Path | None:
    """The run history, or None after one warning when it cannot be written (the run goes
    on). A newer ragrail's history is an InputError."""
    from ragrail.store.history import check_for_run

    path = project.state_dir / "history.sqlite"
    return path if check_for_run(path) else None


def check_gates(project: Project, cfg: JudgeConfig, o: Overrides) -> None:
    """Refuse, before any work, to gate on a judge criterion nobody has validated."""
    from ragrail.judge import Prompts, require_validated
    from ragrail.store.history import History

    if o.trust_unvalidated or not any(c.gate for c in cfg.criteria):
        return
    prompts = Prompts.load(project.root / cfg.prompts_dir if cfg.prompts_dir else None)
    store = History(project.state_dir / "history.sqlite")
    try:
        require_validated(cfg, prompts, store)
    finally:
        store.close()


def check_judge_provider(cfg: JudgeConfig) -> None:
    """Refuse, before any answer is paid for, a judge whose key is missing or whose base
    URL is not a URL: the judge is only built once every answer is in."""
    from ragrail.calls.providers import JUDGE_URL, make_provider

    make_provider(cfg.provider, cfg.model, cfg.base_url, cfg.timeout, JUDGE_URL)


def refuse_pipeline_flags(o: Overrides, kind: str) -> None:
    """Flags of the built-in pipeline given for another system under test: an InputError
    rather than a run that silently ignores them."""
    ignored = [
        FLAGS[name].flag
        for name in (
            "claude",
            "answerer",
            "top_k",
            "chunk_words",
            "retriever",
            "dry_run",
            "rerun_failures",
        )
        # an outputs file's answers are known: a dry run counts the judge's calls on them
        if getattr(o, name) and not (name == "dry_run" and kind == "outputs")
    ]
    if o.repeats and o.repeats > 1 and kind == "outputs":
        ignored.append(FLAGS["repeats"].flag)
    if ignored == [FLAGS["repeats"].flag]:
        raise InputError(
            f"{ignored[0]} needs a system that can be asked again: an outputs file holds "
            "one answer per question (answer each question N times into it, or use "
            '[system] kind = "python" or "http")'
        )
    if ignored:
        raise InputError(
            f"{', '.join(ignored)} do not apply: this project's system under test is "
            f'[system] kind = "{kind}", not the built-in pipeline'
        )
