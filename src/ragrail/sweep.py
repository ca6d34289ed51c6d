"""Sweep a grid of pipeline settings (chunking x retriever x k x minimum score) and
tabulate the totals, to choose a configuration by its scores on your own questions.
A retriever may be ``hybrid`` and may end in ``+rerank`` (``bm25+rerank``): the dense
rerank of :mod:`ragrail.system.hybrid` over ``[pipeline] candidates``.

The minimum score is on each retriever's own scale, so each row also says how many
abstain cases pass (nothing retrieved, the bot says it doesn't know) and how many
answerable cases the threshold cost their retrieval, to pick a threshold that makes
the first pass without the second.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragrail.records.case import GoldenSet
from ragrail.records.results import RetrievedChunk, RunResult
from ragrail.run import evaluate
from ragrail.scoring.case import ScoringOptions
from ragrail.scoring.retrieval import facts_retrieved
from ragrail.system.answerers.base import Answerer
from ragrail.system.corpus import describe_chunking
from ragrail.system.hybrid import split_name
from ragrail.system.pipeline import Pipeline, PipelineSettings
from ragrail.system.retrieval import min_score_problem

if TYPE_CHECKING:
    from ragrail.backends.choice import Backend

METRICS = ("hit_rate", "recall", "answer_pass_rate", "context_precision", "mrr")


@dataclass(frozen=True)
class SweepRow:
    chunking: str
    chunk_words: int
    retriever: str
    top_k: int
    n_chunks: int
    hit_rate: float | None
    recall: float | None
    answer_pass_rate: float | None
    context_precision: float | None
    mrr: float | None
    prompt_tokens: float | None
    min_score: float = 0.0
    abstain_passed: int = 0  # abstain cases (no sources) whose answer passed
    abstain_cases: int = 0
    answerable_lost: int = 0  # answerable cases the threshold cost retrieval (lost_retrieval)


def unusable_thresholds(
    retrievers: Sequence[str], min_scores: Sequence[float]
) -> list[tuple[str, float, str]]:
    """(retriever, min_score, why) for each pair the sweep skips: a threshold above what
    that retriever can score would retrieve nothing at all."""
    return [
        (r, m, problem)
        for r in retrievers
        for m in min_scores
        if (problem := min_score_problem(split_name(r)[0], m)) is not None
    ]


def lost_retrieval(
    golden: GoldenSet,
    unthresholded: Sequence[Sequence[RetrievedChunk]],
    result: RunResult,
) -> int:
    """Answerable cases (with sources) that retrieve fewer of their facts than with no
    minimum score at the same chunking, retriever and k; for a case without facts,
    fewer chunks of its source articles."""
    lost = 0
    for case, before, scored in zip(golden.cases, unthresholded, result.cases, strict=True):
        if case.expects_abstain:
            continue
        if case.facts:
            had = facts_retrieved(case.facts, case.sources, before)
            lost += len(scored.facts_retrieved) < len(had)
        else:
            kept = [c for c in scored.trace.retrieved if c.source in case.sources]
            lost += len(kept) < len([c for c in before if c.source in case.sources])
    return lost


def run_sweep(
    name: str,
    golden: GoldenSet,
    base: PipelineSettings,
    chunk_words: Sequence[int],
    top_ks: Sequence[int],
    retrievers: Sequence[str],
    answerer: Answerer,
    options: ScoringOptions | None = None,
    min_scores: Sequence[float] | None = None,
    backend: Backend | None = None,
) -> list[SweepRow]:
    """Evaluate every combination; each (chunking, retriever) index is built once.

    ``min_scores`` defaults to ``base.min_score``; a threshold a retriever can never
    reach is skipped for that retriever (see ``unusable_thresholds``). ``backend``
    ray: each (chunking, retriever) group is a Ray task (same rows, same order).
    """
    thresholds = list(min_scores) if min_scores else [base.min_score]
    groups = []
    for words in chunk_words:
        for name in retrievers:
            retriever, rerank = split_name(name)  # "hybrid+rerank": hybrid, then a rerank
            usable = [m for m in thresholds if min_score_problem(retriever, m) is None]
            if usable:
                settings = dataclasses.replace(
                    base, chunk_words=words, retriever=retriever, min_score=usable[0], rerank=rerank
                )
                groups.append((settings, tuple(usable)))
    job = SweepJob(name, golden, tuple(top_ks), answerer, options)
    if backend is None or backend.local:
        parts = [sweep_group(job, settings, usable) for settings, usable in groups]
    else:
        from ragrail.backends.ray import gather_everywhere

        parts = gather_everywhere(backend, sweep_group, job, groups)
    return rank_rows([row for part in parts for row in part])


@dataclass(frozen=True)
class SweepJob:
    """What every (chunking, retriever) group of a sweep shares."""

    name: str
    golden: GoldenSet
    top_ks: tuple[int, ...]
    answerer: Answerer
    options: ScoringOptions | None


def sweep_group(
    job: SweepJob, settings: PipelineSettings, thresholds: Sequence[float]
) -> list[SweepRow]:
    """The rows of one (chunking, retriever) index: every k and usable threshold."""
    golden, words, retriever = job.golden, settings.chunk_words or 0, settings.retriever_label
    questions = [c.question for c in golden.cases]
    abstain_cases = sum(1 for c in golden.cases if c.expects_abstain)
    pipeline = Pipeline(settings)
    rows = []
    for k in job.top_ks:
        unthresholded = pipeline.with_settings(top_k=k, min_score=0.0).retrieve(questions)
        opts = dataclasses.replace(job.options or ScoringOptions(), k=k)
        for threshold in thresholds:
            at = pipeline.with_settings(top_k=k, min_score=threshold)
            result = evaluate(job.name, golden, at, job.answerer, options=opts)
            st = result.totals.stats
            rows.append(
                SweepRow(
                    chunking=describe_chunking(words),
                    chunk_words=words,
                    retriever=retriever,
                    top_k=k,
                    n_chunks=len(pipeline.chunks),
                    hit_rate=st["hit_rate"].value,
                    recall=st["recall"].value,
                    answer_pass_rate=st["answer_pass_rate"].value,
                    context_precision=st["context_precision"].value,
                    mrr=st["mrr"].value,
                    prompt_tokens=result.totals.prompt_tokens_mean,
                    min_score=threshold,
                    abstain_passed=sum(1 for c in result.cases if not c.sources and c.answer_pass),
                    abstain_cases=abstain_cases,
                    answerable_lost=lost_retrieval(golden, unthresholded, result),
                )
            )
    return rows


def _key(value: float | None) -> float:
    return -1.0 if value is None else value


def rank_rows(rows: list[SweepRow]) -> list[SweepRow]:
    """Best first: by recall, then hit rate, then answer pass rate, then fewer prompt tokens."""
    return sorted(
        rows,
        key=lambda r: (
            -_key(r.recall),
            -_key(r.hit_rate),
            -_key(r.answer_pass_rate),
            r.prompt_tokens or 0.0,
        ),
    )


def best_per_metric(rows: Sequence[SweepRow]) -> dict[str, SweepRow]:
    """For each metric, the first row (in ranked order) with the highest value."""
    out = {}
    for metric in METRICS:
        candidates = [r for r in rows if getattr(r, metric) is not None]
        if candidates:
            out[metric] = max(candidates, key=lambda r: getattr(r, metric))
    return out


def to_json(rows: Sequence[SweepRow]) -> str:
    return json.dumps([dataclasses.asdict(r) for r in rows], indent=2) + "\n"


def to_csv(rows: Sequence[SweepRow]) -> str:
    buf = io.StringIO()
    fields = [f.name for f in dataclasses.fields(SweepRow)]
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow(dataclasses.asdict(r))
    return buf.getvalue()
