"""Scoring production traffic without labels: flag risky answers in the log database.

A logged conversation has no golden facts or sources, so only the scorers that need
none apply. Each gives a flag (:func:`flags_for`):

- ``unfaithful``: a claim of the answer is not supported by the contexts the app
  logged for it (:mod:`ragrail.scoring.claims`, the run's deterministic faithfulness
  check, in the project's ``[pipeline] language``). Not checked when the answer
  abstains or when no context was logged (nothing to check it against);
- ``bad-citation``: the answer cites a chunk id that is not among its logged contexts
  (citations read as :func:`ragrail.scoring.answers.citations` reads them). Not
  checked when no context was logged;
- ``abstained``: the answer is an "I don't know" (``[scoring] abstain_phrases``);
  informational, not a risk by itself;
- ``pii``: an e-mail address, phone number written with its country code, card
  number or IBAN in the answer (the ``no_pii`` check's rules), something redaction at
  ingest did not catch;
- ``check:NAME``: one of the project's ``[[checks]]`` failed. ``python`` checks are
  left out: they are called with the golden case, and a logged conversation has none.

:func:`score_logs` streams the database, writes changed flags back in batches, and
counts each flag per version. The run's :class:`~ragrail.scoring.memo.ScoringCache`
(in the options) makes a context retrieved for many conversations tokenised once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragrail.online.record import Conversation
from ragrail.online.store import LogStore
from ragrail.scoring.answers import abstains, citation_key, citations
from ragrail.scoring.case import ScoringOptions
from ragrail.scoring.checks import PythonCheck, run_check
from ragrail.scoring.claims import check_claims
from ragrail.scoring.pii import find_pii

if TYPE_CHECKING:
    from ragrail.judge.core import Judge
    from ragrail.records.results import CaseResult

UNFAITHFUL = "unfaithful"
BAD_CITATION = "bad-citation"
ABSTAINED = "abstained"
PII = "pii"
JUDGE_UNFAITHFUL = "judge:unfaithful"
PII_KINDS = ["email", "phone", "card", "iban", "id"]
BATCH = 1_000  # conversations whose flags are written back in one transaction
EXAMPLES = 5  # flagged conversation ids kept per flag for the report


def check_flag(label: str) -> str:
    """The flag of a failed check; the database joins flags with commas, so none in it."""
    return "check:" + label.replace(",", ";")


def label_free_checks(checks: Iterable[Any]) -> tuple[Any, ...]:
    """The project's checks that can run on an answer alone (not ``python``)."""
    return tuple(c for c in checks if not isinstance(c, PythonCheck))


def flags_for(conversation: Conversation, options: ScoringOptions) -> tuple[str, ...]:
    """The label-free flags of one logged answer (see the module docstring), in a fixed
    order. ``options.checks`` should hold only :func:`label_free_checks`; any ``python``
    check among them is skipped."""
    answer, cache = conversation.answer, options.cache
    contexts = conversation.contexts
    flags: list[str] = []
    abstained = abstains(answer, options.abstain_phrases, cache)
    if abstained:
        flags.append(ABSTAINED)
    elif contexts:
        texts = [c.text for c in contexts]
        verdicts = check_claims(answer, texts, options.language, cache)
        if any(not v.supported for v in verdicts):
            flags.append(UNFAITHFUL)
    if contexts:
        given = {citation_key(c.id) for c in contexts}
        ids = [c.id for c in contexts]
        if any(cid not in given for cid in citations(answer, cache, ids)):
            flags.append(BAD_CITATION)
    if find_pii(answer, PII_KINDS):
        flags.append(PII)
    for check in options.checks:
        if not isinstance(check, PythonCheck) and run_check(check, answer, None):
            flags.append(check_flag(check.name or check.type))
    return tuple(dict.fromkeys(flags))


def _risky(flags: tuple[str, ...]) -> bool:
    """Whether any flag is a risk (all but the informational "abstained")."""
    return any(f != ABSTAINED for f in flags)


@dataclass
class ScoreReport:
    """What scoring the log found: per version, how many conversations were scored and
    how many carry each flag; the first few flagged conversation ids per flag."""

    scored: dict[str, int] = field(default_factory=dict)
    counts: dict[str, Counter[str]] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)
    changed: int = 0  # conversations whose stored flags changed
    flagged: int = 0  # conversations with a flag other than the informational "abstained"
    judged: int = 0  # conversations the judge read (--judge-sample)
    judge_failed: int = 0  # conversations drawn for the judge whose call failed
    judge_error: str = ""  # the first failure's reason

    def add(self, conversation: Conversation, flags: tuple[str, ...]) -> None:
        version = conversation.version
        self.scored[version] = self.scored.get(version, 0) + 1
        self.counts.setdefault(version, Counter()).update(flags)
        self.flagged += _risky(flags)
        for flag in flags:
            ids = self.examples.setdefault(flag, [])
            if len(ids) < EXAMPLES:
                ids.append(conversation.id)

    @property
    def total(self) -> int:
        return sum(self.scored.values())

    def flags(self) -> list[str]:
        """Every flag seen, sorted."""
        return sorted({f for counts in self.counts.values() for f in counts})


# Gives each conversation with its flags (:func:`flags_for` under the options), in the
# order it was given: here (:func:`flag_each`) or on a Ray cluster
# (:func:`ragrail.backends.ray.log_flags`).
Flagger = Callable[
    [Iterable[Conversation], ScoringOptions], Iterator[tuple[Conversation, tuple[str, ...]]]
]


def flag_each(
    conversations: Iterable[Conversation], options: ScoringOptions
) -> Iterator[tuple[Conversation, tuple[str, ...]]]:
    """The local flagger: each conversation with its flags, worked out here, in order."""
    for conversation in conversations:
        yield conversation, flags_for(conversation, options)


def score_logs(
    store: LogStore,
    options: ScoringOptions,
    version: str | None = None,
    progress: Callable[[int], None] | None = None,
    batch: int = BATCH,
    flagger: Flagger | None = None,
) -> ScoreReport:
    """Flag every stored conversation (of one ``version``) and write the flags back.

    Streams: memory holds one batch of changed flags, not the log. A conversation's
    previous flags are replaced, so scoring again after a config change is right, and
    a conversation whose flags did not change is not written. ``progress`` is called
    with the count scored so far after each batch. ``flagger`` works the flags out
    (default :func:`flag_each`, here); whichever does, they are counted and written
    here, in the database's order, so the report and the stored flags are the same.
    """
    options = ScoringOptions(
        k=options.k,
        checks=label_free_checks(options.checks),
        abstain_phrases=options.abstain_phrases,
        language=options.language,
        cache=options.cache,
    )
    report = ScoreReport()
    pending: dict[str, tuple[str, ...]] = {}
    judge_flags = (JUDGE_UNFAITHFUL,)
    for conversation, flags in (flagger or flag_each)(store.conversations(version), options):
        # the judge's flag is kept: only `--judge-sample` sets or clears it
        flags += tuple(f for f in conversation.flags if f in judge_flags)
        report.add(conversation, flags)
        if flags != conversation.flags:
            pending[conversation.id] = flags
        if len(pending) >= batch:
            _flush(store, pending, report)
        if progress is not None and report.total % batch == 0:
            progress(report.total)
    _flush(store, pending, report)
    return report


def _flush(store: LogStore, pending: dict[str, tuple[str, ...]], report: ScoreReport) -> None:
    if pending:
        store.set_flags(pending)
        report.changed += len(pending)
        pending.clear()


def judge_sample(
    store: LogStore,
    judge: Judge,
    n: int,
    seed: int,
    version: str | None = None,
    report: ScoreReport | None = None,
) -> ScoreReport:
    """Have the judge check the faithfulness of ``n`` conversations drawn at random
    (reservoir sampling with ``seed``) among those it can judge: answered, not
    abstaining, with logged contexts. One with a judged faithfulness below 1 gets
    ``judge:unfaithful``; one the judge found faithful loses it; a judge error leaves
    the flags as they were and is counted in ``judge_failed``. ``report`` (a new one by
    default) is :func:`score_logs`'s, whose counts hold the stored flags: they are moved by
    each change the judge makes."""
    import random

    from ragrail.judge.claims import apply_claims
    from ragrail.judge.replies import ClaimsReply, checker

    report = report if report is not None else ScoreReport()
    rng = random.Random(seed)
    pool: list[Conversation] = []
    seen = 0
    phrases = judge.abstain_phrases or ScoringOptions().abstain_phrases
    for c in store.conversations(version):
        if not c.contexts or not c.answer.strip() or abstains(c.answer, phrases):
            continue
        seen += 1
        if len(pool) < n:
            pool.append(c)
        elif (j := rng.randrange(seen)) < n:
            pool[j] = c
    cases = [_as_case(c) for c in pool]
    repeats = judge.config.repeats
    prompts = [(judge.claims_prompt(case), r) for case in cases for r in range(repeats)]
    results = judge.call(prompts, checker(ClaimsReply))
    changed: dict[str, tuple[str, ...]] = {}
    for i, (c, case) in enumerate(zip(pool, cases, strict=True)):
        apply_claims(case, results[i * repeats : (i + 1) * repeats])
        verdict = case.judge
        if verdict is not None and verdict.errors:
            report.judge_failed += 1
            report.judge_error = report.judge_error or verdict.errors[0]
            continue
        if verdict is None or verdict.faithfulness is None:
            continue
        report.judged += 1
        before = (store.get(c.id) or c).flags
        flags = tuple(f for f in before if f != JUDGE_UNFAITHFUL)
        if verdict.faithfulness < 1.0:
            flags += (JUDGE_UNFAITHFUL,)
            ids = report.examples.setdefault(JUDGE_UNFAITHFUL, [])
            if len(ids) < EXAMPLES and c.id not in ids:
                ids.append(c.id)
        # the report counted the stored flags: count the change
        delta = (JUDGE_UNFAITHFUL in flags) - (JUDGE_UNFAITHFUL in before)
        if delta:
            counts = report.counts.setdefault(c.version, Counter())
            counts[JUDGE_UNFAITHFUL] += delta
            report.flagged += _risky(flags) - _risky(before)
            changed[c.id] = flags
    _flush(store, changed, report)
    return report


def _as_case(c: Conversation) -> CaseResult:  # ready for the judge
    from ragrail.records.results import CaseResult, JudgeResult, RetrievedChunk, Trace

    retrieved = [
        RetrievedChunk(id=x.id, source=x.source, rank=i, score=0.0, text=x.text)
        for i, x in enumerate(c.contexts, start=1)
    ]
    case = CaseResult(
        id=c.id,
        question=c.question,
        sources=[],
        facts=[],
        trace=Trace(case_id=c.id, retrieved=retrieved, answer=c.answer),
    )
    case.judge = JudgeResult()
    return case
