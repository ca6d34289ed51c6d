"""Score one case from its trace: a pure function of (case, trace, options).

The options carry the run's :class:`~ragrail.scoring.memo.ScoringCache`, so what
scoring derives from a text (a chunk's normalised form and terms, an answer's
claims, the article scores of a ranking's shape) is worked out once per run, not
once per case; the values are the same either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ragrail.records.case import Case
from ragrail.records.results import (
    BEHAVIOUR,
    CHECK,
    CITATION,
    CLAIMS,
    FACT,
    ArticleScores,
    CaseResult,
    Claim,
    Trace,
)
from ragrail.scoring import context as ctx
from ragrail.scoring import ranking
from ragrail.scoring import retrieval as rs
from ragrail.scoring.answers import (
    DEFAULT_ABSTAIN_PHRASES,
    abstains,
    answer_correctness,
    check_answer,
    missing_facts,
)
from ragrail.scoring.behaviour import (
    DEFAULT_ESCALATE_PHRASES,
    DEFAULT_REFUSE_PHRASES,
    behaviour_problems,
)
from ragrail.scoring.checks import CheckError, run_check
from ragrail.scoring.claims import check_claims, faithfulness
from ragrail.scoring.memo import ScoringCache
from ragrail.text.matching import normalise

if TYPE_CHECKING:
    from ragrail.records.checks import CheckSpec


@dataclass(frozen=True)
class ScoringOptions:
    k: int = 3  # the cut-off for article-level ranking metrics
    checks: Sequence[CheckSpec] = field(default_factory=tuple)  # golden-set-wide code checks
    require_faithful: bool = False  # an unsupported claim fails the answer
    abstain_phrases: tuple[str, ...] = DEFAULT_ABSTAIN_PHRASES  # [scoring] abstain_phrases
    refuse_phrases: tuple[str, ...] = DEFAULT_REFUSE_PHRASES  # [scoring] refuse_phrases
    escalate_phrases: tuple[str, ...] = DEFAULT_ESCALATE_PHRASES  # [scoring] escalate_phrases
    language: str = "en"  # [pipeline] language: the claim check's stop words and stemming
    # [scoring] require_citation. "auto" is the run's to decide, from every answer
    # (ragrail.scoring.citing); a case scored before it is decided requires one.
    require_citation: bool | Literal["auto"] = True
    # What a user's system's returned sources are read as (ragrail.text.names): the
    # documents' names in ``docs`` (the documents folder), else the golden set's sources;
    # filled in for the run by ragrail.run.with_document_names.
    docs: Path | None = None
    documents: tuple[str, ...] = ()
    # What this run has worked out already (see the module docstring); dataclasses.replace
    # keeps it, so runs made from one options object (a sweep) share it.
    cache: ScoringCache = field(default_factory=ScoringCache, compare=False, repr=False)


def answer_problems(
    case: Case,
    answer: str,
    given: dict[str, str],
    options: ScoringOptions,
    missing: Sequence[str] | None = None,
    escalated: bool | None = None,
    cited: Sequence[str] = (),
) -> tuple[list[str], list[str]]:
    """(all problems, the code-check problems among them) for one answer; ``missing``:
    the case's facts the answer lacks, when the caller has worked them out already;
    ``escalated``: the system's own word that it escalated (``Trace.escalated``);
    ``cited``: the contexts it says the answer used (``Trace.cited``).

    The reply must behave as the case expects (:mod:`ragrail.scoring.behaviour`); a case
    expecting an answer must also hold its facts and cite its sources (``check_answer``)."""
    problems, check_problems, _ = answer_checks(
        case, answer, given, options, missing, escalated, cited
    )
    return problems, check_problems


def answer_checks(
    case: Case,
    answer: str,
    given: dict[str, str],
    options: ScoringOptions,
    missing: Sequence[str] | None = None,
    escalated: bool | None = None,
    cited: Sequence[str] = (),
) -> tuple[list[str], list[str], dict[str, bool]]:
    """:func:`answer_problems`, and whether each check the answer faced held, by name
    (:data:`ragrail.records.results.CHECK_NAMES` says how checks are named): the
    expected behaviour, each fact, the citation, each code check. The diff compares
    them one by one, so a question that already failed can still get worse."""
    expect = case.expected
    problems = behaviour_problems(
        expect,
        answer,
        escalated,
        options.abstain_phrases,
        options.refuse_phrases,
        options.escalate_phrases,
        options.cache,
    )
    held = {BEHAVIOUR: not problems}
    if expect == "answer":
        if missing is None:
            missing = missing_facts(case.facts, answer, options.cache)
        found = check_answer(
            case.facts,
            case.sources,
            answer,
            given,
            options.abstain_phrases,
            missing,
            options.cache,
            cited,
            options.require_citation is not False,
        )
        problems += found
        if case.sources:  # with no sources, check_answer asks for an abstention
            lacking = {str(m) for m in missing}
            for fact in case.facts:
                held[FACT + str(fact)] = str(fact) not in lacking
            # check_answer's problems are one per missing fact, then the citation's
            held[CITATION] = len(found) == len(missing)
    check_problems: list[str] = []
    for c in (*options.checks, *case.checks):
        failed = run_check(c, answer, case)
        name = CHECK + c.label
        if name in held:  # two checks of one label: each its own check, by position
            name = next(
                f"{name} #{i}" for i in range(2, len(held) + 3) if f"{name} #{i}" not in held
            )
        held[name] = not failed
        check_problems += failed
    return problems + check_problems, check_problems, held


def _check_failed(result: CaseResult, reason: str) -> CaseResult:
    """A check that could not judge the answer makes the question an error: no
    answer verdict at all, so it can neither pass nor count as a regression."""
    result.trace = result.trace.model_copy(update={"error": reason})
    result.correctness = result.faithfulness = None
    result.claims = []
    return result


# The article-level measures, as ArticleScores names them.
_ARTICLE_MEASURES = (
    ("precision_at_k", ranking.precision_at_k),
    ("recall_at_k", ranking.recall_at_k),
    ("success_at_k", ranking.success_at_k),
    ("reciprocal_rank", ranking.reciprocal_rank_at_k),
    ("average_precision", ranking.average_precision),
    ("ndcg_at_k", ranking.ndcg_at_k),
)


def article_scores(case: Case, trace: Trace, k: int, cache: ScoringCache) -> ArticleScores:
    """The ranking measures of the retrieved chunks' articles against the case's sources.

    The measures read article names only to tell them apart, so they depend on the
    ranking's shape alone: which ranks hold the same article, and each judged article's
    grade. Every distinct shape is computed once per run, and many questions share one
    (three chunks, the source at rank 2)."""
    ranked = [c.source for c in trace.retrieved]
    graded = case.relevance  # nDCG gains by grade; the other measures count grade >= 1
    ids: dict[str, int] = {}
    shape = (
        k,
        tuple([ids.setdefault(s, len(ids)) for s in ranked]),
        tuple([(ids.setdefault(s, len(ids)), g) for s, g in graded.items()]),
    )
    memo = cache.table("article scores")
    scores = memo.get(shape)
    if scores is None:
        scores = memo.put(shape, {name: f(ranked, graded, k) for name, f in _ARTICLE_MEASURES})
    return ArticleScores(**scores)


def score_case(case: Case, trace: Trace, options: ScoringOptions | None = None) -> CaseResult:
    options = options or ScoringOptions()
    cache = options.cache
    facts, sources, retrieved = case.facts, case.sources, trace.retrieved
    found, flags = rs.match_facts(facts, sources, retrieved, cache.memoised(normalise))
    fields: dict[str, Any] = {
        "id": case.id,
        "question": case.question,
        # validation copies these lists: the result never shares them with the case
        "sources": sources,
        "grades": case.grades,
        "facts": facts,
        "tags": case.tags,
        "expect": case.expect,
        "facts_retrieved": found,
        "retrieval_hit": rs.hit(found, facts),
        "retrieval_recall": rs.recall(found, facts),
        "trace": trace,
    }
    if case.conversation is not None:
        fields["conversation"], fields["turn"] = case.conversation, case.turn
    if trace.stages:  # a retrieval pipeline's steps, each scored as the final contexts
        from ragrail.scoring.stages import score_stages

        fields["stages"] = score_stages(facts, sources, trace.stages, cache.memoised(normalise))
    if facts:
        fields["context_precision"] = ctx.context_precision(flags)
        fields["context_average_precision"] = ctx.context_average_precision(flags)
        fields["reciprocal_rank"] = ctx.reciprocal_rank(flags)
    if sources:
        fields["articles"] = article_scores(case, trace, options.k, cache)
    answer, samples = trace.answer, trace.samples
    errored = trace.error is not None or (samples and any(s.error is not None for s in samples))
    if errored or answer is None:
        return CaseResult(**fields)

    contexts = [c.text for c in retrieved]
    missing = missing_facts(facts, answer, cache)
    fields["correctness"] = answer_correctness(facts, answer, missing)
    expect = case.expected
    if expect == "answer" and not abstains(answer, options.abstain_phrases, cache):
        verdicts = check_claims(answer, contexts, options.language, cache)
        fields["claims"] = [
            Claim(text=v.claim, supported=v.supported, reason=v.reason) for v in verdicts
        ]
        fields["faithfulness"] = faithfulness(verdicts)

    given = {c.id: c.source for c in retrieved}  # a citation's article, by chunk id
    # the first answer and every repeat (trace.all_samples(), without building Samples)
    texts = [answer, *[s.answer or "" for s in samples]] if samples else [answer]
    outcomes = []
    held: dict[str, int] = {}
    for i, text in enumerate(texts):
        try:
            # the first is the answer scored above, and the one the system's flag is about
            if i == 0:
                known, flag, cited = missing, trace.escalated, trace.cited
            else:  # a user's system asked again says its own flag and citations
                known, flag, cited = None, samples[i - 1].escalated, samples[i - 1].cited
            problems, check_problems, checks = answer_checks(
                case, text, given, options, known, flag, cited or ()
            )
        except CheckError as exc:
            return _check_failed(CaseResult(**fields), str(exc))
        # a refusal or a hand-off states no facts to check against the documents
        if expect in ("answer", "abstain"):
            # an abstention states nothing: its claims are (vacuously) all supported, so
            # the count is over every answer, as the other checks' are
            unsupported = []
            if not abstains(text, options.abstain_phrases, cache):
                unsupported = [
                    f'unsupported claim "{v.claim}"'
                    for v in check_claims(text, contexts, options.language, cache)
                    if not v.supported
                ]
            checks[CLAIMS] = not unsupported
            if options.require_faithful:
                problems += unsupported
        outcomes.append((problems, check_problems))
        for name, ok in checks.items():
            held[name] = held.get(name, 0) + ok
    passes = sum(1 for problems, _ in outcomes if not problems)
    fields["checks"] = held
    fields["answer_runs"] = len(outcomes)
    fields["answer_passes"] = passes
    fields["answer_pass"] = passes == len(outcomes)
    # With repeats, show why the first failing answer failed.
    fields["problems"], fields["check_problems"] = next(
        ((p, c) for p, c in outcomes if p), ([], [])
    )
    return CaseResult(**fields)
