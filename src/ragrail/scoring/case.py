"""Score one case from its trace: a pure function of (case, trace, options)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragrail.golden import Case
from ragrail.results import ArticleScores, CaseResult, Claim, Trace
from ragrail.scoring import context as ctx
from ragrail.scoring import ranking
from ragrail.scoring import retrieval as rs
from ragrail.scoring.answers import (
    DEFAULT_ABSTAIN_PHRASES,
    abstains,
    answer_correctness,
    check_answer,
)
from ragrail.scoring.checks import CheckError, run_check
from ragrail.scoring.claims import check_claims, faithfulness


@dataclass(frozen=True)
class ScoringOptions:
    k: int = 3  # the cut-off for article-level ranking metrics
    checks: Sequence[Any] = field(default_factory=tuple)  # golden-set-wide code checks
    require_faithful: bool = False  # an unsupported claim fails the answer
    abstain_phrases: tuple[str, ...] = DEFAULT_ABSTAIN_PHRASES  # [scoring] abstain_phrases
    language: str = "en"  # [pipeline] language: the claim check's stop words and stemming


def answer_problems(
    case: Case, answer: str, given: dict[str, str], options: ScoringOptions
) -> tuple[list[str], list[str]]:
    """(all problems, the code-check problems among them) for one answer."""
    problems = check_answer(case.facts, case.sources, answer, given, options.abstain_phrases)
    check_problems = [
        p for c in (*options.checks, *case.checks) for p in run_check(c, answer, case)
    ]
    return problems + check_problems, check_problems


def _check_failed(result: CaseResult, reason: str) -> CaseResult:
    """A check that could not judge the answer makes the question an error: no
    answer verdict at all, so it can neither pass nor count as a regression."""
    result.trace = result.trace.model_copy(update={"error": reason})
    result.correctness = result.faithfulness = None
    result.claims = []
    return result


def score_case(case: Case, trace: Trace, options: ScoringOptions | None = None) -> CaseResult:
    options = options or ScoringOptions()
    found = rs.facts_retrieved(case.facts, case.sources, trace.retrieved)
    result = CaseResult(
        id=case.id,
        question=case.question,
        sources=list(case.sources),
        grades=dict(case.grades),
        facts=list(case.facts),
        tags=list(case.tags),
        facts_retrieved=found,
        retrieval_hit=rs.hit(found, case.facts),
        retrieval_recall=rs.recall(found, case.facts),
        trace=trace,
    )
    if case.facts:
        flags = ctx.relevant_flags(case.facts, case.sources, trace.retrieved)
        result.context_precision = ctx.context_precision(flags)
        result.context_average_precision = ctx.context_average_precision(flags)
        result.reciprocal_rank = ctx.reciprocal_rank(flags)
    if case.sources:
        ranked = [c.source for c in trace.retrieved]
        graded = case.relevance  # nDCG gains by grade; the other measures count grade >= 1
        result.articles = ArticleScores(
            precision_at_k=ranking.precision_at_k(ranked, graded, options.k),
            recall_at_k=ranking.recall_at_k(ranked, graded, options.k),
            success_at_k=ranking.success_at_k(ranked, graded, options.k),
            reciprocal_rank=ranking.reciprocal_rank_at_k(ranked, graded, options.k),
            average_precision=ranking.average_precision(ranked, graded, options.k),
            ndcg_at_k=ranking.ndcg_at_k(ranked, graded, options.k),
        )
    if result.errored or trace.answer is None:
        return result

    answer = trace.answer
    result.correctness = answer_correctness(case.facts, answer)
    if not case.expects_abstain and not abstains(answer, options.abstain_phrases):
        verdicts = check_claims(answer, [c.text for c in trace.retrieved], options.language)
        result.claims = [
            Claim(text=v.claim, supported=v.supported, reason=v.reason) for v in verdicts
        ]
        result.faithfulness = faithfulness(verdicts)

    given = {c.id: c.source for c in trace.retrieved}  # a citation's article, by chunk id
    contexts = [c.text for c in trace.retrieved]
    outcomes = []
    for sample in trace.all_samples():
        text = sample.answer or ""
        try:
            problems, check_problems = answer_problems(case, text, given, options)
        except CheckError as exc:
            return _check_failed(result, str(exc))
        if options.require_faithful and not abstains(text, options.abstain_phrases):
            problems += [
                f'unsupported claim "{v.claim}"'
                for v in check_claims(text, contexts, options.language)
                if not v.supported
            ]
        outcomes.append((problems, check_problems))
    result.answer_runs = len(outcomes)
    result.answer_passes = sum(1 for problems, _ in outcomes if not problems)
    result.answer_pass = result.answer_passes == result.answer_runs
    # With repeats, show why the first failing answer failed.
    result.problems, result.check_problems = next(((p, c) for p, c in outcomes if p), ([], []))
    return result
