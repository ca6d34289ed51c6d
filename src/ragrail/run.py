"""Score traces into a RunResult. Running and scoring are separate steps, so a
saved run can be re-scored without calling the system again."""

from __future__ import annotations

from collections.abc import Sequence

from ragrail.answerers.base import Answerer
from ragrail.golden import Case, GoldenSet
from ragrail.pipeline import Pipeline
from ragrail.results import CaseResult, RunConfig, RunResult, Totals, Trace
from ragrail.scoring import retrieval as rs
from ragrail.scoring.answers import check_answer


def score_case(case: Case, trace: Trace) -> CaseResult:
    found = rs.facts_retrieved(case.facts, case.sources, trace.retrieved)
    result = CaseResult(
        id=case.id,
        question=case.question,
        sources=list(case.sources),
        facts=list(case.facts),
        tags=list(case.tags),
        facts_retrieved=found,
        retrieval_hit=rs.hit(found, case.facts),
        retrieval_recall=rs.recall(found, case.facts),
        trace=trace,
    )
    if trace.error is None and trace.answer is not None:
        given = {c.id for c in trace.retrieved}
        result.problems = check_answer(case.facts, case.sources, trace.answer, given)
        result.answer_pass = not result.problems
    return result


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def compute_totals(cases: Sequence[CaseResult]) -> Totals:
    """Totals over per-question scores.

    hit rate@k = mean of hit over cases with facts; recall@k = mean of recall
    over the same cases; answer pass rate = passed / answered (cases whose
    call failed are counted in ``n_errors``, not silently dropped); prompt
    tokens = mean over cases that built a prompt.
    """
    with_facts = [c for c in cases if c.retrieval_recall is not None]
    answered = [c for c in cases if c.answer_pass is not None]
    passed = sum(1 for c in answered if c.answer_pass)
    tokens = [c.trace.prompt_tokens for c in cases if c.trace.prompt_tokens is not None]
    return Totals(
        n_cases=len(cases),
        n_retrieval=len(with_facts),
        hit_rate=_mean([1.0 if c.retrieval_hit else 0.0 for c in with_facts]),
        recall=_mean([c.retrieval_recall for c in with_facts if c.retrieval_recall is not None]),
        n_answers=len(answered),
        answers_passed=passed,
        answer_pass_rate=passed / len(answered) if answered else None,
        n_errors=sum(1 for c in cases if c.errored),
        prompt_tokens_mean=_mean([float(t) for t in tokens]),
    )


def score_run(config: RunConfig, cases: Sequence[Case], traces: Sequence[Trace]) -> RunResult:
    results = [score_case(case, trace) for case, trace in zip(cases, traces, strict=True)]
    return RunResult(config=config, totals=compute_totals(results), cases=results)


def rescore(run: RunResult, cases: Sequence[Case]) -> RunResult:
    """Score a saved run's traces again (new checks, fixed labels), calling nothing."""
    by_id = {c.id: c for c in run.cases}
    kept = [case for case in cases if case.id in by_id]
    traces = [by_id[case.id].trace for case in kept]
    return score_run(run.config, kept, traces)


def evaluate(name: str, golden: GoldenSet, pipeline: Pipeline, answerer: Answerer) -> RunResult:
    """Run every golden case through the pipeline and score the traces."""
    cases = golden.cases
    traces = pipeline.run([c.id for c in cases], [c.question for c in cases], answerer)
    s = pipeline.settings
    config = RunConfig(
        name=name,
        chunking=s.chunking,
        chunk_words=s.chunk_words or None,
        top_k=s.top_k,
        min_score=s.min_score,
        retriever=s.retriever,
        answerer=answerer.name,
        answerer_label=answerer.label,
        model=answerer.model,
        n_chunks=len(pipeline.chunks),
        n_cases=len(cases),
    )
    return score_run(config, cases, traces)
