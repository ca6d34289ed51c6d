"""Compare a run with a baseline, question by question.

A regression (a ``WORSE`` line) is decided per question, never by totals:
its retrieval recall dropped, or its answer passed in the baseline and fails
now. ``fixed`` is the reverse. A question that passed in the baseline and now
errors is an ``ERROR`` line: an error is never a silent gap, and the run it
belongs to has no clean verdict. Totals are reported beside, for reading only.
Answers are compared only when both runs used the same answerer and model,
since a stand-in's answers say nothing about a real model's and vice versa.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeAlias

from ragrail.gcpause import paused_gc
from ragrail.records.results import CaseResult, RunResult
from ragrail.stats import McNemar, mcnemar_exact
from ragrail.store.baseline.records import rounded

if TYPE_CHECKING:
    from ragrail.judge.correct import CorrectedChange
    from ragrail.store.baseline import Baseline, BaselineCase

Kind = Literal["fixed", "WORSE", "ERROR", "lower"]
# What a run is compared with: a whole saved run, or a compact baseline (ragrail.store.baseline);
# of a baseline's cases compare reads only the verdicts both kinds have.
BaselineRun: TypeAlias = "RunResult | Baseline"
BaselineCaseLike: TypeAlias = "CaseResult | BaselineCase"


@dataclass(frozen=True)
class Change:
    case_id: str
    kind: Kind
    aspect: Literal["retrieval", "answer", "error", "score"]
    detail: str

    def line(self) -> str:
        return f"{self.kind}:  {self.case_id}: {self.detail}"


@dataclass
class Diff:
    baseline: BaselineRun
    run: RunResult
    answers_compared: bool
    answers_note: str | None
    config_changes: list[str]
    changes: list[Change] = field(default_factory=list)
    new_cases: list[str] = field(default_factory=list)
    removed_cases: list[str] = field(default_factory=list)
    errored_cases: list[str] = field(default_factory=list)  # every question that errored now
    judge_errored_cases: list[str] = field(default_factory=list)
    answer_flips: McNemar | None = None  # paired test on per-question pass/fail flips
    # judged totals corrected by human labels, baseline against now (ragrail.judge.correct)
    judge_changes: list[CorrectedChange] = field(default_factory=list)
    judge_notes: list[str] = field(default_factory=list)
    # the graded scores' means over the questions answered in both (GRADED), before and
    # now: shown beside the pass rate, never a verdict
    graded: dict[str, tuple[float, float]] = field(default_factory=dict)

    @property
    def worse(self) -> list[Change]:
        return [c for c in self.changes if c.kind == "WORSE"]

    @property
    def fixed(self) -> list[Change]:
        return [c for c in self.changes if c.kind == "fixed"]

    @property
    def lower(self) -> list[Change]:
        """``lower`` lines: a graded score (correctness, faithfulness) of a question that
        dropped while none of its checks newly failed; shown, never a regression."""
        return [c for c in self.changes if c.kind == "lower"]

    @property
    def errors(self) -> list[Change]:
        """ERROR lines: questions that passed in the baseline and error now."""
        return [c for c in self.changes if c.kind == "ERROR"]

    @property
    def regressed(self) -> bool:
        """The regression decision (exit 1): some question got worse. Errors are apart."""
        return bool(self.worse)

    @property
    def has_errors(self) -> bool:
        """Some question, or the judge on some question, failed: no clean verdict (exit 3)."""
        return bool(self.errored_cases or self.judge_errored_cases)

    def summary(self) -> str:
        """One phrase for titles and verdict lines: errors first, then regressions;
        ``no regressions`` only for a run with neither."""
        n_worse = len({c.case_id for c in self.worse})
        parts = error_phrases(
            len(self.errored_cases), len(self.errors), len(self.judge_errored_cases)
        )
        if n_worse:
            parts.append(f"{_n(n_worse, 'question')} got worse")
        return "; ".join(parts) or "no regressions"


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def error_phrases(n_errored: int, n_baseline_passing: int = 0, n_judge: int = 0) -> list[str]:
    """``["1 question passed in the baseline and now errors", "2 other questions
    failed to run", "the judge failed on 1 question"]``, leaving out zero counts."""
    parts = []
    if n_baseline_passing:
        verb = "errors" if n_baseline_passing == 1 else "error"
        parts.append(f"{_n(n_baseline_passing, 'question')} passed in the baseline and now {verb}")
    others = n_errored - n_baseline_passing
    if others:
        parts.append(f"{_n(others, 'other question' if parts else 'question')} failed to run")
    if n_judge:
        parts.append(f"the judge failed on {_n(n_judge, 'question')}")
    return parts


def flips_text(flips: McNemar) -> str:
    """The answer-flip test as one phrase that says what it counts: ``answer verdicts
    that flipped: 1 fail -> pass, 3 pass -> fail (McNemar exact test p=0.62, not
    significant)``. It counts whole-answer verdicts only; a WORSE line for a lost check
    of an answer that already failed is not a flip."""
    verdict = "significant" if flips.significant else "not significant"
    return (
        f"answer verdicts that flipped: {flips.better} fail -> pass, {flips.worse} pass -> fail "
        f"(McNemar exact test p={_p(flips.p_value)}, {verdict})"
    )


def fails(case: BaselineCaseLike) -> bool:
    """A question fails when its answer fails or retrieval missed one of its facts (what
    a JUnit report and ``pytest --ragrail`` fail it for)."""
    recall = case.retrieval_recall
    return case.answer_pass is False or (recall is not None and recall < 1)


def known_failures(diff: Diff) -> dict[str, str]:
    """The questions that fail now as they failed in the baseline, by id, each with why
    it fails: no WORSE or ERROR line (nothing it held is lost), it did not error, and
    the baseline's verdict is comparable (an answer failure needs the same answerer).
    CI reports them as expected failures, so a gate can hold an app that is not at 100%
    (``--strict`` turns this off)."""
    base = _by_id(diff.baseline)
    flagged = {c.case_id for c in diff.changes if c.kind in ("WORSE", "ERROR")}
    out = {}
    for new in diff.run.cases:
        if new.id in flagged or new.errored or not fails(new):
            continue
        old = base.get(new.id)
        if old is None or old.errored or not fails(old):
            continue
        answer_fails = new.answer_pass is False
        if answer_fails and not (diff.answers_compared and old.answer_pass is False):
            continue
        missed, missed_before = (
            c.retrieval_recall is not None and c.retrieval_recall < 1 for c in (new, old)
        )
        if missed and not missed_before:
            continue
        out[new.id] = new.cause or ("answer fails" if answer_fails else "retrieval miss")
    return out


def run_summary(run: RunResult) -> str:
    """The same phrase for a run without a baseline: its errors, or nothing."""
    errored = sum(1 for c in run.cases if c.errored)
    judged = sum(1 for c in run.cases if judge_failed(c))
    return "; ".join(error_phrases(errored, 0, judged))


def judge_failed(case: CaseResult) -> bool:
    return case.judge is not None and bool(case.judge.errors)


def first_error(case: CaseResult) -> str:
    """The reason of the first failed call of a question ("" when none failed)."""
    return next((s.error for s in case.trace.all_samples() if s.error), "")


@functools.lru_cache(maxsize=1 << 12)  # a diff of 100,000 questions prints few distinct rates
def pct(value: float | None) -> str:
    """A rate to the whole percent (``reports.judged.pct_tenths`` keeps one decimal)."""
    return "-" if value is None else f"{round(value * 100)}%"


def config_changes(before: BaselineRun, after: RunResult) -> list[str]:
    """Human-readable list of settings that differ, e.g. ``top_k 3 -> 1``: the run's, each
    setting a user's system reported (``-`` where one run has none), and whether answers
    had to cite."""
    a, b = before.config, after.config
    out = []
    for name in ("chunking", "top_k", "min_score", "retriever", "answerer", "model"):
        old, new = getattr(a, name), getattr(b, name)
        if old != new:
            out.append(f"{name} {old} -> {new}")
    for name in sorted(a.settings.keys() | b.settings.keys()):
        old, new = a.settings.get(name, "-"), b.settings.get(name, "-")
        line = f"{name} {old} -> {new}"
        if old != new and line not in out:  # its own top_k may be the run's
            out.append(line)
    need = {True: "required", False: "not required"}
    old_need, new_need = a.citations == "required", b.citations == "required"
    if old_need != new_need:
        out.append(f"citations {need[old_need]} -> {need[new_need]}")
    return out


def _retrieval_change(old: BaselineCaseLike, new: CaseResult, errored: bool) -> Change | None:
    """WORSE when the recall dropped (as a baseline keeps it, to six digits), fixed when it
    rose; ``errored``: whether ``new`` errored."""
    if old.retrieval_recall is None or new.retrieval_recall is None:
        return None
    if new.retrieval_recall == old.retrieval_recall:
        return None
    # both sides as a baseline file keeps them (six significant digits): a saved 2/3
    # is the same recall as this run's 2/3, and a last-bit difference is no change
    old_recall, new_recall = _rounded(old.retrieval_recall), _rounded(new.retrieval_recall)
    if new_recall == old_recall:
        return None
    if errored and not new.trace.retrieved:
        return None  # the call failed before retrieval: its recall is unknown, not 0
    kind: Kind = "WORSE" if new_recall < old_recall else "fixed"
    detail = f"retrieval {pct(old.retrieval_recall)} -> {pct(new.retrieval_recall)}"
    return Change(new.id, kind, "retrieval", detail)


SIGNIFICANCE = 0.05


def fisher_one_sided(better_pass: int, better_runs: int, worse_pass: int, worse_runs: int) -> float:
    """p-value of a one-sided Fisher exact test that the first pass rate exceeds the second.

    Table [[better_pass, better_fail], [worse_pass, worse_fail]], alternative "greater".
    """
    from scipy.stats import fisher_exact

    table = [[better_pass, better_runs - better_pass], [worse_pass, worse_runs - worse_pass]]
    return float(fisher_exact(table, alternative="greater").pvalue)


def _rounded(value: float) -> float:
    try:
        return rounded(value)
    except ValueError:  # NaN or infinity: never in a loaded run, compared as it is
        return value


def _answer_change(old: BaselineCaseLike, new: CaseResult) -> Change | None:
    """Single answers: pass -> fail is WORSE, fail -> pass is fixed.

    Repeated answers (either side sampled more than once) are samples, so a
    drop in pass rate is WORSE only when it is unlikely to be noise: a
    one-sided Fisher exact test on the pass/fail counts gives p < 0.05, or the
    case always passed before and never passes now. ``fixed`` mirrors it.
    """
    if not old.answer_runs or not new.answer_runs:
        return None
    a, n = (old.answer_passes, old.answer_runs), (new.answer_passes, new.answer_runs)
    old_rate, new_rate = a[0] / a[1], n[0] / n[1]
    if old_rate == new_rate:
        return None
    if a[1] == 1 and n[1] == 1:
        if new.answer_pass:
            return Change(new.id, "fixed", "answer", "answer now passes")
        return Change(new.id, "WORSE", "answer", f"answer now fails, {'; '.join(new.problems)}")
    rates = f"answer pass rate {a[0]}/{a[1]} -> {n[0]}/{n[1]}"
    if new_rate < old_rate:
        p = fisher_one_sided(*a, *n)
        if p < SIGNIFICANCE or (a[0] == a[1] and n[0] == 0):
            return Change(
                new.id, "WORSE", "answer", f"{rates} (p={p:.3f}), {'; '.join(new.problems)}"
            )
        return None
    p = fisher_one_sided(*n, *a)
    if p < SIGNIFICANCE or (a[0] == 0 and n[0] == n[1]):
        return Change(new.id, "fixed", "answer", f"{rates} (p={p:.3f})")
    return None


def _held(case: BaselineCaseLike) -> dict[str, int] | None:
    """The checks a baseline question held, by name, in how many of its answers; None
    for a baseline file from before they were kept (version 2)."""
    if isinstance(case, CaseResult):
        return case.held_checks() if case.judge is not None else case.checks
    return case.checks


def _missed(case: BaselineCaseLike) -> list[str] | None:
    """The labels of the facts retrieval missed; None when a baseline does not say."""
    if isinstance(case, CaseResult):
        if len(case.facts_retrieved) == len(case.facts):
            return []
        found = set(case.facts_retrieved)
        return [str(f) for f in case.facts if f not in found]
    return case.missed


def _lost(old_passes: int, old_runs: int, new_passes: int, new_runs: int) -> float | None:
    """Whether a check that held got lost: None when not, else the p-value that says it
    (1.0 for a single answer each side). With repeats, as for a question's answers
    (:func:`_answer_change`): a one-sided Fisher test at 0.05, or it always held
    before and never holds now."""
    if old_runs == 1 and new_runs == 1:
        return 1.0 if old_passes == 1 and new_passes == 0 else None
    if new_passes * old_runs >= old_passes * new_runs:
        return None
    p = fisher_one_sided(old_passes, old_runs, new_passes, new_runs)
    if p < SIGNIFICANCE or (old_passes == old_runs and new_passes == 0):
        return p
    return None


def _check_phrase(name: str, p: float | None) -> str:
    """What a lost check says: ``fact "npm ci" no longer in the answer``."""
    from ragrail.records.results import BEHAVIOUR, CHECK, CITATION, CLAIMS, FACT, JUDGE

    if name.startswith(FACT):
        text = f'fact "{name[len(FACT) :]}" no longer in the answer'
    elif name == CITATION:
        text = "citation no longer valid"
    elif name == BEHAVIOUR:
        text = "no longer behaves as expected"
    elif name == CLAIMS:
        text = "claims no longer all supported by the contexts"
    elif name.startswith(CHECK):
        text = f"check '{name[len(CHECK) :]}' no longer passes"
    elif name.startswith(JUDGE):
        text = f"judge criterion '{name[len(JUDGE) :]}' no longer passes"
    else:
        text = f"{name} no longer holds"
    return text if p is None or p == 1.0 else f"{text} (Fisher exact p={_p(p)})"


def _p(p: float) -> str:
    """A p-value as it is printed: two decimals, three below 0.01, never ``0.00``."""
    return f"{p:.2f}" if p >= 0.01 else f"{p:.3f}" if p >= 0.001 else "<0.001"


def _check_changes(
    old: BaselineCaseLike, new: CaseResult, old_runs: int, new_runs: int
) -> Change | None:
    """WORSE when a check the question held in the baseline fails now (see
    :func:`_lost`), one line naming every lost check; None when none was lost or the
    baseline does not keep its checks. Judge criteria count once per question."""
    from ragrail.records.results import JUDGE

    before = _held(old)
    after = new.held_checks() if new.judge is not None else new.checks
    if not before or before == after:
        return None
    lost = []
    for name, passes in after.items():
        was = before.get(name)
        if was is None:
            continue
        runs = (1, 1) if name.startswith(JUDGE) else (old_runs, new_runs)
        p = _lost(was, runs[0], passes, runs[1])
        if p is not None:
            lost.append(_check_phrase(name, p))
    if not lost:
        return None
    return Change(new.id, "WORSE", "answer", "; ".join(lost))


def _facts_lost(old: BaselineCaseLike, new: CaseResult) -> Change | None:
    """WORSE when a fact retrieval found in the baseline is missed now though the recall
    did not drop (another fact came back in its place)."""
    before, after = _missed(old), _missed(new)
    if before is None or after is None or after == before:
        return None
    labels = {str(f) for f in new.facts}
    lost = [f for f in after if f not in before and f in labels]
    if not lost:
        return None
    text = "; ".join(f'fact "{f}" no longer retrieved' for f in dict.fromkeys(lost))
    return Change(new.id, "WORSE", "retrieval", text)


# The graded scores a "lower" line shows, as a baseline keeps them.
GRADED = ("correctness", "faithfulness")


def _graded_drop(old: BaselineCaseLike, new: CaseResult) -> Change | None:
    """A ``lower`` line when correctness or faithfulness dropped (six digits)."""
    parts = []
    for name in GRADED:
        was = _metric(old, name)
        now = getattr(new, name)
        if was is not None and now is not None and _rounded(now) < was:
            parts.append(f"{name} {pct(was)} -> {pct(now)}")
    if not parts:
        return None
    return Change(new.id, "lower", "score", ", ".join(parts))


def _metric(case: BaselineCaseLike, name: str) -> float | None:
    if isinstance(case, CaseResult):
        value = getattr(case, name)
        return None if value is None else _rounded(value)
    return case.metrics.get(name)


def graded_means(
    run: RunResult, base: dict[str, BaselineCaseLike]
) -> dict[str, tuple[float, float]]:
    """Each graded score's mean over the questions scored for it in both runs, before
    and now: ``mean_i old_i`` and ``mean_i new_i`` over the same i, so a question
    added, removed or errored on one side never moves it."""
    out = {}
    for name in GRADED:
        pairs = [
            (was, now)
            for new in run.cases
            if (now := getattr(new, name)) is not None
            and (old := base.get(new.id)) is not None
            and (was := _metric(old, name)) is not None
        ]
        if pairs:
            out[name] = (
                sum(p[0] for p in pairs) / len(pairs),
                sum(p[1] for p in pairs) / len(pairs),
            )
    return out


def _error_change(old: BaselineCaseLike, new: CaseResult, answers_compared: bool) -> Change | None:
    """ERROR when a question that passed in the baseline (retrieval hit, or its answer
    when answers are compared) errors now."""
    if not new.errored or old.errored:
        return None
    passed = old.retrieval_hit is True or (answers_compared and old.answer_pass is True)
    if not passed:
        return None
    return Change(
        new.id, "ERROR", "error", f"passed in the baseline, now errors: {first_error(new)}"
    )


def _by_id(run: BaselineRun) -> dict[str, BaselineCaseLike]:
    """Cases by id, the first of any duplicate winning (as ``RunResult.case`` does)."""
    out: dict[str, BaselineCaseLike] = {}
    for c in run.cases:
        out.setdefault(c.id, c)
    return out


def compare(run: RunResult, baseline: BaselineRun) -> Diff:
    """The per-question diff of ``run`` against ``baseline`` (a whole saved run or a
    compact baseline from :func:`ragrail.store.baseline.load_baseline`).

    One pass over the run's questions, each looked up in the baseline by id; a question
    whose recall and answer counts are unchanged and that did not error costs a few
    comparisons, and makes no object.
    """
    same_answerer = (run.config.answerer, run.config.model) == (
        baseline.config.answerer,
        baseline.config.model,
    )
    note = None
    if not same_answerer:
        note = (
            f"answers not compared: the baseline's answers come from "
            f"{_who(baseline)}, this run's from {_who(run)}; retrieval is still compared"
        )
    diff = Diff(
        baseline=baseline,
        run=run,
        answers_compared=same_answerer,
        answers_note=note,
        config_changes=config_changes(baseline, run),
    )
    with paused_gc():  # a diff's many small objects hold no cycles: see ragrail.gcpause
        _diff_cases(diff, base=_by_id(baseline))
    if run.judge_corrected and getattr(baseline, "judge_corrected", None):
        from ragrail.judge.correct import compare_corrected

        diff.judge_changes, diff.judge_notes = compare_corrected(baseline, run)
    return diff


def _diff_cases(diff: Diff, base: dict[str, BaselineCaseLike]) -> None:
    """Fill ``diff``'s lists of questions and lines, and its answer flip test."""
    run, same_answerer = diff.run, diff.answers_compared
    lines: dict[Kind, list[Change]] = {"fixed": [], "lower": [], "WORSE": [], "ERROR": []}
    worse = better = 0  # questions answered in both whose verdict flipped
    for new in run.cases:
        errored = new.errored
        if errored:
            diff.errored_cases.append(new.id)
        if new.judge is not None and new.judge.errors:
            diff.judge_errored_cases.append(new.id)
        old = base.get(new.id)
        if old is None:
            diff.new_cases.append(new.id)
            continue
        retrieval = None
        if new.retrieval_recall != old.retrieval_recall:
            retrieval = _add(lines, _retrieval_change(old, new, errored))
        if errored:
            _add(lines, _error_change(old, new, same_answerer))
        elif retrieval is None or retrieval.kind != "WORSE":
            _add(lines, _facts_lost(old, new))
        if same_answerer and new.answer_runs and old.answer_runs:
            answer = None
            if new.answer_passes != old.answer_passes or new.answer_runs != old.answer_runs:
                answer = _add(lines, _answer_change(old, new))
            if answer is None or answer.kind != "WORSE":
                # the verdict did not newly fail: what it can still lose is a check
                answer = _add(lines, _check_changes(old, new, old.answer_runs, new.answer_runs))
            if answer is None:
                _add(lines, _graded_drop(old, new))
            if old.answer_pass and not new.answer_pass:
                worse += 1
            elif new.answer_pass and not old.answer_pass:
                better += 1
    run_ids = {c.id for c in run.cases}
    diff.removed_cases = [c.id for c in diff.baseline.cases if c.id not in run_ids]
    if same_answerer:
        diff.answer_flips = mcnemar_exact(worse, better)
        diff.graded = graded_means(run, base)
    # fixed lines first, then lower scores, then WORSE, then ERROR, each in golden-set
    # order: the lines a reviewer must act on end up last, next to the exit status.
    diff.changes = lines["fixed"] + lines["lower"] + lines["WORSE"] + lines["ERROR"]


def _add(lines: dict[Kind, list[Change]], change: Change | None) -> Change | None:
    if change is not None:
        lines[change.kind].append(change)
    return change


def answer_flip_test(
    run: RunResult, baseline: BaselineRun, base: dict[str, BaselineCaseLike] | None = None
) -> McNemar:
    """McNemar's exact test on the questions answered in both runs whose verdict flipped
    (a question passes when all its answers pass). ``base``: the baseline's cases by id."""
    base = _by_id(baseline) if base is None else base
    worse = better = 0
    for new in run.cases:
        old = base.get(new.id)
        if old is None or not old.answer_runs or not new.answer_runs:
            continue
        if old.answer_pass and not new.answer_pass:
            worse += 1
        elif new.answer_pass and not old.answer_pass:
            better += 1
    return mcnemar_exact(worse, better)


def _who(run: BaselineRun) -> str:
    c = run.config
    return f"{c.answerer} {c.model}" if c.model else c.answerer
