"""Regressions per check: a question that already failed can still lose a fact, its
citation, its claims' support, a code check or a judge criterion (``CaseResult.checks``,
kept in the baseline), and a retrieved fact can be swapped for another at the same
recall. Graded scores that dropped with no check lost are shown, never a regression."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ragrail.diff.lines import (
    BaselineCaseLike,
    Change,
    pct,
    rounded_score,
)
from ragrail.records.results import CaseResult

if TYPE_CHECKING:
    from ragrail.diff.noise import Test


def _held(case: BaselineCaseLike) -> dict[str, int] | None:
    """The checks a baseline question held, by name, in how many of its answers; None
    for a baseline file from before they were kept (version 2)."""
    if isinstance(case, CaseResult):
        return case.held_checks() if case.judge is not None else case.checks
    return case.checks


def _found(case: BaselineCaseLike) -> list[str] | None:
    """The labels of the facts retrieval found; None when a baseline does not say."""
    if isinstance(case, CaseResult):
        return [str(f) for f in case.facts_retrieved]
    return case.found


def _lost(old_passes: int, old_runs: int, new_passes: int) -> bool:
    """Whether a check that held in every answer of the baseline holds in none now (answers
    that never varied: each question's are all alike, ``ragrail.diff.noise.varies``)."""
    return old_passes == old_runs and new_passes == 0


def question_tests(old: BaselineCaseLike, new: CaseResult, answer_test: bool = True) -> list[Test]:
    """A repeated question's tests for the noise-aware gate (``ragrail.diff.noise``): its
    answer verdict's pass counts before and now, and each check kept on both sides (a
    judge criterion judges one answer: it is tested over the questions, :func:`judged_checks`). A table whose every answer passed, or
    every answer failed, in both runs is left out: its margins allow no p below 1, so it
    can neither move nor enter the Holm family (most questions, decided fast).
    ``answer_test`` False (its facts were edited: ``ragrail.diff.edits``): no test of its
    verdict, a verdict over other facts, and each check tested on its own."""
    from ragrail.diff.noise import ANSWER, Test

    n, m = old.answer_runs, new.answer_runs
    answer = (old.answer_passes, n), (new.answer_passes, m)
    tests = []
    if not answer_test:
        answer = ((-1, n), (-1, m))  # matches no check's table: each is tested
    elif 0 < answer[0][0] + answer[1][0] < n + m:
        tests.append(Test(new.id, ANSWER, *answer))
    before = _held(old) or {}
    for name, passes in new.checks.items():  # judge criteria: judged_checks, over questions
        was = before.get(name)
        # a check held in exactly the answers that passed (a fact every failing answer
        # missed) has the answer's table: the same data, one test, not two
        if was is not None and 0 < was + passes < n + m and ((was, n), (passes, m)) != answer:
            tests.append(Test(new.id, name, (was, n), (passes, m)))
    return tests


def judged_checks(old: BaselineCaseLike, new: CaseResult) -> list[tuple[str, str, int, int]]:
    """A question's judge criteria kept on both sides: (case id, "judge: <name>", held
    before, held now), for ``ragrail.diff.noise.judge_tests``."""
    from ragrail.records.results import JUDGE

    if new.judge is None:
        return []
    before = _held(old) or {}
    return [
        (new.id, name, before[name], passes)
        for name, passes in new.held_checks().items()
        if name.startswith(JUDGE) and name in before
    ]


def _check_phrase(name: str, new: CaseResult | None = None) -> str:
    """What a lost check says: ``fact "npm ci" no longer in the answer``; a code check's
    says what it found in ``new`` (:func:`_check_found`)."""
    from ragrail.records.results import BEHAVIOUR, CHECK, CITATION, CLAIMS, FACT, JUDGE

    if name.startswith(FACT):
        text = f'fact "{name[len(FACT) :]}" no longer in the answer'
    elif name == CITATION:
        text = "citation no longer valid"
    elif name == BEHAVIOUR:
        text = "no longer behaves as expected"
    elif name == CLAIMS:
        text = "now states a claim no context supports"
    elif name.startswith(CHECK):
        text = f"check '{name[len(CHECK) :]}' no longer passes"
        found = _check_found(name, new) if new is not None else None
        if found:
            text += f" ({found})"
    elif name.startswith(JUDGE):
        text = f"judge criterion '{name[len(JUDGE) :]}' no longer passes"
    else:
        text = f"{name} no longer holds"
    return text


def _check_found(name: str, new: CaseResult) -> str | None:
    """What the lost code check ``name`` found in the answer (``contains "GUI"``): its
    problems, which open with its label ("not_contains: ..."), when no other check of that
    label failed (a problem does not say which of two: ``not_contains #2`` is a position).
    None when that cannot be told."""
    from ragrail.records.results import CHECK

    label = _NTH.sub("", name[len(CHECK) :])
    failed = [
        n
        for n, held in new.checks.items()
        if not held and n.startswith(CHECK) and _NTH.sub("", n[len(CHECK) :]) == label
    ]
    if failed != [name]:
        return None
    opening = f"{label}: "
    return "; ".join(p[len(opening) :] for p in new.check_problems if p.startswith(opening))


def check_changes(
    old: BaselineCaseLike, new: CaseResult, old_runs: int = 1, new_runs: int = 1
) -> Change | None:
    """WORSE when a check the question held in the baseline fails now (see
    :func:`_lost`), one line naming every lost check; None when none was lost or the
    baseline does not keep its checks. Judge criteria count once per question."""
    lost = [_check_phrase(name, new) for name in _lost_checks(old, new, old_runs)]
    if not lost:
        return None
    return Change(new.id, "WORSE", "answer", "; ".join(lost))


def _lost_checks(old: BaselineCaseLike, new: CaseResult, old_runs: int = 1) -> list[str]:
    """The names of the checks held in the baseline and lost now (:func:`_lost`)."""
    from ragrail.records.results import JUDGE

    before = _held(old)
    after = new.held_checks() if new.judge is not None else new.checks
    if not before or before == after:
        return []
    lost = []
    for name, passes in after.items():
        was = before.get(name)
        if was is None:
            continue
        one = name.startswith(JUDGE)  # a judge criterion judges one answer
        if passes == 0 < was and _lost(was, 1 if one else old_runs, passes):
            lost.append(name)
    return lost


def unnamed_losses(old: BaselineCaseLike, new: CaseResult) -> list[str]:
    """What an answer that newly fails also lost that its problems do not say: its claims'
    support when unsupported claims are no problem (``require_faithful`` off), a code
    check or a judge criterion. Facts, the citation and the behaviour are its problems."""
    from ragrail.records.results import CHECK, CLAIMS, JUDGE

    said = "; ".join(new.problems)
    lost = _lost_checks(old, new, old.answer_runs or 1)
    claims = [n for n in lost if n == CLAIMS and "unsupported claim" not in said]
    # a problem opens with the check's label ("contains: ...", the second check of a label
    # being "contains #2" by name) or "judge: <criterion> failed": a label found anywhere
    # in the text ("a" in 'missing "x"') says nothing
    problems = new.problems
    named = [
        n
        for n in lost
        if (n.startswith(CHECK) and not _said(f"{_NTH.sub('', n[len(CHECK) :])}: ", problems))
        or (n.startswith(JUDGE) and not _said(f"{n} failed", problems))
    ]
    return [_check_phrase(n) for n in [*claims, *named]]


_NTH = re.compile(r" #\d+$")  # a second check of one label: "contains #2"


def _said(opening: str, problems: list[str]) -> bool:
    return any(p.startswith(opening) for p in problems)


def facts_no_longer_retrieved(old: BaselineCaseLike, new: CaseResult) -> list[str]:
    """The facts retrieval found in the baseline and misses now, by label (a fact the
    baseline did not have cannot be lost); [] when the baseline does not say."""
    before = _found(old)
    if not before:
        return []
    now = {str(f) for f in new.facts_retrieved}
    facts = {str(f) for f in new.facts}
    return [f for f in dict.fromkeys(before) if f in facts and f not in now]


def facts_lost(old: BaselineCaseLike, new: CaseResult) -> Change | None:
    """WORSE when a fact retrieval found in the baseline (by its label) is not found now,
    though the recall did not drop (another fact came back in its place). A fact the
    baseline did not have (added, or its label changed) cannot be lost."""
    if len(new.facts_retrieved) == len(new.facts):
        return None  # every fact found now: nothing lost (the common case, decided fast)
    before = _found(old)
    if not before or before == new.facts_retrieved:  # a Fact is its label: str equality
        return None
    lost = facts_no_longer_retrieved(old, new)
    if not lost:
        return None
    text = "; ".join(f'fact "{f}" no longer retrieved' for f in lost)
    return Change(new.id, "WORSE", "retrieval", text)


# The graded scores a "lower" line shows, as a baseline keeps them.
GRADED = ("correctness", "faithfulness")


def _graded(edited: bool) -> tuple[str, ...]:
    """The graded scores comparable with the baseline's: correctness is a fraction of the
    question's facts, so not when they were edited since (``ragrail.diff.edits``)."""
    return ("faithfulness",) if edited else GRADED


def graded_drop(old: BaselineCaseLike, new: CaseResult, edited: bool = False) -> Change | None:
    """A ``lower`` line when correctness or faithfulness dropped (six digits)."""
    parts = []
    for name in _graded(edited):
        was = _metric(old, name)
        now = getattr(new, name)
        if was is not None and now is not None and rounded_score(now) < was:
            parts.append(f"{name} {pct(was)} -> {pct(now)}")
    if not parts:
        return None
    return Change(new.id, "lower", "score", ", ".join(parts))


def _metric(case: BaselineCaseLike, name: str) -> float | None:
    if isinstance(case, CaseResult):
        value = getattr(case, name)
        return None if value is None else rounded_score(value)
    return case.metrics.get(name)


def graded_means(sums: dict[str, list[float]]) -> dict[str, tuple[float, float]]:
    """Each graded score's mean over the questions scored for it in both runs, before
    and now (``sums``: name -> [sum before, sum now, questions], as :func:`add_graded`
    adds them up): the same questions on both sides, so one added, removed or errored on
    one side never moves it."""
    return {name: (a / n, b / n) for name, (a, b, n) in sums.items() if n}


def add_graded(
    sums: dict[str, list[float]], old: BaselineCaseLike, new: CaseResult, edited: bool = False
) -> bool:
    """Add a question's graded scores to ``sums`` (both sides as a baseline keeps them,
    to six digits, so an unchanged run moves no mean); whether one of them dropped.
    ``edited``: its facts changed since the baseline, so its correctness is left out."""
    metrics = None if isinstance(old, CaseResult) else old.metrics
    dropped = False
    for name in _graded(edited):
        now = getattr(new, name)
        if now is None:
            continue
        was = metrics.get(name) if metrics is not None else _metric(old, name)
        if was is None:
            continue
        if now != was:  # equal already: most questions, no rounding to pay for
            now = rounded_score(now)
            dropped = dropped or now < was
        row = sums.get(name)
        if row is None:
            row = sums[name] = [0.0, 0.0, 0]
        row[0] += was
        row[1] += now
        row[2] += 1
    return dropped
