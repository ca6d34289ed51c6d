"""Compare a run with a baseline, question by question.

A regression (a ``WORSE`` line) is decided per question, never by totals:
its retrieval recall dropped, or its answer passed in the baseline and fails
now (or lost a check it held: ``ragrail.diff.checks``). ``fixed`` is the reverse. A
question whose facts were edited since the baseline is compared fact by fact
(``ragrail.diff.edits``). A question that passed in the baseline and now
errors is an ``ERROR`` line: an error is never a silent gap, and the run it
belongs to has no clean verdict. Totals are reported beside, for reading only.
Answers are compared only when both runs used the same answerer and model,
since a stand-in's answers say nothing about a real model's and vice versa.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ragrail.diff.checks import (
    GRADED,
    add_graded,
    check_changes,
    facts_lost,
    facts_no_longer_retrieved,
    graded_drop,
    graded_means,
    judged_checks,
    question_tests,
    unnamed_losses,
)
from ragrail.diff.edits import edited
from ragrail.diff.lines import (
    BaselineCaseLike,
    BaselineRun,
    Change,
    Kind,
    answer_flip_test,
    by_id,
    config_changes,
    fisher_one_sided,
    pct,
    rounded_score,
)
from ragrail.diff.noise import SetTest, Test, judge_tests, noise_changes, varies
from ragrail.diff.phrases import (
    counted,
    error_phrases,
    fails,
    first_error,
    flips_text,
    judge_failed,
    run_summary,
)
from ragrail.diff.stages import with_stage_changes
from ragrail.gcpause import paused_gc
from ragrail.records.results import CaseResult, RunResult
from ragrail.stats import McNemar, mcnemar_exact

if TYPE_CHECKING:
    from ragrail.judge.correct import CorrectedChange

__all__ = [
    "GRADED",
    "BaselineCaseLike",
    "BaselineRun",
    "Change",
    "Diff",
    "Kind",
    "answer_flip_test",
    "compare",
    "config_changes",
    "error_phrases",
    "fails",
    "first_error",
    "fisher_one_sided",
    "flips_text",
    "judge_failed",
    "known_failures",
    "pct",
    "run_summary",
]


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
    # in both, with facts added, renamed or removed since: compared fact by fact (diff.edits)
    edited_cases: list[str] = field(default_factory=list)
    errored_cases: list[str] = field(default_factory=list)  # every question that errored now
    judge_errored_cases: list[str] = field(default_factory=list)
    answer_flips: McNemar | None = None  # paired test on per-question pass/fail flips
    # answers repeated (either run): the verdict is noise-aware (ragrail.diff.noise); the
    # set-wide test, and how many per-question tests could reach significance
    set_test: SetTest | None = None
    repeated: bool = False
    family: int = 0
    n_tests: int = 0
    floor: float = 1.0  # the smallest p a drop's table allowed (said when the family is empty)
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
    def noise(self) -> list[Change]:
        """``noise`` lines: a repeated question's pass rate or check that moved within
        noise (``ragrail.diff.noise``); shown, never a regression."""
        return [c for c in self.changes if c.kind == "noise"]

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
            parts.append(f"{counted(n_worse, 'question')} got worse")
        return "; ".join(parts) or "no regressions"


def known_failures(diff: Diff) -> dict[str, str]:
    """Every question that fails now with no WORSE or ERROR line, by id, with why that is
    no regression: it failed in the baseline too ("known failure"), it is new, its call
    failed in the baseline, its answers are not compared (another answerer or model), or
    its facts were edited since the baseline (``ragrail.diff.edits``), or its repeated
    answers moved within noise. CI reports them as expected failures, so the reports agree
    with the exit code and a gate holds an app that is not at 100% (``--strict`` turns
    this off)."""
    base = by_id(diff.baseline)
    flagged = {c.case_id for c in diff.changes if c.kind in ("WORSE", "ERROR")}
    edits = set(diff.edited_cases)
    out = {}
    for new in diff.run.cases:
        if new.id in flagged or new.errored or not fails(new):
            continue
        cause = new.cause or ("answer fails" if new.answer_pass is False else "retrieval miss")
        old = base.get(new.id)
        if old is None:
            why = "new question, not in the baseline: fails"
        elif old.errored:
            why = "failed to run in the baseline: fails now"
        elif new.answer_pass is False and not diff.answers_compared:
            why = "answers not compared with the baseline's (another answerer or model): fails"
        elif new.id in edits:
            why = "facts edited since the baseline, none it held lost: fails"
        elif fails(old):
            why = "known failure: also fails in the baseline"
        else:
            why = "within noise of the baseline (repeated answers): fails"
        out[new.id] = f"{why} ({cause})"
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
    old_recall, new_recall = (
        rounded_score(old.retrieval_recall),
        rounded_score(new.retrieval_recall),
    )
    if new_recall == old_recall:
        return None
    if errored and not new.trace.retrieved:
        return None  # the call failed before retrieval: its recall is unknown, not 0
    kind: Kind = "WORSE" if new_recall < old_recall else "fixed"
    detail = f"retrieval {pct(old.retrieval_recall)} -> {pct(new.retrieval_recall)}"
    if kind == "WORSE" and new_recall > 0:  # some still found: say which were lost
        lost = facts_no_longer_retrieved(old, new)
        detail += "".join(f'; fact "{f}" no longer retrieved' for f in lost)
    return Change(new.id, kind, "retrieval", detail)


def _answer_change(old: BaselineCaseLike, new: CaseResult) -> Change | None:
    """Answers that never varied (``ragrail.diff.noise.varies``): pass -> fail is WORSE,
    fail -> pass is fixed. (Answers that vary are decided together: ``ragrail.diff.noise``.)"""
    if not old.answer_runs or not new.answer_runs or old.answer_pass == new.answer_pass:
        return None
    what = "answer now"
    if old.answer_runs > 1 or new.answer_runs > 1:
        a, n, b, m = old.answer_passes, old.answer_runs, new.answer_passes, new.answer_runs
        what = f"answer pass rate {a}/{n} -> {b}/{m}: answer now"
    if new.answer_pass:
        return Change(new.id, "fixed", "answer", f"{what} passes")
    said = "; ".join([*new.problems, *unnamed_losses(old, new)])
    return Change(new.id, "WORSE", "answer", f"{what} fails, {said}")


def _error_change(old: BaselineCaseLike, new: CaseResult, answers_compared: bool) -> Change | None:
    """ERROR when a question that passed in the baseline errors now: its retrieval found
    every fact and, when answers are compared, its answer passed (a question that failed
    there is no "passed in the baseline", though its error still makes the run exit 3)."""
    if not new.errored or old.errored:
        return None
    recall = old.retrieval_recall
    retrieved = old.retrieval_hit is True and (recall is None or recall >= 1)
    if answers_compared and old.answer_runs:
        passed = old.answer_pass is True and (recall is None or recall >= 1)
    else:
        passed = retrieved
    if not passed:
        return None
    return Change(
        new.id, "ERROR", "error", f"passed in the baseline, now errors: {first_error(new)}"
    )


def compare(run: RunResult, baseline: BaselineRun) -> Diff:
    """The per-question diff of ``run`` against ``baseline`` (a whole saved run or a
    compact baseline from :func:`ragrail.store.baseline.load_baseline`).

    One pass over the run's questions, each looked up in the baseline by id; a question
    whose recall, answer counts and checks are unchanged, that found every fact and did
    not error costs a few comparisons (its checks compared as one dict) and makes no
    line.
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
    base = by_id(baseline)
    with paused_gc():  # a diff's many small objects hold no cycles: see ragrail.gcpause
        _diff_cases(diff, base=base)
    diff.changes = with_stage_changes(diff.changes, run.cases, base)  # information only
    _name_flaky(diff)
    if run.judge_corrected and getattr(baseline, "judge_corrected", None):
        from ragrail.judge.correct import compare_corrected

        diff.judge_changes, diff.judge_notes = compare_corrected(baseline, run)
    return diff


def _name_flaky(diff: Diff) -> None:
    """A WORSE line of a question flaky across recorded runs says so (``CaseResult.
    recorded``): it is still a regression, and the README says how to steady it."""
    flaky = {c.id: c.flaky_text() for c in diff.run.cases if c.recorded is not None}
    if flaky:
        diff.changes = [
            replace(c, detail=f"{c.detail} [{flaky[c.case_id]}]")
            if c.kind == "WORSE" and c.case_id in flaky
            else c
            for c in diff.changes
        ]


def _diff_cases(diff: Diff, base: dict[str, BaselineCaseLike]) -> None:
    """Fill ``diff``'s lists of questions and lines, and its answer flip test."""
    run, same_answerer = diff.run, diff.answers_compared
    lines: dict[Kind, list[Change]] = {
        "fixed": [],
        "lower": [],
        "noise": [],
        "WORSE": [],
        "ERROR": [],
    }
    repeated = diff.repeated = same_answerer and (varies(run.cases) or varies(diff.baseline.cases))
    tests: list[Test] = []  # repeated: every question's tests, decided together below
    verdicts: list[tuple[str, str, int, int]] = []  # repeated: judge criteria, per question
    pairs: dict[str, tuple[int, int, int, int]] = {}
    problems: dict[str, str] = {}
    worse = better = 0  # questions answered in both whose verdict flipped
    graded: dict[str, list[float]] = {}  # name -> [sum before, sum now, questions]
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
        edit = edited(old, new)  # its recall and verdict are of other facts: per fact only
        if edit:
            diff.edited_cases.append(new.id)
        retrieval = None
        if new.retrieval_recall != old.retrieval_recall and not edit:
            retrieval = _retrieval_change(old, new, errored)
        swapped = None
        if not errored and (retrieval is None or retrieval.kind != "WORSE"):
            # len(): every fact found now, nothing to lose (most questions, decided fast)
            if len(new.facts_retrieved) != len(new.facts):
                swapped = facts_lost(old, new)
            if swapped is not None:
                retrieval = None  # the recall rose, but a fact it had is lost: not "fixed"
        if retrieval is not None:
            _add(lines, retrieval)
        if swapped is not None:
            _add(lines, swapped)
        if errored:
            _add(lines, _error_change(old, new, same_answerer))
        if same_answerer and old.answer_runs and not new.answer_runs and not errored:
            # answered in the baseline, nothing now (a null answer): never a silent pass
            _add(lines, Change(new.id, "WORSE", "answer", "no answer now (the system gave none)"))
        if repeated and (m := new.answer_runs) and old.answer_runs:
            tests.extend(question_tests(old, new, answer_test=not edit))
            verdicts.extend(judged_checks(old, new))
            if not edit:
                pairs[new.id] = (old.answer_passes, old.answer_runs, new.answer_passes, m)
            problems[new.id] = "; ".join(new.problems)
            add_graded(graded, old, new, edit)  # a repeated question's first answer: no line
        elif same_answerer and new.answer_runs and old.answer_runs:
            answer = None
            if not edit and (
                new.answer_passes != old.answer_passes or new.answer_runs != old.answer_runs
            ):
                answer = _add(lines, _answer_change(old, new))
            # the verdict did not newly fail: what it can still lose is a check (checks
            # compared as one dict first: most questions' are equal)
            judged = new.judge is not None or getattr(old, "judge", None) is not None
            if (answer is None or answer.kind != "WORSE") and (
                judged or (old.checks is not None and old.checks != new.checks)
            ):
                answer = _add(lines, check_changes(old, new, old.answer_runs, new.answer_runs))
            dropped = add_graded(graded, old, new, edit)
            worse_here = swapped is not None or (
                retrieval is not None and retrieval.kind == "WORSE"
            )
            if dropped and answer is None and not worse_here:
                _add(lines, graded_drop(old, new, edit))
            if old.answer_pass and not new.answer_pass and not edit:  # edited: other facts'
                worse += 1
            elif new.answer_pass and not old.answer_pass and not edit:
                better += 1
    run_ids = {c.id for c in run.cases}
    diff.removed_cases = [c.id for c in diff.baseline.cases if c.id not in run_ids]
    if repeated:
        decided = noise_changes([*tests, *judge_tests(verdicts)], pairs, problems)
        diff.set_test, diff.family, diff.n_tests = decided.whole, decided.family, decided.tests
        diff.floor = decided.floor
        for case_id, kind, detail in decided.lines:
            lines[kind].append(Change(case_id, kind, "answer", detail))
        order = {c.id: i for i, c in enumerate(run.cases)}
        kinds: tuple[Kind, ...] = ("fixed", "noise", "WORSE")
        for kind in kinds:  # in golden-set order, with the retrieval lines
            lines[kind].sort(key=lambda c: order.get(c.case_id, 0))
    elif same_answerer:
        diff.answer_flips = mcnemar_exact(worse, better)
    if same_answerer:
        diff.graded = graded_means(graded)
    # fixed lines first, then lower scores and moves within noise, then WORSE, then
    # ERROR, each in golden-set order: the lines a reviewer must act on end up last, next
    # to the exit status.
    diff.changes = (
        lines["fixed"] + lines["lower"] + lines["noise"] + lines["WORSE"] + lines["ERROR"]
    )


def _add(lines: dict[Kind, list[Change]], change: Change | None) -> Change | None:
    if change is not None:
        lines[change.kind].append(change)
    return change


def _who(run: BaselineRun) -> str:
    c = run.config
    return f"{c.answerer} {c.model}" if c.model else c.answerer
