"""Questions whose facts were edited since the baseline are compared fact by fact: what
the edit alone moved (recall, verdict, correctness) is no regression; a fact the baseline
held and the question still has is."""

from __future__ import annotations

from ragrail.diff import compare, known_failures
from ragrail.diff.edits import edited
from ragrail.reports.junit import junit_xml
from ragrail.reports.machine import diff_json
from ragrail.reports.terminal.diff import diff_text
from tests.test_diff_checks import case, compact, run

HELD = {"behaviour": 1, "fact: x": 1, "fact: y": 1}


def v2(base) -> object:
    """``base`` as a version 2 baseline (no checks, no found facts) reads back."""
    import json

    from ragrail.store.baseline import Baseline
    from ragrail.store.baseline.read import read_baseline_text

    data = json.loads(Baseline.from_run(base).to_text())
    data["version"] = 2
    for c in data["cases"]:
        c["answer"].pop("checks")
        c["retrieval"].pop("found")
    return read_baseline_text(json.dumps(data), "baseline.json")


def test_what_each_kind_of_baseline_tells_of_an_edit():
    base = run(case("q1", HELD))
    same = case("q1", HELD, facts=("y", "x"), retrieved=("y", "x"))  # reordered: no edit
    added = case("q1", {**HELD, "fact: z": 0}, facts=("x", "y", "z"), retrieved=("x", "y"))
    renamed = case("q1", {"behaviour": 1, "fact: x": 1, "fact: Y": 0}, facts=("x", "Y"),
                   retrieved=("x",))  # fmt: skip
    for baseline in (base, compact(base)):
        old = baseline.cases[0]
        assert not edited(old, same)
        assert edited(old, added) and edited(old, renamed)
    # version 2 kept the number of facts only: an added fact shows, a renamed one cannot
    old = v2(base).cases[0]
    assert edited(old, added) and not edited(old, renamed) and not edited(old, same)


def test_a_fact_added_to_a_passing_question_is_no_regression_but_one_it_held_lost_is():
    base = run(case("q1", HELD, correctness=1.0, faithfulness=1.0))
    # "z" added: the answer misses it, so the question fails now (recall 2/3, correctness
    # 2/3) with nothing the baseline held lost
    stricter = case("q1", {**HELD, "fact: z": 0}, facts=("x", "y", "z"), retrieved=("x", "y"),
                    correctness=2 / 3, faithfulness=1.0)  # fmt: skip
    stricter.problems = ['missing "z"']
    # the same edit, and "x" lost from retrieval and the answer: that is a regression
    worse = case("q1", {**HELD, "fact: x": 0, "fact: z": 0}, facts=("x", "y", "z"),
                 retrieved=("y",), correctness=1 / 3, faithfulness=1.0)  # fmt: skip
    for baseline in (base, compact(base)):
        diff = compare(run(stricter), baseline)
        assert diff.changes == [] and not diff.regressed and diff.edited_cases == ["q1"]
        assert diff.answer_flips is not None and diff.answer_flips.worse == 0
        assert "correctness" not in diff.graded  # a fraction of other facts
        assert known_failures(diff) == {
            "q1": "facts edited since the baseline, none it held lost: fails (answer fails)"
        }
        diff = compare(run(worse), baseline)
        assert [c.line() for c in diff.changes] == [
            'WORSE:  q1: fact "x" no longer retrieved',
            'WORSE:  q1: fact "x" no longer in the answer',
        ]


def test_a_fact_removed_from_a_failing_question_is_no_fixed_line():
    failing = {"behaviour": 1, "fact: x": 1, "fact: y": 0}
    base = run(case("q1", failing, retrieved=("x",)))
    lenient = run(case("q1", {"behaviour": 1, "fact: x": 1}, facts=("x",), retrieved=("x",)))
    for baseline in (base, compact(base), v2(base)):
        diff = compare(lenient, baseline)
        assert diff.changes == [] and diff.edited_cases == ["q1"]


def test_a_version_2_baseline_sees_an_added_fact_and_compares_nothing_it_moved():
    base = run(case("q1", HELD))
    added = case("q1", {**HELD, "fact: z": 0}, facts=("x", "y", "z"), retrieved=("x", "y"))
    diff = compare(run(added), v2(base))
    assert diff.changes == [] and diff.edited_cases == ["q1"]


def test_with_repeated_answers_an_edited_question_is_tested_check_by_check():
    # answers vary (q2), so the gate is noise-aware. q1's fact "z" is new: its verdict
    # 5/5 -> 0/5 is of other facts and is not tested; its fact "x", held in 5 of 5, is
    # held in none: Fisher p = 1/252, the only test whose margins can reach 0.025
    flaky = case("q2", {"behaviour": 3, "fact: w": 3}, facts=("w",), retrieved=("w",), runs=5)
    base = run(case("q1", {"behaviour": 5, "fact: x": 5, "fact: y": 5}, runs=5), flaky)
    stricter = case("q1", {"behaviour": 5, "fact: x": 5, "fact: y": 5, "fact: z": 0},
                    facts=("x", "y", "z"), retrieved=("x", "y"), runs=5)  # fmt: skip
    diff = compare(run(stricter, flaky), base)
    assert diff.repeated and diff.changes == [] and not diff.regressed
    assert diff.set_test is not None and diff.set_test.n == 1  # q2 alone: q1's is not paired
    lost = case("q1", {"behaviour": 5, "fact: x": 0, "fact: y": 5, "fact: z": 0},
                facts=("x", "y", "z"), retrieved=("x", "y"), runs=5)  # fmt: skip
    lost.problems = ['missing "x"']
    (line,) = [c.line() for c in compare(run(lost, flaky), base).changes]
    assert line == 'WORSE:  q1: fact: x held 5/5 -> 0/5 (Fisher p=0.004, Holm 0.004); missing "x"'


def test_reports_name_the_edited_questions_and_junit_skips_their_failure():
    base = run(case("q1", HELD), case("q2", HELD))
    stricter = case("q1", {**HELD, "fact: z": 0}, facts=("x", "y", "z"), retrieved=("x", "y"))
    stricter.problems = ['missing "z"']
    diff = compare(run(stricter, case("q2", HELD)), compact(base))
    assert "  facts edited since the baseline: q1" in diff_text(diff, width=100)
    assert diff_json(diff, 0)["edited_cases"] == ["q1"]
    xml = junit_xml(diff.run, diff)
    assert 'failures="0"' in xml and 'skipped="1"' in xml
    assert "facts edited since the baseline, none it held lost: fails" in xml
    assert 'failures="1"' in junit_xml(diff.run, diff, strict=True)
