"""Regressions per check: a question that already failed can still get worse."""

from __future__ import annotations

from ragrail.diff import compare, flips_text
from ragrail.records.results import CaseResult, CriterionResult, JudgeResult, RunResult, Trace
from ragrail.stats import McNemar
from ragrail.store.baseline import Baseline
from ragrail.store.baseline.read import read_baseline_text
from tests.factories import run_result


def case(
    cid: str,
    checks: dict[str, int],
    *,
    runs: int = 1,
    facts: tuple[str, ...] = ("x", "y"),
    retrieved: tuple[str, ...] = ("x", "y"),
    correctness: float | None = None,
    faithfulness: float | None = None,
    judge: dict[str, bool] | None = None,
) -> CaseResult:
    passes = min(checks.values(), default=runs) if checks else runs
    return CaseResult(
        id=cid,
        question="q",
        sources=["a"],
        facts=list(facts),
        facts_retrieved=list(retrieved),
        retrieval_hit=bool(retrieved),
        retrieval_recall=len(retrieved) / len(facts),
        answer_pass=passes == runs,
        answer_runs=runs,
        answer_passes=passes,
        problems=[] if passes == runs else ["something"],
        checks=checks,
        correctness=correctness,
        faithfulness=faithfulness,
        judge=None
        if judge is None
        else JudgeResult(criteria=[CriterionResult(name=k, passed=v) for k, v in judge.items()]),
        trace=Trace(case_id=cid),
    )


def run(*cases: CaseResult) -> RunResult:
    return run_result(list(cases), answerer="standin", answerer_label="standin")


def compact(r: RunResult) -> Baseline:
    """``r`` as a saved compact baseline reads back."""
    return read_baseline_text(Baseline.from_run(r).to_text(), "baseline.json")


FAILING = {"behaviour": 1, "citation": 0, "fact: x": 1, "fact: y": 0}


def test_an_answer_that_already_failed_and_loses_a_fact_is_worse_naming_the_fact():
    base = run(case("q1", FAILING))
    new = run(case("q1", {**FAILING, "fact: x": 0}))
    for baseline in (base, compact(base)):
        diff = compare(new, baseline)
        assert [c.line() for c in diff.changes] == ['WORSE:  q1: fact "x" no longer in the answer']
        assert diff.regressed


def test_a_check_that_failed_before_and_fails_now_is_no_line():
    base = run(case("q1", FAILING))
    new = run(case("q1", dict(FAILING)))
    assert compare(new, base).changes == []


def test_every_lost_check_is_named_on_one_line_in_the_order_the_answer_faced_them():
    base = run(case("q1", {"behaviour": 1, "fact: x": 1, "citation": 1, "check: no_pii": 1,
                           "claims supported": 1, "fact: y": 0}))  # fmt: skip
    new = run(case("q1", {"behaviour": 1, "fact: x": 0, "citation": 0, "check: no_pii": 0,
                          "claims supported": 0, "fact: y": 0}))  # fmt: skip
    (line,) = [c.line() for c in compare(new, base).changes]
    assert line == (
        'WORSE:  q1: fact "x" no longer in the answer; citation no longer valid; '
        "check 'no_pii' no longer passes; now states a claim no context supports"
    )


def test_a_check_the_baseline_did_not_have_cannot_regress():
    base = run(case("q1", {"behaviour": 1, "fact: x": 0}))
    new = run(case("q1", {"behaviour": 1, "fact: x": 0, "fact: new": 0}))
    assert compare(new, base).changes == []


def test_a_passing_answer_that_loses_only_its_claims_support_is_worse():
    # the verdict holds (claims are not required) but a check the baseline held is lost
    base = run(case("q1", {"behaviour": 1, "claims supported": 1}))
    new = case("q1", {"behaviour": 1, "claims supported": 0})
    new.answer_pass, new.answer_passes, new.problems = True, 1, []
    (change,) = compare(run(new), base).changes
    assert (change.kind, change.detail) == (
        "WORSE",
        "now states a claim no context supports",
    )


def test_a_verdict_that_flips_keeps_its_one_line_and_no_check_line_besides():
    base = run(case("q1", {"behaviour": 1, "fact: x": 1}))
    new = run(case("q1", {"behaviour": 1, "fact: x": 0}))
    assert [c.line() for c in compare(new, base).changes] == [
        "WORSE:  q1: answer now fails, something"
    ]


def test_repeated_answers_that_never_vary_keep_the_exact_rule():
    # every answer alike in both runs (5 of 5 or 0 of 5): a deterministic system asked 5
    # times; the fact held in all 5 and in none now is WORSE, as with one answer each
    base = run(case("q1", {"behaviour": 5, "fact: x": 5, "fact: y": 0}, runs=5))
    gone = run(case("q1", {"behaviour": 5, "fact: x": 0, "fact: y": 0}, runs=5))
    diff = compare(gone, base)
    assert not diff.repeated and [c.line() for c in diff.changes] == [
        'WORSE:  q1: fact "x" no longer in the answer'
    ]


def test_with_varying_answers_a_check_is_tested_with_the_answers_in_one_holm_family():
    # the fact held in 4 of 5 answers now: the answers vary, so the gate is noise-aware
    base = run(case("q1", {"behaviour": 5, "fact: x": 5, "fact: y": 0}, runs=5))
    noisy = run(case("q1", {"behaviour": 5, "fact: x": 4, "fact: y": 0}, runs=5))
    diff = compare(noisy, base)
    # 5/5 -> 4/5: Fisher one-sided p = 1/2, and its margins (9 of 10) cannot reach 0.025
    (change,) = diff.changes
    assert diff.repeated and change.kind == "noise"
    assert change.detail == "fact: x held 5/5 -> 4/5 (Fisher p=0.50): within noise"
    # the same fact lost in every answer, beside another question whose answers vary: the
    # only test whose margins (5 of 10) can reach 0.025 (Tarone), p = 1/C(10,5) = 1/252
    flaky = case("q2", {"behaviour": 3, "fact: z": 3}, runs=5)
    gone = run(case("q1", {"behaviour": 5, "fact: x": 0, "fact: y": 0}, runs=5), flaky)
    (line,) = [c.line() for c in compare(gone, run(base.cases[0], flaky)).changes]
    assert line == "WORSE:  q1: fact: x held 5/5 -> 0/5 (Fisher p=0.004, Holm 0.004); something"


def test_a_fact_retrieval_swapped_for_another_is_worse_though_the_recall_did_not_move():
    base = run(case("q1", FAILING, facts=("x", "y", "z"), retrieved=("x", "y")))
    new = run(case("q1", FAILING, facts=("x", "y", "z"), retrieved=("x", "z")))
    for baseline in (base, compact(base)):
        assert [c.line() for c in compare(new, baseline).changes] == [
            'WORSE:  q1: fact "y" no longer retrieved'
        ]


def test_a_recall_drop_keeps_its_one_line():
    base = run(case("q1", FAILING, retrieved=("x", "y")))
    new = run(case("q1", FAILING, retrieved=("x",)))
    # one line, naming the fact lost when some are still found
    assert [c.line() for c in compare(new, base).changes] == [
        'WORSE:  q1: retrieval 100% -> 50%; fact "y" no longer retrieved'
    ]
    gone = run(case("q1", FAILING, retrieved=()))
    assert [c.line() for c in compare(gone, base).changes] == ["WORSE:  q1: retrieval 100% -> 0%"]


def test_a_graded_score_that_drops_with_no_check_lost_is_a_lower_line_not_a_regression():
    held = {"behaviour": 1, "claims supported": 0, "fact: x": 1}
    base = run(case("q1", held, faithfulness=0.8, correctness=1.0))
    new = run(case("q1", held, faithfulness=0.5, correctness=1.0))
    for baseline in (base, compact(base)):
        diff = compare(new, baseline)
        assert [c.line() for c in diff.changes] == ["lower:  q1: faithfulness 80% -> 50%"]
        assert not diff.regressed and diff.summary() == "no regressions"


def test_a_judge_criterion_that_passed_and_fails_now_is_worse():
    base = run(case("q1", FAILING, judge={"polite": True, "concise": False}))
    new = run(case("q1", FAILING, judge={"polite": False, "concise": False}))
    for baseline in (base, compact(base)):
        assert [c.detail for c in compare(new, baseline).changes] == [
            "judge criterion 'polite' no longer passes"
        ]


def test_a_version_2_baseline_has_no_checks_and_is_compared_by_verdicts_alone():
    base = run(case("q1", FAILING))
    text = Baseline.from_run(base).to_text()
    old = text.replace('"version": 3', '"version": 2')
    old = old.replace(
        '"checks": {"behaviour": 1, "citation": 0, "fact: x": 1, "fact: y": 0}, ', ""
    ).replace('"found": ["x", "y"], ', "")
    assert "checks" not in old and "found" not in old
    v2 = read_baseline_text(old, "baseline.json")
    assert v2.cases[0].checks is None and v2.cases[0].found is None
    new = run(case("q1", {**FAILING, "fact: x": 0}, retrieved=("x",)))
    # only the recall drop: which checks held was not kept
    assert [c.line() for c in compare(new, v2).changes] == ["WORSE:  q1: retrieval 100% -> 50%"]


def test_the_flip_line_says_it_counts_whole_answer_verdicts():
    assert flips_text(McNemar(worse=3, better=1, p_value=0.625)) == (
        "answer verdicts that flipped: 1 fail -> pass, 3 pass -> fail "
        "(McNemar exact test p=0.62, not significant)"
    )
    assert "p=1.9e-6, significant" in flips_text(McNemar(worse=20, better=0, p_value=1.9e-6))


def test_graded_means_pair_the_questions_scored_in_both_and_show_when_they_move():
    from ragrail.reports.terminal.diff import diff_text

    held = {"behaviour": 1, "fact: x": 1}
    base = run(
        case("a", held, correctness=1.0, faithfulness=1.0),
        case("b", held, correctness=0.5, faithfulness=None),
    )
    new = run(
        case("a", held, correctness=0.5, faithfulness=0.5),
        case("b", held, correctness=0.5, faithfulness=0.25),  # no baseline figure: left out
        case("c", held, correctness=0.0, faithfulness=0.0),  # new: left out
    )
    diff = compare(new, compact(base))
    # correctness (1.0 + 0.5) / 2 -> (0.5 + 0.5) / 2; faithfulness over "a" alone
    assert diff.graded == {"correctness": (0.75, 0.5), "faithfulness": (1.0, 0.5)}
    text = diff_text(diff, width=100)
    assert "  correctness    0.75 -> 0.50" in text
    assert "  faithfulness   1.00 -> 0.50" in text
    same = compare(base, compact(base))
    assert "correctness" not in diff_text(same, width=100)


def test_a_fact_renamed_or_added_is_not_lost_from_retrieval():
    base = run(case("q1", FAILING, facts=("x", "y", "z"), retrieved=("x",)))
    # "y" -> "Y": a label the baseline never had, missed there and here
    renamed = run(case("q1", FAILING, facts=("x", "Y", "z"), retrieved=("x",)))
    # "w" added and not found: the recall drops (1/3 -> 1/4), but no fact was lost: the
    # golden set changed, not the system (tests/test_diff_edits.py)
    added = run(case("q1", FAILING, facts=("x", "y", "z", "w"), retrieved=("x",)))
    for baseline in (base, compact(base)):
        assert compare(renamed, baseline).changes == []
        assert compare(added, baseline).changes == []
        assert compare(added, baseline).edited_cases == ["q1"]


def test_a_recall_that_rose_while_a_fact_was_lost_is_worse_not_fixed():
    base = run(case("q1", FAILING, facts=("a", "b", "c"), retrieved=("a",)))
    new = run(case("q1", FAILING, facts=("a", "b", "c"), retrieved=("b", "c")))
    assert [c.line() for c in compare(new, base).changes] == [
        'WORSE:  q1: fact "a" no longer retrieved'
    ]


def test_no_lower_line_beside_a_worse_line_of_the_same_question():
    held = {"behaviour": 1, "claims supported": 0, "fact: x": 1, "fact: y": 1}
    base = run(case("q1", held, retrieved=("x", "y"), correctness=1.0, faithfulness=0.8))
    new = run(case("q1", held, facts=("x", "y", "z"), retrieved=("x", "z"),
                   correctness=1.0, faithfulness=0.5))  # fmt: skip
    assert [c.kind for c in compare(new, base).changes] == ["WORSE"]


def test_an_unchanged_run_moves_no_graded_mean_though_the_baseline_rounds():
    held = {"behaviour": 1}
    base = run(*[case(f"q{i}", held, correctness=c) for i, c in enumerate((1 / 3, 2 / 3, 0.0))])
    diff = compare(base, compact(base))
    was, now = diff.graded["correctness"]
    assert was == now  # both sides to six digits, as a baseline keeps them


def test_with_varying_answers_a_judge_criterion_is_tested_over_the_questions():
    # 12 questions, each judged once: "polite" held in all and is lost in 10 now, and one
    # other question's answers vary (so the gate is noise-aware). One question alone
    # (1 of 1 -> 0 of 1) could never be significant; over the questions it is the exact
    # sign test: 10 lost, 0 gained, p = 2^-10, whose floor 2^-10 is below 0.025 (Tarone).
    steady = {"behaviour": 3}
    base = [case(f"q{i}", steady, runs=3, judge={"polite": True}) for i in range(12)]
    new = [case(f"q{i}", steady, runs=3, judge={"polite": i >= 10}) for i in range(12)]
    base.append(case("v", {"behaviour": 2}, runs=3))
    new.append(case("v", {"behaviour": 1}, runs=3))
    diff = compare(run(*new), run(*base))
    assert diff.repeated
    worse = [c for c in diff.changes if c.kind == "WORSE"]
    assert [c.case_id for c in worse] == [f"q{i}" for i in range(10)]
    assert worse[0].detail == (
        "judge: polite no longer passes (sign test over the questions whose verdict changed: "
        "10 lost it, 0 gained it, p=9.8e-4, Holm 9.8e-4)"
    )
    # two questions losing it (p = 1/4, floor 1/4): within noise
    few = [case(f"q{i}", steady, runs=3, judge={"polite": i >= 2}) for i in range(12)]
    few.append(case("v", {"behaviour": 1}, runs=3))
    diff = compare(run(*few), run(*base))
    assert not diff.regressed
    assert [c.kind for c in diff.changes if c.case_id in ("q0", "q1")] == ["noise", "noise"]


def test_the_questions_named_for_a_set_that_got_worse_are_those_that_explain_it():
    from ragrail.diff.noise import Test, explaining, per_question

    # three questions 5/5 -> 0/5 and three flaky ones that barely moved: removing the
    # three full drops leaves a set that is no longer worse; the small drops are not named
    pairs = {f"d{i}": (5, 5, 0, 5) for i in range(3)} | {f"f{i}": (3, 5, 2, 5) for i in range(3)}
    tests = [Test(k, "", (a, n), (b, m)) for k, (a, n, b, m) in pairs.items()]
    per_question(tests, "drop")
    assert [t.case_id for t in explaining(tests, pairs)] == ["d0", "d1", "d2"]
    # one full drop among ten: it alone is named (the likeliest first, at least one)
    pairs = {"d": (5, 5, 0, 5)} | {f"f{i}": (3, 5, 2, 5) for i in range(9)}
    tests = [Test(k, "", (a, n), (b, m)) for k, (a, n, b, m) in pairs.items()]
    per_question(tests, "drop")
    assert [t.case_id for t in explaining(tests, pairs)] == ["d"]


def test_an_empty_family_says_what_the_repeats_allow():
    from ragrail.diff.noise import family_text

    text = family_text(0, 320, 1 / 252)
    assert "none of 320 could" in text
    assert "the smallest p these repeats allow is 0.004" in text and "--repeats 10" in text
    assert family_text(3, 320, 1 / 252).endswith(
        "the 3 of 320 tests whose counts could reach significance"
    )


def newly_failing(
    held: dict[str, int], lost: dict[str, int], problems: list[str], **judged: dict[str, bool]
) -> tuple[RunResult, CaseResult]:
    """A baseline where q1 held ``held`` and q1 now, holding ``lost``, failing with
    ``problems``; ``judged``: ``before=`` and ``after=`` judge criteria."""
    base = run(case("q1", held, judge=judged.get("before")))
    new = case("q1", lost, judge=judged.get("after"))
    new.problems = problems
    return base, new


def test_an_answer_that_newly_fails_names_what_its_problems_do_not_say():
    held = {"behaviour": 1, "fact: x": 1, "claims supported": 1, "check: no_pii": 1}
    lost = {"behaviour": 1, "fact: x": 0, "claims supported": 0, "check: no_pii": 0}
    base, new = newly_failing(
        held, lost, ['missing "x"'], before={"polite": True}, after={"polite": False}
    )
    for baseline in (base, compact(base)):
        # the missing fact is its problem; the claims, the code check and the judge's
        # criterion are lost too and no problem says so
        assert [c.detail for c in compare(run(new), baseline).changes] == [
            'answer now fails, missing "x"; now states a claim no context supports; '
            "check 'no_pii' no longer passes; judge criterion 'polite' no longer passes"
        ]
    # a check its problems name already is not said twice
    new.problems = ['missing "x"', 'unsupported claim "it is free"', "no_pii: an email"]
    assert [c.detail for c in compare(run(new), base).changes] == [
        'answer now fails, missing "x"; unsupported claim "it is free"; no_pii: an email; '
        "judge criterion 'polite' no longer passes"
    ]


def test_a_lost_check_its_problems_name_is_said_once_and_a_label_in_passing_is_not_naming():
    # hostile review of 600fbd2: the second check of a label is named "contains #2", its
    # problem says "contains: ...", and the line said the same loss twice; a check called
    # "a" counted as said by any problem holding the letter a
    held = {"behaviour": 1, "fact: x": 1, "check: contains": 1, "check: contains #2": 1}
    lost = {"behaviour": 1, "fact: x": 0, "check: contains": 1, "check: contains #2": 0}
    problems = ['missing "x"', 'contains: does not contain "backup"', "judge: polite failed (rude)"]
    base, new = newly_failing(
        held, lost, problems, before={"polite": True}, after={"polite": False}
    )
    assert [c.detail for c in compare(run(new), base).changes] == [
        'answer now fails, missing "x"; contains: does not contain "backup"; '
        "judge: polite failed (rude)"
    ]
    base, new = newly_failing(
        {"behaviour": 1, "fact: x": 1, "check: a": 1},
        {"behaviour": 1, "fact: x": 0, "check: a": 0},
        ['missing "a fact"'],
    )
    assert [c.detail for c in compare(run(new), base).changes] == [
        "answer now fails, missing \"a fact\"; check 'a' no longer passes"
    ]


def test_a_lost_code_check_says_what_it_found_when_its_problem_is_its_own():
    # two not_contains checks (no name: "not_contains" and "not_contains #2"); the question
    # already failed, and the second now finds "GUI" in the answer: the line says so, not
    # only its position
    held = {"behaviour": 1, "fact: x": 0, "check: not_contains": 1, "check: not_contains #2": 1}
    base = run(case("q1", held))
    one = case("q1", {**held, "check: not_contains #2": 0})
    one.check_problems = ['not_contains: contains "GUI"']
    (line,) = [c.line() for c in compare(run(one), base).changes]
    assert line == "WORSE:  q1: check 'not_contains #2' no longer passes (contains \"GUI\")"
    # both lost: the problems do not say which is which, so neither line guesses
    both = case("q1", {**held, "check: not_contains": 0, "check: not_contains #2": 0})
    both.check_problems = ['not_contains: contains "Windows"', 'not_contains: contains "GUI"']
    (line,) = [c.line() for c in compare(run(both), compact(base)).changes]
    assert line == (
        "WORSE:  q1: check 'not_contains' no longer passes; "
        "check 'not_contains #2' no longer passes"
    )
