"""Score traces into a RunResult. Running and scoring are separate steps, so a
saved run can be re-scored without calling the system again."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from ragrail.records.case import Case, GoldenSet
from ragrail.records.results import (
    ArticleScores,
    CaseResult,
    Expected,
    RunConfig,
    RunResult,
    Stat,
    Totals,
    Trace,
    Usage,
)
from ragrail.scoring.behaviour import expectation_counts
from ragrail.scoring.case import ScoringOptions, answer_problems, score_case
from ragrail.stats import Interval, clustered_rate, mean_intervals, wilson
from ragrail.system.rounds import ask_in_rounds, run_in_rounds, with_first_histories

if TYPE_CHECKING:  # a run of a user's own system never builds the pipeline
    from ragrail.system.answerers.base import Answerer
    from ragrail.system.pipeline import Pipeline


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def compute_totals(cases: Sequence[CaseResult]) -> Totals:
    """Totals over per-question scores.

    hit rate@k = mean of hit over cases with facts; recall@k = mean of recall
    over the same cases (a case whose call failed before anything was retrieved
    is a miss with recall 0, and is also counted in ``n_retrieval_errors``);
    answer pass rate = answers passed / answers asked for, counting each repeat:
    every answer lost to a failed call counts as not passing (``n_answer_errors``),
    so the rate is the run's, never a rate over the survivors. ``n_errors`` counts
    the questions with a failed call. Prompt tokens = mean over cases that built
    a prompt. Each metric in ``stats`` averages only the cases where it is
    defined, and says how many (n), with a 95% interval. ``expected``: questions and
    passes per expected behaviour, when some question expects refuse or escalate.
    """
    from ragrail.diagnose import CAUSES
    from ragrail.scoring.conversations import conversation_counts
    from ragrail.scoring.stages import stage_totals

    with_facts = [c for c in cases if c.retrieval_recall is not None]
    answered = [c for c in cases if c.answer_runs]
    runs = sum(c.answer_runs for c in answered)
    passed = sum(c.answer_passes for c in answered)
    # a failed call loses its question's every answer (each repeat), none scored
    answer_errors = sum(
        len(c.trace.all_samples()) for c in cases if c.errored and not c.answer_runs
    )
    asked = runs + answer_errors
    tokens = [c.trace.prompt_tokens for c in cases if c.trace.prompt_tokens is not None]
    hits = sum(1 for c in with_facts if c.retrieval_hit)
    stats = _stats(cases, hits, len(with_facts), passed, asked)
    counts = {cause: 0 for cause in (*CAUSES, "other")}
    for c in cases:
        if c.cause:
            counts[c.cause] = counts.get(c.cause, 0) + 1
    return Totals(
        n_cases=len(cases),
        n_retrieval=len(with_facts),
        hit_rate=_mean([1.0 if c.retrieval_hit else 0.0 for c in with_facts]),
        recall=_mean([c.retrieval_recall for c in with_facts if c.retrieval_recall is not None]),
        n_answers=runs,
        answers_passed=passed,
        answer_pass_rate=passed / asked if asked else None,
        n_errors=sum(1 for c in cases if c.errored),
        n_answer_errors=answer_errors,
        n_retrieval_errors=sum(1 for c in with_facts if c.errored and not c.trace.retrieved),
        n_flaky=sum(1 for c in cases if c.flaky),
        prompt_tokens_mean=_mean([float(t) for t in tokens]),
        stats=stats,
        causes={k: v for k, v in counts.items() if v},
        expected={
            name: Expected(n=n, passed=passed)
            for name, (n, passed) in expectation_counts(cases).items()
        },
        **conversation_counts(cases),
        stages=stage_totals(cases),
    )


def recorded_answer_rate(totals: Mapping[str, Any], repeats: int = 1) -> float | None:
    """The answer pass rate of recorded totals (a history row), errors counted as not
    passing. Runs recorded before ``n_answer_errors`` existed stored a rate over the
    answers that survived; for them each errored question lost ``repeats`` answers."""
    passed, scored = totals.get("answers_passed", 0), totals.get("n_answers", 0)
    lost = totals.get("n_answer_errors")
    if lost is None:
        lost = totals.get("n_errors", 0) * repeats
    asked = scored + lost
    return passed / asked if asked else None


def _rate(successes: int, n: int) -> Stat:
    """successes / n with its n and Wilson's 95% interval."""
    return _stat(successes / n if n else None, wilson(successes, n), n)


def _stats(
    cases: Sequence[CaseResult], hits: int, n_facts: int, passed: int, asked: int
) -> dict[str, Stat]:
    """Every total of ``Totals.stats`` with its n and 95% interval: the hit rate and the
    answer pass rate as rates, each per-question score as a mean over the cases where it
    is defined."""
    columns = {
        "recall": [c.retrieval_recall for c in cases],
        "context_precision": [c.context_precision for c in cases],
        "context_average_precision": [c.context_average_precision for c in cases],
        "mrr": [c.reciprocal_rank for c in cases],
        "correctness": [c.correctness for c in cases],
        "faithfulness": [c.faithfulness for c in cases],
    }
    # a case without article scores has none of them defined, like a None score
    articles = [c.articles for c in cases if c.articles is not None]
    for name in ArticleScores.model_fields:
        columns[f"article_{name}"] = list(map(attrgetter(name), articles))
    means = _mean_stats(columns)
    return {
        "hit_rate": _rate(hits, n_facts),
        "recall": means.pop("recall"),
        "answer_pass_rate": _answer_rate(cases, passed, asked),
        **means,
    }


def _answer_rate(cases: Sequence[CaseResult], passed: int, asked: int) -> Stat:
    """The answer pass rate passed / asked with its interval: Wilson's over the answers
    when each question was answered once; with repeats, the questions are the sample,
    so Wilson's with the effective number of trials (``stats.clustered_rate``)."""
    # repeats: more than one answer scored, or repeats lost with their question's error
    repeated = any(c.answer_runs > 1 for c in cases) or any(
        c.trace.samples for c in cases if not c.answer_runs
    )
    if not repeated:
        return _rate(passed, asked)
    # an errored question lost every answer it was asked for (each repeat), none passed
    per_question = [
        (c.answer_passes, c.answer_runs or len(c.trace.all_samples()))
        for c in cases
        if c.answer_runs or c.errored
    ]
    interval = clustered_rate([y for y, _ in per_question], [m for _, m in per_question])
    return _stat(passed / asked if asked else None, interval, asked)


def _mean_stat(values: Sequence[float | None]) -> Stat:
    """The mean of the defined values, its n and 95% interval (``stats.mean_interval``)."""
    return _mean_stats({"": values})[""]


def _mean_stats(columns: Mapping[str, Sequence[float | None]]) -> dict[str, Stat]:
    """``_mean_stat`` of each column, the intervals computed together: columns of the
    same length share one bootstrap draw (``stats.mean_intervals``); a column of only 0s
    and 1s gets Wilson's interval instead (it is a rate)."""
    defined = {name: [v for v in values if v is not None] for name, values in columns.items()}
    intervals = mean_intervals(list(defined.values()))
    for i, vals in enumerate(defined.values()):
        if vals and all(v in (0.0, 1.0) for v in vals):
            # a column of 0s and 1s is a rate: Wilson's interval, as the hit rate's, so
            # the same 10 of 11 gets the same interval whatever the metric is called
            intervals[i] = wilson(sum(vals), len(vals))
    return {
        name: _stat(sum(vals) / len(vals) if vals else None, interval, len(vals))
        for (name, vals), interval in zip(defined.items(), intervals, strict=True)
    }


def _stat(value: float | None, interval: Interval | None, n: int) -> Stat:
    return Stat(
        value=value,
        low=interval.low if interval else None,
        high=interval.high if interval else None,
        n=n,
    )


def score_run(
    config: RunConfig,
    cases: Sequence[Case],
    traces: Sequence[Trace],
    options: ScoringOptions | None = None,
    pipeline: Pipeline | None = None,
) -> RunResult:
    """Score every trace; with the pipeline at hand, also locate the facts retrieval missed.
    Whether answers must cite is decided here, from every answer (``scoring.citing``)."""
    from dataclasses import replace

    from ragrail.gcpause import paused_gc
    from ragrail.scoring.citing import citation_rule

    options = options or ScoringOptions(k=config.top_k)
    required, citations = citation_rule(options.require_citation, traces, options.cache)
    options = replace(options, require_citation=required)
    if citations != config.citations:
        config = config.model_copy(update={"citations": citations})
    with paused_gc():
        results = score_cases(config.min_score, cases, traces, options, pipeline)
        return RunResult(config=config, totals=compute_totals(results), cases=results)


def score_cases(
    min_score: float,
    cases: Sequence[Case],
    traces: Sequence[Trace],
    options: ScoringOptions,
    pipeline: Pipeline | None = None,
) -> list[CaseResult]:
    """Each question's scores, alone: what a backend may compute anywhere, in any slices,
    before :func:`compute_totals` adds them up on the driver."""
    from ragrail.diagnose import assign_cause, locate_missed_facts
    from ragrail.gcpause import paused_gc
    from ragrail.text.matching import normalise

    normalised = options.cache.memoised(normalise)  # the run's own memo, bounded with it
    results = []
    with paused_gc():
        for case, trace in zip(cases, traces, strict=True):
            result = score_case(case, trace, options)
            if (
                pipeline is not None
                and result.retrieval_recall is not None
                and result.retrieval_recall < 1
            ):
                result.missed_facts = locate_missed_facts(case, result.facts_retrieved, pipeline)
            assign_cause(result, min_score, normalised)
            results.append(result)
    return results


def evaluate(
    name: str,
    golden: GoldenSet,
    pipeline: Pipeline,
    answerer: Answerer,
    repeats: int = 1,
    options: ScoringOptions | None = None,
) -> RunResult:
    """Run every golden case through the pipeline (conversations in rounds) and score it."""
    cases = golden.cases
    traces = run_in_rounds(pipeline, cases, answerer, repeats)
    config = run_config(name, pipeline, answerer, len(cases), repeats)
    options = options or ScoringOptions(k=config.top_k)
    result = score_run(config, cases, traces, options, pipeline)
    result.usage = usage_of(answerer)
    return result


def run_config(
    name: str, pipeline: Pipeline, answerer: Answerer, n_cases: int, repeats: int = 1
) -> RunConfig:
    s = pipeline.settings
    return RunConfig(
        name=name,
        chunking=s.chunking,
        chunk_words=s.chunk_words or None,
        top_k=s.top_k,
        min_score=s.min_score,
        retriever=s.retriever_label,
        answerer=answerer.name,
        answerer_label=answerer.label,
        model=answerer.model,
        repeats=repeats,
        n_chunks=len(pipeline.chunks),
        n_cases=n_cases,
        settings=s.stage_settings,
    )


def usage_of(answerer: Answerer) -> Usage | None:
    """The call totals of an answerer that calls a model; None for the stand-in."""
    totals = getattr(answerer, "usage", None)
    return None if totals is None else totals.summary()


def rerun_failures(
    result: RunResult,
    golden: GoldenSet,
    pipeline: Pipeline,
    answerer: Answerer,
    times: int,
    options: ScoringOptions | None = None,
) -> dict[str, list[tuple[str | None, str | None, list[str]]]]:
    """Answer each failing case (an answer that failed, or a failed call) ``times``
    more times and check each answer. The re-runs have their own cache indexes
    (namespace "rerun", 0..times-1), so they never take a reply cached by
    --repeats; their calls go through the answerer's call layer, so they are in
    its usage totals.

    Returns case id -> [(answer, error, problems)], for a person to read.
    """
    from dataclasses import replace

    from ragrail.scoring.checks import CheckError
    from ragrail.system.answerers import RERUN_NAMESPACE

    options = options or ScoringOptions(k=result.config.top_k)
    failing = [
        c
        for c in result.cases
        if c.trace.prompt is not None and (c.errored or (c.answer_runs and not c.answer_pass))
    ]
    if not failing or times < 1:
        return {}
    by_id = {c.id: c for c in golden.cases}
    traces = [c.trace for c in failing]
    questions = [c.question for c in failing]
    requests = [
        replace(r, namespace=RERUN_NAMESPACE)
        for r in pipeline.requests(traces, questions, repeats=times, first_repeat=0)
    ]
    requests = with_first_histories(requests, golden.cases, [c.trace for c in result.cases])
    out: dict[str, list[tuple[str | None, str | None, list[str]]]] = {c.id: [] for c in failing}
    for req, res in zip(requests, answerer.answer_all(requests), strict=True):
        case = by_id[req.case_id]
        given = {c.id: c.source for c in req.chunks}
        error, problems = res.error, []
        if error is None:
            try:
                problems = answer_problems(case, res.answer or "", given, options)[0]
            except (
                CheckError
            ) as exc:  # a check that raised on this answer: its error, as in the run
                error = str(exc)
        out[req.case_id].append((res.answer, error, problems))
    return out


def evaluate_system(
    name: str,
    golden: GoldenSet,
    system: Any,
    options: ScoringOptions | None = None,
    repeats: int = 1,
) -> RunResult:
    """Score a user's own system (a callable, an HTTP endpoint or an outputs file): its
    contexts' sources read as the documents they name first (:func:`with_document_names`).
    ``repeats``: ask it each question that many times, conversations in rounds."""
    from ragrail.system.adapters.records import named_sources, warn_unknown_sources
    from ragrail.text.names import DocumentNames

    cases = golden.cases
    traces = ask_in_rounds(system, cases, repeats)
    config = system_config(name, system, traces)
    if repeats > 1:
        config = config.model_copy(update={"repeats": repeats})
    options, compared = with_document_names(options or ScoringOptions(k=config.top_k), cases)
    names = DocumentNames(options.documents)
    traces = named_sources(traces, names)
    warn_unknown_sources(traces, names, compared)
    return score_run(config, cases, traces, options)


def with_document_names(
    options: ScoringOptions, cases: Sequence[Case]
) -> tuple[ScoringOptions, str]:
    """``options`` with the names a user's system's sources are read as
    (``ScoringOptions.documents``): the documents in ``options.docs`` when it holds any,
    else the golden set's sources; and what they are, as a warning names them."""
    from dataclasses import replace

    from ragrail.system.corpus import DOC_SUFFIXES

    folder = options.docs
    names: list[str] = []
    if folder is not None and folder.is_dir():
        names = sorted({p.stem for p in folder.iterdir() if p.suffix.lower() in DOC_SUFFIXES})
    if names and folder is not None:
        compared = f"the {len(names)} documents in {folder.name}/"
    else:
        names = sorted({s for c in cases for s in c.relevance})
        compared = f"the golden set's {len(names)} sources"
    return replace(options, documents=tuple(names)), compared


def settle_citations(
    config: RunConfig,
    cases: Sequence[Case],
    results: list[CaseResult],
    options: ScoringOptions,
) -> tuple[RunConfig, list[CaseResult]]:
    """For a run scored in slices (a backend's), each with "auto" counted as required:
    the run's citation rule (``scoring.citing``) in its config and, when it drops the
    requirement, each answer scored again without it (the facts located as missed kept)."""
    from dataclasses import replace

    from ragrail.diagnose import assign_cause
    from ragrail.scoring.citing import citation_rule
    from ragrail.text.matching import normalise

    traces = [r.trace for r in results]
    required, citations = citation_rule(options.require_citation, traces, options.cache)
    config = config.model_copy(update={"citations": citations})
    if required or options.require_citation is False:
        return config, results  # scored as the rule says already
    again = replace(options, require_citation=False)
    normalised = again.cache.memoised(normalise)
    rescored = []
    for case, old in zip(cases, results, strict=True):
        new = score_case(case, old.trace, again)
        new.missed_facts = old.missed_facts
        assign_cause(new, config.min_score, normalised)
        rescored.append(new)
    return config, rescored


def system_config(name: str, system: Any, traces: Sequence[Trace]) -> RunConfig:
    """The run's configuration for a user's own system, as its traces show it: k is the
    most contexts a question got, the chunks are the distinct ids retrieved; the index's
    size and the system's own settings are the first it reported, if it did."""
    top_k = max((len(t.retrieved) for t in traces), default=1) or 1
    return RunConfig(
        name=name,
        chunking=system.kind,
        top_k=top_k,
        min_score=0.0,
        retriever=system.name,
        answerer=system.name,
        answerer_label=system.label,
        n_chunks=len({c.id for t in traces for c in t.retrieved}),
        n_cases=len(traces),
        index_size=next((t.index_size for t in traces if t.index_size is not None), None),
        settings=next((t.settings for t in traces if t.settings), {}),
    )


def chunks_text(config: RunConfig) -> str:
    """The header's count of chunks: the index's (the pipeline's, or what a user's system
    reported), else what a user's system showed of it: ``62 distinct chunks retrieved``.
    A user's system is told by its chunking, which is its kind, not the pipeline's."""
    from ragrail.system.corpus import describe_chunking

    if config.index_size is not None:
        return f"{config.index_size} chunks"
    if config.chunking != describe_chunking(config.chunk_words):
        return f"{config.n_chunks} distinct chunks retrieved"
    return f"{config.n_chunks} chunks"
