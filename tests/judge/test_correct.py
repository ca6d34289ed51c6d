"""Judged totals corrected by a stored validation's labels, and compared between runs
(ragrail.judge.correct), against hand-computed figures."""

from __future__ import annotations

import math

import pytest

from ragrail.judge.config import CriterionConfig
from ragrail.judge.correct import (
    Target,
    as_pass,
    compare_corrected,
    correct_totals,
    label_pairs,
    labelled_source,
    recorrect,
    verdicts,
)
from ragrail.records.results import (
    CaseResult,
    CriterionResult,
    JudgeResult,
    LabelPair,
    RunResult,
    Trace,
)
from ragrail.store.validations import StoredValidation
from tests.factories import run_result

POLITE = CriterionConfig(name="polite", description="d")
SCORED = CriterionConfig(name="helpful", description="d", scale="1-5", pass_threshold=4)
Z = 1.959963984540054


def run_of(passes: list[bool | None], faith: list[float | None] | None = None) -> RunResult:
    """A run whose case i the judge passed on 'polite' (None: no verdict)."""
    cases = []
    for i, passed in enumerate(passes):
        criteria = [] if passed is None else [CriterionResult(name="polite", passed=passed)]
        f = faith[i] if faith is not None else None
        cases.append(
            CaseResult(
                id=f"q{i}",
                question="?",
                sources=["doc"],
                facts=["x"],
                trace=Trace(case_id=f"q{i}", answer="a"),
                judge=JudgeResult(faithfulness=f, criteria=criteria),
            )
        )
    return run_result(cases, judge="fake j")


def stored(
    pairs: list[tuple[float, float]], vid: int = 1, on: RunResult | None = None
) -> StoredValidation:
    """A validation of these (judge, human) pairs; ``on``: the run it was labelled on
    (None: another run, as a validation stored before schema 5 reads)."""
    source = labelled_source(on, TARGET) if on is not None else None
    return StoredValidation(
        vid,
        "2026-12-01T10:00:00+00:00",
        [(f"l{i}", j, h) for i, (j, h) in enumerate(pairs)],
        source,
    )


TARGET = Target("polite", POLITE, "key-polite")

# The hand example: the judge passes 3 of 4 answers; 8 labels, (judge, human) =
# (1,1), (1,0), (0,0), (1,1), twice.
RUN = [True, True, True, False]
PAIRS = [(1.0, 1.0), (1.0, 0.0), (0.0, 0.0), (1.0, 1.0)] * 2


def test_as_pass_reads_each_scale():
    assert as_pass(1.0, POLITE) == 1.0 and as_pass(0.0, None) == 0.0
    assert as_pass(3.0, POLITE) is None  # a score on a pass/fail criterion is off its scale
    assert as_pass(4.0, SCORED) == 1.0 and as_pass(3.0, SCORED) == 0.0
    assert as_pass(0.0, SCORED) is None and as_pass(6.0, SCORED) is None


def test_verdicts_are_the_judges_0_1_calls_and_leave_out_cases_without_one():
    run = run_of([True, None, False], faith=[1.0, 0.5, None])
    assert verdicts(run, TARGET) == {"q0": 1.0, "q2": 0.0}
    # faithfulness: faithful in every claim (1.0) or not; no claims checked: left out
    assert verdicts(run, Target("faithfulness", None, "k")) == {"q0": 1.0, "q1": 0.0}


def test_correct_totals_hand_computed():
    """The labelled run itself: PPI++. By hand. Judge over all N=4: mean f = 3/4, σ²_f = 0.25. Labelled n=8: the judge's
    mean is also 3/4, so θ̂ = λ·3/4 + (1/2 - λ·3/4) = 1/2 whatever λ.
    λ̂: pooled judge values (8 labelled + 4 all) hold nine 1s of 12, σ² = 2.25/11;
    Cov(Y, f) = 1.0/7; λ̂ = (1/7) / ((1 + 8/4)·2.25/11) = 11/47.25.
    Rectifier r = Y - λ̂f over the labels: values 1-λ, -λ, 0, 1-λ (twice), mean (2-3λ)/4.
    Var = λ²·0.25/4 + σ²_r/8."""
    run = run_of(RUN)
    found = {("key-polite", "polite"): stored(PAIRS, on=run)}
    corrected = correct_totals(run, [TARGET], found)["judge_polite"]
    assert corrected.method == "ppi++"
    lam = (1 / 7) / (3 * 2.25 / 11)
    r = [1 - lam, -lam, 0.0, 1 - lam] * 2
    mean_r = (2 - 3 * lam) / 4
    var_r = sum((x - mean_r) ** 2 for x in r) / 7
    se = math.sqrt(lam * lam * 0.25 / 4 + var_r / 8)
    assert corrected.raw == 0.75
    assert corrected.lam == pytest.approx(lam)
    assert corrected.estimate == pytest.approx(0.5)
    assert corrected.low == pytest.approx(0.5 - Z * se)
    assert corrected.high == pytest.approx(0.5 + Z * se)
    assert (corrected.n_judged, corrected.n_labelled) == (4, 8)
    assert corrected.measure == "polite pass rate" and corrected.validation_id == 1
    assert corrected.labels[1] == LabelPair(case_id="l1", judge=1.0, human=0.0)
    # the labels alone: 4 passes of 8, Wilson: centre 1/2, half z/(1 + z²/8)·√(1/32 + z²/256)
    half = Z / (1 + Z * Z / 8) * math.sqrt(1 / 32 + Z * Z / 256)
    assert corrected.human_only_low == pytest.approx(0.5 - half)
    assert corrected.human_only_high == pytest.approx(0.5 + half)


def test_another_run_is_corrected_by_classic_ppi_hand_computed():
    """Labels from another run: λ = 1 whatever the labels (module docstring). By hand:
    θ̂ = mean f + mean(Y - f) = 3/4 + (4/8 - 6/8) = 1/2; σ²_f over the 100 judged =
    (3/16)·100/99; Y - f over the labels = (0, -1, 0, 0) twice: mean -1/4, σ² = 1.5/7.
    Var = σ²_f/100 + (1.5/7)/8."""
    c = correct_totals(run_of(RUN * 25), [TARGET], {("key-polite", "polite"): stored(PAIRS)})[
        "judge_polite"
    ]
    se = math.sqrt(3 / 16 / 99 + 1.5 / 7 / 8)
    assert (c.method, c.lam, c.stale) == ("ppi", 1.0, [])
    assert c.estimate == pytest.approx(0.5)
    assert (c.low, c.high) == pytest.approx((0.5 - Z * se, 0.5 + Z * se))


def test_a_one_to_five_criterion_is_corrected_on_its_pass_rate():
    """Scores pass at the criterion's threshold (4) for the judge and the people alike:
    (5,4) (4,2) (2,1) (4,5) are (1,1) (1,0) (0,0) (1,1), the hand example's pairs."""
    target = Target("polite", SCORED, "k")
    scored = [(5.0, 4.0), (4.0, 2.0), (2.0, 1.0), (4.0, 5.0)] * 2
    assert [(p.judge, p.human) for p in label_pairs(stored(scored).pairs, SCORED)] == PAIRS
    got = correct_totals(run_of(RUN), [target], {("k", "polite"): stored(scored)})
    assert got["judge_polite"].estimate == pytest.approx(0.5)


def test_nothing_to_correct_gives_no_entry():
    run = run_of(RUN)
    assert correct_totals(run, [TARGET], {}) == {}  # no validation
    assert correct_totals(run, [TARGET], {("other-key", "polite"): stored(PAIRS)}) == {}
    off_scale = stored([(3.0, 1.0), (2.0, 0.0)])  # no pair on the pass/fail scale
    assert correct_totals(run, [TARGET], {("key-polite", "polite"): off_scale}) == {}
    unjudged = run_of([None, None])
    assert correct_totals(unjudged, [TARGET], {("key-polite", "polite"): stored(PAIRS)}) == {}


def test_one_label_corrects_without_an_interval():
    got = correct_totals(run_of(RUN), [TARGET], {("key-polite", "polite"): stored([(1.0, 0.0)])})
    c = got["judge_polite"]
    # classic: raw + mean(human - judge) = 0.75 - 1, clipped to 0 and said
    assert c.estimate == 0.0 and c.unclipped == pytest.approx(0.75 - 1.0)
    assert c.low is None and c.high is None and c.labels_to_halve is None


def test_recorrect_over_merged_questions_matches_a_fresh_correction():
    first = correct_totals(run_of(RUN), [TARGET], {("key-polite", "polite"): stored(PAIRS)})
    merged = run_of(RUN * 3)
    again = recorrect(merged, first)["judge_polite"]
    fresh = correct_totals(merged, [TARGET], {("key-polite", "polite"): stored(PAIRS)})
    assert again == fresh["judge_polite"]
    assert again.n_judged == 12


def corrected_run(passes: list[bool | None], pairs=PAIRS, vid: int = 1, key: str = "key-polite"):
    run = run_of(passes)
    target = Target("polite", POLITE, key)
    run.judge_corrected = correct_totals(run, [target], {(key, "polite"): stored(pairs, vid)})
    return run


def test_runs_sharing_a_validation_are_compared_paired():
    """Same labels for both: the labelled term is (λ_B - λ_A)·f, and the judged term is
    over the questions both runs judged, each case against itself."""
    before = corrected_run([True, True, True, False] * 5)
    now = corrected_run([True, False, True, False] * 5)
    (change,), notes = compare_corrected(before, now)
    assert notes == [] and change.paired
    assert change.now == pytest.approx(now.judge_corrected["judge_polite"].estimate)
    assert change.baseline == pytest.approx(before.judge_corrected["judge_polite"].estimate)
    assert change.difference == pytest.approx(change.now - change.baseline)
    assert change.low < change.difference < change.high
    assert (change.n_judged, change.n_labelled) == (20, 8)
    unpaired = corrected_run([True, False, True, False] * 5, vid=2)  # another validation
    (other,), _ = compare_corrected(before, unpaired)
    assert not other.paired
    # pairing removes the shared labels' noise: a narrower interval than unpaired
    assert change.high - change.low < other.high - other.low


def test_another_judge_is_not_compared_and_says_so():
    before = corrected_run(RUN, key="judge-a")
    now = corrected_run(RUN, key="judge-b")
    changes, notes = compare_corrected(before, now)
    assert changes == [] and len(notes) == 1 and "another judge, prompt or rubric" in notes[0]


def test_a_run_without_corrections_compares_nothing():
    assert compare_corrected(run_of(RUN), corrected_run(RUN)) == ([], [])
