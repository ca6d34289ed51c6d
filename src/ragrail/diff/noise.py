"""The verdict when answers vary: questions answered more than once (``--repeats``, in the
run or in the baseline) are samples, and a drop is a regression only when it is unlikely to
be noise, with false alarms controlled across the whole golden set.

Two families of tests share the gate's 5% (Bonferroni between them, 2.5% each), so that a
system that did not change turns CI red in at most 5% of runs:

1. **The golden set as a whole** (:func:`set_test`): the exact stratified test of
   Cochran, Mantel and Haenszel, one stratum per question answered in both runs. Given a
   question's total passes T_i over its n_i answers before and m_i now, its passes before,
   A_i, are hypergeometric under "nothing changed" (mean n_i T_i / (n_i + m_i)); the
   statistic is S = sum A_i, and p = P(S >= observed) from the exact convolution of the
   questions' hypergeometric laws (one-sided: before passed more). Beyond 2,000 informative
   questions (or a convolution past 2 x 10^7 steps: many repeats), the normal
   approximation with a continuity correction: z = (S - E S - 1/2) /
   sqrt(sum n_i m_i T_i (N_i - T_i) / (N_i^2 (N_i - 1))), N_i = n_i + m_i. Questions that
   passed (or failed) every time in both runs carry no information and drop out, so a
   regression of a few questions is not drowned by the many that never move, and the
   dropped questions' own shift does not widen the reference, as it would in a test on
   the pass rates' differences.
2. **Each question** (:func:`per_question`): a one-sided Fisher exact test on its pass /
   fail counts before and now, one per answer verdict and one per check it kept
   (``CaseResult.checks``), Holm-adjusted over the tests that could reach significance
   (Tarone 1990): a test whose most extreme table, given its margins, has p_min > alpha / K
   can never reject, so it is left out of the family, K being the smallest count with at
   most K tests of p_min <= alpha / K. Fisher's test is conditional on the margins, so
   choosing the family from them keeps Holm's guarantee; it spares the questions that
   passed (or failed) every time in both runs, which are most of a golden set. A judge
   criterion judges one answer per question, so it is tested over the questions instead
   (:func:`judge_tests`: the exact sign test on the questions whose verdict changed), in
   the same family.

A question is WORSE when its own test is significant (a judge criterion's: every question
that lost it), or when the golden set as a whole got significantly worse and its answers'
drop is one that explains it (:func:`explaining`: the likeliest drops, taken out one at a
time until the rest is no longer significantly worse; at least one, so a significant set
always has a WORSE line). Every other drop or rise is listed as a ``noise`` line, with its tests.
Answers that never varied (:func:`varies`: every question's answers alike in both runs, however
many times asked) are a deterministic system's and never come here: any pass -> fail is
WORSE (``ragrail.diff``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragrail.stats import holm

if TYPE_CHECKING:
    from ragrail.diff.lines import BaselineCaseLike, Kind

# the gate's false-alarm rate, split evenly between the set-wide test and the questions'
ALPHA = 0.05
SET_ALPHA = ALPHA / 2
QUESTION_ALPHA = ALPHA / 2

_EXACT_UP_TO = 2_000  # informative questions convolved exactly

SET_TEST_NAME = "exact Cochran-Mantel-Haenszel test over questions, one-sided"
QUESTION_TEST_NAME = "Fisher exact, one-sided"


@functools.lru_cache(maxsize=1 << 14)
def fisher_greater(a_pass: int, a_runs: int, b_pass: int, b_runs: int) -> float:
    """One-sided Fisher exact p that pass rate a exceeds pass rate b: the hypergeometric
    upper tail P(X >= a_pass), X ~ Hypergeom(a_runs + b_runs, a_pass + b_pass, a_runs)."""
    from scipy.stats import hypergeom

    total = a_pass + b_pass
    return float(min(1.0, hypergeom.sf(a_pass - 1, a_runs + b_runs, total, a_runs)))


@functools.lru_cache(maxsize=1 << 14)
def fisher_floor(a_runs: int, b_runs: int, total: int) -> float:
    """The smallest p :func:`fisher_greater` can give with these margins: the table with as
    many of the ``total`` passes on side a as fit."""
    a_pass = min(total, a_runs)
    return fisher_greater(a_pass, a_runs, total - a_pass, b_runs)


@functools.lru_cache(maxsize=1 << 12)
def sign_greater(more: int, fewer: int) -> float:
    """One-sided exact sign test: P(X >= more), X ~ Binomial(more + fewer, 1/2)."""
    from scipy.stats import binom

    return float(min(1.0, binom.sf(more - 1, more + fewer, 0.5)))


def judge_tests(verdicts: Sequence[tuple[str, str, int, int]]) -> list[Test]:
    """One test per judge criterion over the questions: (case id, criterion, held before,
    held now), each 1 or 0 (a criterion judges one answer per question, so one question
    alone can never show a significant change; across questions it can). The exact sign
    test on the questions whose verdict changed: lost b, gained c, p = P(X >= b),
    X ~ Binomial(b + c, 1/2)."""
    lost: dict[str, list[str]] = {}
    gained: dict[str, list[str]] = {}
    for case_id, name, was, now in verdicts:
        if was and not now:
            lost.setdefault(name, []).append(case_id)
        elif now and not was:
            gained.setdefault(name, []).append(case_id)
    tests = []
    for name in dict.fromkeys([*lost, *gained]):
        b, c = lost.get(name, []), gained.get(name, [])
        n = len(b) + len(c)
        tests.append(Test("", name, (len(b), n), (len(c), n), lost=tuple(b), gained=tuple(c)))
    return tests


@dataclass(slots=True)
class Test:
    """One per-question test: ``before``/``now`` are (passes, runs); ``what`` is how the
    line names it (``answer pass rate`` or a check's phrase)."""

    case_id: str
    what: str
    before: tuple[int, int]
    now: tuple[int, int]
    p: float = 1.0  # one-sided, in the direction the rate moved
    adjusted: float = 1.0  # Holm-adjusted over the family; 1.0 when left out of it
    testable: bool = False  # in the family (Tarone): it could reach significance
    # a judge criterion over the questions (:func:`judge_tests`): the questions whose one
    # judged answer lost it and gained it; ``before``/``now`` are (lost, changed) and
    # (gained, changed)
    lost: tuple[str, ...] = ()
    gained: tuple[str, ...] = ()

    @property
    def dropped(self) -> bool:
        (a, n), (b, m) = self.before, self.now
        return b * n < a * m

    @property
    def rose(self) -> bool:
        (a, n), (b, m) = self.before, self.now
        return b * n > a * m

    @property
    def significant(self) -> bool:
        return self.adjusted < QUESTION_ALPHA

    def counts(self) -> str:
        (a, n), (b, m) = self.before, self.now
        return f"{a}/{n} -> {b}/{m}"


def per_question(tests: Sequence[Test], direction: str) -> None:
    """Fill each test's one-sided p (towards ``direction``: "drop" or "rise") and its
    Holm-adjusted p over the Tarone family (see the module docstring), in place."""
    floors = []
    for t in tests:
        (a, n), (b, m) = t.before, t.now
        if t.lost or t.gained:  # a judge criterion: the sign test over its questions
            t.p = sign_greater(a, b) if direction == "drop" else sign_greater(b, a)
            floor = 0.5 ** (a + b)
        elif direction == "drop":
            t.p, floor = fisher_greater(a, n, b, m), fisher_floor(n, m, a + b)
        else:
            t.p, floor = fisher_greater(b, m, a, n), fisher_floor(m, n, a + b)
        t.adjusted, t.testable = 1.0, False
        floors.append(floor)
    family = tarone_family(floors, QUESTION_ALPHA)
    for i, adjusted in zip(family, holm([tests[i].p for i in family]), strict=True):
        tests[i].adjusted, tests[i].testable = adjusted, True


def tarone_family(floors: Sequence[float], alpha: float) -> list[int]:
    """Indexes of the tests that could reach significance: K is the smallest k >= 1 with
    #{i: floor_i <= alpha / k} <= k, and the family is {i: floor_i <= alpha / K}."""
    ordered = sorted(floors)
    k = 1
    while _count_at_most(ordered, alpha / k) > k:  # ends by k = len(floors) at the latest
        k += 1
    return [i for i, f in enumerate(floors) if f <= alpha / k]


def _count_at_most(ordered: Sequence[float], limit: float) -> int:
    from bisect import bisect_right

    return bisect_right(ordered, limit)


@dataclass(frozen=True)
class SetTest:
    """The golden set as a whole: mean pass rate before and now over the ``n`` questions
    answered in both, and the one-sided p that it dropped (:func:`set_test`)."""

    before: float
    now: float
    n: int
    p: float

    @property
    def significant(self) -> bool:
        return self.p < SET_ALPHA

    def text(self) -> str:
        from ragrail.diff.lines import p_text

        verdict = "significant" if self.significant else "within noise"
        return (
            f"mean answer pass rate per question {self.before:.1%} -> {self.now:.1%} over "
            f"{self.n} questions ({SET_TEST_NAME}, p={p_text(self.p)}; {verdict} at "
            f"{SET_ALPHA:g})"
        )


def _strata(
    pairs: Iterable[tuple[int, int, int, int]],
) -> list[tuple[int, int, int, int]]:
    """(passes before, runs before, total passes, total runs) of each informative question:
    neither every answer passed nor every one failed over both runs."""
    return [(a, n, a + b, n + m) for a, n, b, m in pairs if 0 < a + b < n + m]


def _moments(a: int, n: int, t: int, big: int) -> tuple[float, float, float]:
    """A stratum's (observed, expected, variance) of its passes before, hypergeometric."""
    return a, n * t / big, n * (big - n) * t * (big - t) / (big**2 * (big - 1))


def _normal_p(observed: float, expected: float, var: float) -> float:
    from scipy.stats import norm

    if var <= 0:
        return 1.0
    return float(norm.sf((observed - expected - 0.5) / var**0.5))


def set_test(pairs: Sequence[tuple[int, int, int, int]]) -> SetTest | None:
    """The stratified test (module docstring) on (passes before, runs before, passes now,
    runs now) per question; None when no question was answered in both. Exact while the
    convolution stays small (at most 2,000 informative questions and 2 x 10^7 steps),
    else the normal approximation with a continuity correction."""
    import numpy as np
    from scipy.stats import hypergeom

    if not pairs:
        return None
    before = sum(a / n for a, n, _, _ in pairs) / len(pairs)
    now = sum(b / m for _, _, b, m in pairs) / len(pairs)
    strata = _strata(pairs)
    if not strata:
        return SetTest(before, now, len(pairs), 1.0)
    widths = [min(n, t) - max(0, t - (big - n)) + 1 for _, n, t, big in strata]
    if len(strata) > _EXACT_UP_TO or sum(widths) * max(widths) > 20_000_000:
        o, e, v = (sum(x) for x in zip(*(_moments(*st) for st in strata), strict=True))
        return SetTest(before, now, len(pairs), min(1.0, _normal_p(o, e, v)))
    observed = sum(a for a, _, _, _ in strata)
    low = 0  # the smallest S can be: each question's fewest passes before
    law = np.ones(1)
    for _, n, t, big in strata:
        lo, hi = max(0, t - (big - n)), min(n, t)
        law = np.convolve(law, hypergeom.pmf(np.arange(lo, hi + 1), big, t, n))
        low += lo
    p = float(law[max(0, observed - low) :].sum())
    return SetTest(before, now, len(pairs), min(1.0, p))


def explaining(drops: Sequence[Test], pairs: dict[str, tuple[int, int, int, int]]) -> list[Test]:
    """The answer drops that explain a set found significantly worse: the likeliest first
    (smallest p, then the largest drop), taken out one at a time until the questions left
    are no longer significantly worse (the CMH statistic's normal approximation, whose
    sums a question leaves by subtraction), with any drop tied with the last one named;
    at least one."""
    moments = {
        cid: _moments(*st) for cid, (a, n, b, m) in pairs.items() for st in _strata([(a, n, b, m)])
    }
    o, e, v = (sum(x) for x in zip(*moments.values(), strict=True)) if moments else (0, 0, 0)

    def size(t: Test) -> float:
        (a, n), (b, m) = t.before, t.now
        return b / m - a / n

    ordered = sorted(drops, key=lambda t: (t.p, size(t)))
    named: list[Test] = []
    for t in ordered:
        if named and _normal_p(o, e, v) >= SET_ALPHA:
            last = named[-1]  # a drop just like the last one named is named too
            if (t.p, size(t)) != (last.p, size(last)):
                break
        named.append(t)
        mo = moments.get(t.case_id)
        if mo is not None:
            o, e, v = o - mo[0], e - mo[1], v - mo[2]
    return named


def varies(cases: Iterable[BaselineCaseLike]) -> bool:
    """Whether some question's repeated answers disagreed: its verdict, or one of its
    checks, held in some answers and not in others. Answers that never varied, however many
    times asked, are a deterministic system's: any pass -> fail is WORSE (``ragrail.diff``);
    only answers seen to vary make the gate noise-aware."""
    for c in cases:
        runs = c.answer_runs
        if runs > 1 and (0 < c.answer_passes < runs or _mixed(c.checks, runs)):
            return True
    return False


def _mixed(checks: dict[str, int] | None, runs: int) -> bool:
    from ragrail.records.results import JUDGE

    return any(
        0 < held < runs for name, held in (checks or {}).items() if not name.startswith(JUDGE)
    )


ANSWER = ""  # Test.what of a question's answer verdict; a check's name otherwise


def _describe(t: Test, direction: str = "drop") -> str:
    """``answer pass rate 5/5 -> 0/5 (Fisher p=0.004, Holm 0.05)``; a check's is
    ``fact: npm ci held 5/5 -> 2/5 (Fisher p=0.08)``: p one-sided; no Holm-adjusted p when
    the counts could not reach significance (the test is outside the family). A judge
    criterion's names its sign test over the questions."""
    from ragrail.diff.lines import p_text

    how = f", Holm {p_text(t.adjusted)}" if t.testable else ""
    if t.lost or t.gained:
        verb = "no longer passes" if direction == "drop" else "passes now"
        return (
            f"{t.what} {verb} (sign test over the questions whose verdict changed: "
            f"{len(t.lost)} lost it, {len(t.gained)} gained it, p={p_text(t.p)}{how})"
        )
    head = "answer pass rate" if t.what == ANSWER else f"{t.what} held"
    return f"{head} {t.counts()} (Fisher p={p_text(t.p)}{how})"


def family_text(family: int, tests: int, floor: float | None = None) -> str:
    """How the per-question tests were decided, said once beside the set-wide test;
    ``floor``: the smallest p any test's table allowed, said when the family is empty."""
    from ragrail.diff.lines import p_text

    head = f"per question: {QUESTION_TEST_NAME}, Holm-adjusted at {QUESTION_ALPHA:g} over "
    if family:
        return head + f"the {family} of {tests} tests whose counts could reach significance"
    text = head + f"the tests whose counts could reach significance: none of {tests} could"
    if floor is not None and floor < 1:
        text += (
            f" (the smallest p these repeats allow is {p_text(floor)}, too large for a "
            "family this size: ask more times, e.g. --repeats 10, for verdicts per question)"
        )
    return text


@dataclass
class NoiseVerdict:
    """What :func:`noise_changes` decided: the lines (case id, kind, detail) in the tests'
    order, the set-wide test, the size of the drop family, the number of tests, and the
    smallest p any drop test's table allowed."""

    lines: list[tuple[str, Kind, str]]
    whole: SetTest | None
    family: int
    tests: int
    floor: float


def noise_changes(
    tests: Sequence[Test],
    pairs: dict[str, tuple[int, int, int, int]],
    problems: dict[str, str],
) -> NoiseVerdict:
    """The lines of a repeated run's tests (module docstring), kind WORSE, fixed or noise.
    ``tests``: each question's (:func:`ragrail.diff.checks.question_tests`) and each judge
    criterion's (:func:`judge_tests`); ``pairs``: each question's answer counts, by id;
    ``problems``: why each question's first failing answer failed now (its WORSE line)."""
    whole = set_test(list(pairs.values()))
    drops = list(tests)
    per_question(drops, "drop")
    family = sum(1 for t in drops if t.testable)
    floor = min((fisher_floor(t.before[1], t.now[1], t.before[0] + t.now[0]) for t in drops
                 if not (t.lost or t.gained)), default=1.0)  # fmt: skip
    dropped = [t for t in drops if t.dropped]
    rises = [Test(t.case_id, t.what, t.before, t.now, lost=t.lost, gained=t.gained) for t in tests]
    per_question(rises, "rise")
    risen = [t for t in rises if t.rose]
    with_set: set[int] = set()
    if whole is not None and whole.significant:
        answer_drops = [t for t in dropped if t.what == ANSWER and not t.significant]
        with_set = {id(t) for t in explaining(answer_drops, pairs)}
    answers = {t.case_id: (t.before, t.now) for t in tests if t.what == ANSWER}
    by_case: dict[str, dict[str, list[Test]]] = {}

    def put(t: Test, kind: str, case_ids: Sequence[str]) -> None:
        for case_id in case_ids:
            by_case.setdefault(case_id, {}).setdefault(kind, []).append(t)

    for t in dropped:
        kind = "WORSE" if t.significant else "with the set" if id(t) in with_set else "noise"
        put(t, kind, t.lost or (t.case_id,))
    for t in risen:
        put(t, "fixed" if t.significant else "noise", t.gained or (t.case_id,))
    out: list[tuple[str, Kind, str]] = []
    for case_id, kinds in by_case.items():
        for kind, found in kinds.items():
            # a check whose counts are its answer's says the same: its test counts (in the
            # family), its text would only repeat the answer's
            has_answer = any(t.what == ANSWER for t in found)
            shown = [
                t
                for t in found
                if t.what == ANSWER or not has_answer or (t.before, t.now) != answers.get(case_id)
            ]
            text = ", ".join(_describe(t, "rise" if t.rose else "drop") for t in shown)
            if kind == "noise":
                out.append((case_id, "noise", f"{text}: within noise"))
                continue
            if kind == "with the set":
                text += ": within noise alone, but the golden set as a whole got worse"
            if kind != "fixed" and problems.get(case_id):
                text += f"; {problems[case_id]}"
            out.append((case_id, "fixed" if kind == "fixed" else "WORSE", text))
    return NoiseVerdict(out, whole, family, len(tests), floor)
