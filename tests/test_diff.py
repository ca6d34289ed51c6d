from __future__ import annotations

from ragrail.diff import compare, config_changes
from ragrail.records.results import (
    CaseResult,
    JudgeResult,
    RetrievedChunk,
    RunResult,
    Sample,
    Totals,
    Trace,
)
from ragrail.run import compute_totals
from tests.factories import run_result


def case(cid: str, recall: float | None, passed: bool | None, problems=()) -> CaseResult:
    return CaseResult(
        id=cid,
        question="q",
        sources=["a"] if recall is not None else [],
        facts=["f"] if recall is not None else [],
        retrieval_hit=None if recall is None else recall > 0,
        retrieval_recall=recall,
        answer_pass=passed,
        problems=list(problems),
        trace=Trace(case_id=cid),
        answer_runs=0 if passed is None else 1,
        answer_passes=1 if passed else 0,
    )


def sampled(cid: str, passes: int, runs: int) -> CaseResult:
    c = case(cid, 1.0, passes == runs, [] if passes == runs else ['missing "x"'])
    c.answer_runs, c.answer_passes = runs, passes
    return c


def run(
    cases: list[CaseResult], answerer: str = "standin", top_k: int = 3, model=None
) -> RunResult:
    return run_result(cases, top_k=top_k, answerer=answerer, answerer_label=answerer, model=model)


def test_per_question_diff_catches_what_totals_hide():
    base = run([case("a", 1.0, True), case("b", 1.0, False), case("c", 0.5, False)])
    new = run([case("a", 1.0, False, ['missing "x"']), case("b", 1.0, True), case("c", 1.0, False)])
    assert base.totals.answer_pass_rate == new.totals.answer_pass_rate
    diff = compare(new, base)
    assert [c.line() for c in diff.changes] == [
        "fixed:  b: answer now passes",
        "fixed:  c: retrieval 50% -> 100%",
        'WORSE:  a: answer now fails, missing "x"',
    ]
    assert diff.regressed


def test_any_recall_drop_is_worse_and_undefined_is_skipped():
    base = run([case("a", 1.0, True), case("n", None, True)])
    new = run([case("a", 0.5, True), case("n", None, True)])
    diff = compare(new, base)
    assert [c.line() for c in diff.changes] == ["WORSE:  a: retrieval 100% -> 50%"]


def test_answers_from_another_answerer_are_not_compared():
    base = run([case("a", 1.0, True)])
    new = run([case("a", 0.0, False)], answerer="anthropic", model="claude-opus-5")
    diff = compare(new, base)
    assert not diff.answers_compared
    assert "answers not compared" in diff.answers_note
    assert [c.aspect for c in diff.changes] == ["retrieval"]


def test_new_and_removed_cases_and_config_changes():
    base = run([case("a", 1.0, True), case("gone", 1.0, True)])
    new = run([case("a", 1.0, True), case("added", 0.0, False)], top_k=1)
    diff = compare(new, base)
    assert diff.new_cases == ["added"] and diff.removed_cases == ["gone"]
    assert not diff.regressed
    assert config_changes(base, new) == ["top_k 3 -> 1"]


def test_totals_denominators():
    cases = [
        case("a", 1.0, True),
        case("b", 0.5, False),
        case("n", None, True),
        case("e", 0.0, None),
    ]
    cases[3].trace.error = "boom"
    t: Totals = compute_totals(cases)
    assert t.n_retrieval == 3 and t.hit_rate == 2 / 3 and t.recall == 0.5
    assert t.n_answers == 3 and t.answers_passed == 2 and t.n_errors == 1


def test_fisher_matches_a_hand_computed_value():
    from ragrail.diff import fisher_one_sided

    # 5/5 vs 1/5: P(X >= 5) for the hypergeometric with 6 passes among 10, 5 drawn
    # = C(6,5)*C(4,0)/C(10,5) = 6/252
    assert abs(fisher_one_sided(5, 5, 1, 5) - 6 / 252) < 1e-12


def test_repeated_samples_need_a_drop_significant_across_the_golden_set():
    base = run([sampled("a", 5, 5), sampled("b", 5, 5), sampled("c", 5, 5), sampled("d", 2, 5)])
    new = run([sampled("a", 4, 5), sampled("b", 1, 5), sampled("c", 0, 5), sampled("d", 5, 5)])
    diff = compare(new, base)
    lines = [c.line() for c in diff.changes]
    # Fisher floors (the smallest p each table's margins allow): a (9 passes of 10) 126/252,
    # b (6 of 10) 6/252, c (5 of 10) 1/252, d (7 of 10) 21/252. Tarone at 0.025: k = 1 has
    # two floors <= 0.025 (b, c), k = 2 has one (<= 0.0125: c), so the family is {c} and
    # c's Holm-adjusted p is its own, 1/252 < 0.025: WORSE. b (p = 6/252) is outside the
    # family, but the set as a whole got worse (below) and b's own p < 0.05 names it as a
    # drop that explains it; a and d (2/5 -> 5/5, p = 21/252) are noise.
    assert [line.split(" (")[0] for line in lines] == [
        "noise:  a: answer pass rate 5/5 -> 4/5",
        "noise:  d: answer pass rate 2/5 -> 5/5",
        "WORSE:  b: answer pass rate 5/5 -> 1/5",
        "WORSE:  c: answer pass rate 5/5 -> 0/5",
    ]
    assert "(Fisher p=0.004, Holm 0.004)" in lines[3]
    assert lines[2].endswith("(Fisher p=0.02): within noise alone, but the golden set as a whole "
                             'got worse; missing "x"')
    # the set: passes before given each question's total (T of 10) are hypergeometric;
    # S = 5 + 5 + 5 + 2 = 17, and P(S >= 17) by brute force over every table
    from itertools import product
    from math import comb

    def law(t: int) -> dict[int, float]:
        return {a: comb(t, a) * comb(10 - t, 5 - a) / comb(10, 5) for a in range(6) if a <= t}

    laws = [law(9), law(6), law(5), law(7)]
    p = sum(
        pa * pb * pc * pd
        for (a, pa), (b, pb), (c, pc), (d, pd) in product(*(x.items() for x in laws))
        if a + b + c + d >= 17
    )
    assert diff.set_test is not None and abs(diff.set_test.p - p) < 1e-12
    assert diff.set_test.significant and diff.answer_flips is None
    assert diff.regressed and [c.case_id for c in diff.worse] == ["b", "c"]


def errored(cid: str, reason: str = "HTTP 500", facts: bool = True, repeats: int = 1):
    """A question whose call failed before anything came back, as scoring leaves it."""
    c = case(cid, 0.0 if facts else None, None)
    c.trace.error = reason
    c.trace.samples = [Sample(error=reason) for _ in range(repeats - 1)]
    return c


def test_a_baseline_pass_that_now_errors_is_an_error_line_not_a_regression():
    base = run([case("a", 1.0, True), case("b", 1.0, False), case("c", 0.0, False)])
    new = run([errored("a"), case("b", 1.0, False), errored("c", "timeout")])
    diff = compare(new, base)
    # a passed (retrieval and answer) and errors now; c failed both before: no ERROR line,
    # and neither gets a WORSE "retrieval 100% -> 0%" for recall the failed call never had.
    assert [c.line() for c in diff.changes] == [
        "ERROR:  a: passed in the baseline, now errors: HTTP 500"
    ]
    assert not diff.regressed and diff.has_errors
    assert diff.errored_cases == ["a", "c"]
    assert diff.summary() == (
        "1 question passed in the baseline and now errors; 1 other question failed to run"
    )


def test_errors_come_after_worse_and_both_are_in_the_summary():
    base = run([case("a", 1.0, True), case("b", 1.0, True)])
    new = run([errored("a"), case("b", 0.5, True)])
    diff = compare(new, base)
    assert [c.kind for c in diff.changes] == ["WORSE", "ERROR"]
    assert diff.regressed
    assert (
        diff.summary() == "1 question passed in the baseline and now errors; 1 question got worse"
    )


def test_an_error_after_retrieval_keeps_its_retrieval_comparison():
    # the pipeline retrieved, then the model call failed: recall is real and is compared
    base = run([case("a", 1.0, True)])
    new_case = case("a", 0.5, None)
    new_case.trace.error = "HTTP 529"
    new_case.trace.retrieved = [RetrievedChunk(id="x#1", source="a", rank=1, score=0.5, text="t")]
    diff = compare(run([new_case]), base)
    assert [c.line() for c in diff.changes] == [
        "WORSE:  a: retrieval 100% -> 50%",
        "ERROR:  a: passed in the baseline, now errors: HTTP 529",
    ]


def test_judge_errors_are_errors_of_the_diff():
    base = run([case("a", 1.0, True)])
    now = case("a", 1.0, True)
    now.judge = JudgeResult(errors=["faithfulness: timeout"])
    diff = compare(run([now]), base)
    assert diff.changes == [] and diff.has_errors and not diff.regressed
    assert diff.summary() == "the judge failed on 1 question"
    assert compare(base, base).summary() == "no regressions"


def test_headline_rates_count_errors_as_not_passing():
    # The case: the one question that reaches the model errors, a no-facts
    # question passes without a call. Over the survivors that read "100% (1 of 1)".
    t = compute_totals([errored("e"), case("n", None, True)])
    assert (t.answers_passed, t.n_answers, t.n_answer_errors) == (1, 1, 1)
    assert t.answer_pass_rate == 1 / 2 and t.stats["answer_pass_rate"].n == 2
    # hit rate and recall: the errored question is a miss, and counted apart
    assert t.n_retrieval == 1 and t.hit_rate == 0.0 and t.recall == 0.0
    assert t.n_retrieval_errors == 1 and t.n_errors == 1


def test_every_repeat_of_an_errored_question_counts_as_a_lost_answer():
    # 2 of 3 repeats pass for s; e errored on all 3 repeats: 2 passes of 6 asked
    s = sampled("s", 2, 3)
    t = compute_totals([s, errored("e", repeats=3)])
    assert (t.answers_passed, t.n_answers, t.n_answer_errors) == (2, 3, 3)
    assert t.answer_pass_rate == 2 / 6


def test_a_run_where_every_call_failed_passes_nothing():
    t = compute_totals([errored("e")])
    assert t.answer_pass_rate == 0.0 and t.hit_rate == 0.0


def test_recorded_rate_of_older_history_rows_counts_errors():
    from ragrail.run import recorded_answer_rate

    # recorded before n_answer_errors existed: a survivors' rate of 100% with 1 error
    old = {"answers_passed": 1, "n_answers": 1, "n_errors": 1}
    assert recorded_answer_rate(old) == 1 / 2
    assert recorded_answer_rate(old, repeats=3) == 1 / 4
    new = {"answers_passed": 1, "n_answers": 1, "n_errors": 1, "n_answer_errors": 3}
    assert recorded_answer_rate(new) == 1 / 4
    assert recorded_answer_rate({"answers_passed": 0, "n_answers": 0, "n_errors": 0}) is None


# ---------------------------------------------------------------- many questions at once


def test_a_baseline_in_another_order_is_matched_by_id_and_lines_follow_the_run():
    base = run([case("c", 1.0, True), case("a", 1.0, True), case("b", 0.5, False)])
    new = run([case("a", 0.5, True), case("b", 1.0, True), case("c", 0.0, False, ["x"])])
    assert [c.line() for c in compare(new, base).changes] == [
        "fixed:  b: retrieval 50% -> 100%",
        "fixed:  b: answer now passes",
        "WORSE:  a: retrieval 100% -> 50%",
        "WORSE:  c: retrieval 100% -> 0%",
        "WORSE:  c: answer now fails, x",
    ]


def test_the_answer_flip_test_counts_questions_answered_in_both_runs():
    from ragrail.diff import answer_flip_test

    base = run([case(i, 1.0, True) for i in "abc"] + [case("d", 1.0, False), case("n", 1.0, None)])
    new = run(
        [case(i, 1.0, False) for i in "abc"]
        + [case("d", 1.0, False), case("n", 1.0, False), case("new", 1.0, False)]
    )
    flips = compare(new, base).answer_flips
    # a, b, c pass -> fail; d failed before; n was not answered; new has no baseline.
    # McNemar: 3 flips all one way, p = 2 * P(X <= 0), X ~ Binomial(3, 1/2) = 2/8
    assert flips is not None and (flips.worse, flips.better, flips.p_value) == (3, 0, 0.25)
    assert flips == answer_flip_test(new, base)


def test_a_large_diff_is_each_question_s_own_diff_in_order():
    import random

    rng = random.Random(13)
    old_cases, new_cases = [], []
    for i in range(400):
        cid = f"q{i}"
        recall = rng.choice((None, 0.0, 0.5, 1.0))
        runs = 1  # answered once: each question decided alone (repeats: test_diff_noise)
        old_cases.append(sampled(cid, rng.randint(0, runs), runs))
        old_cases[-1].retrieval_recall = recall
        if i % 97 == 5:
            new_cases.append(errored(cid))
            continue
        new_cases.append(sampled(cid if i % 50 else f"new{i}", rng.randint(0, runs), runs))
        new_cases[-1].retrieval_recall = rng.choice((recall, recall, 0.0, 1.0))
    diff = compare(run(new_cases), run(old_cases))
    olds = {c.id: c for c in old_cases}
    each = [compare(run([n]), run([olds[n.id]])).changes for n in new_cases if n.id in olds]
    in_order = [
        ch.line()
        for kind in ("fixed", "WORSE", "ERROR")
        for chs in each
        for ch in chs
        if ch.kind == kind
    ]
    assert [c.line() for c in diff.changes] == in_order
    assert len(diff.worse) > 50 and len(diff.fixed) > 50 and len(diff.errors) >= 1
    assert diff.new_cases == [c.id for c in new_cases if c.id.startswith("new")]
    assert diff.removed_cases == [f"q{i}" for i in range(400) if i % 50 == 0 and i % 97 != 5]


def test_comparing_leaves_the_garbage_collector_as_it_found_it():
    import gc

    base = run([case("a", 1.0, True)])
    new = run([case("a", 0.5, False, ["x"])])
    assert gc.isenabled()
    compare(new, base)
    assert gc.isenabled()
    gc.disable()
    try:
        compare(new, base)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_systems_own_settings_and_the_citation_rule_are_config_changes():
    base = run_result([case("a", 1.0, True)], top_k=3, settings={"chunk_size": 512, "top_k": 3})
    new = run_result(
        [case("a", 1.0, True)],
        top_k=1,
        settings={"top_k": 1, "splitter": "sentence"},
        citations="none cited",
    )
    assert config_changes(base, new) == [
        "top_k 3 -> 1",  # the system's own top_k says the same: one line
        "chunk_size 512 -> -",
        "splitter - -> sentence",
        "citations required -> not required",
    ]
    assert config_changes(new, new.model_copy(deep=True)) == []


def test_a_rate_gets_wilson_s_interval_whatever_the_metric_is_called():
    from ragrail.records.trace import ArticleScores

    cases = [case(f"q{i}", 1.0 if i < 10 else 0.0, True) for i in range(11)]
    for c in cases:
        hit = 1.0 if c.retrieval_hit else 0.0
        c.articles = ArticleScores(success_at_k=hit, precision_at_k=hit / 2)
    stats = compute_totals(cases).stats
    # 10 of 11: Wilson's 95% interval, by hand: centre (10 + z^2/2) / (11 + z^2),
    # half-width z sqrt(10 * 1 / 11 + z^2 / 4) / (11 + z^2), z = 1.959964: [0.623, 0.984]
    for name in ("hit_rate", "recall", "article_success_at_k"):
        s = stats[name]
        assert (round(s.low, 3), round(s.high, 3)) == (0.623, 0.984), name
