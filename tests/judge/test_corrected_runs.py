"""Issue 24: corrected totals across runs (classic PPI for a run other than the labelled
one, the difference's shared-labels variance), bounds (clipping, labels that do not fit,
labels too old), kappa and Spearman intervals, and the judge's p-values."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from ragrail.cli.judge import _p_text
from ragrail.judge.core import judge_totals
from ragrail.judge.correct import Target, compare_corrected, correct_totals, labelled_source
from ragrail.judge.ppi import floored, ppi_mean
from ragrail.judge.ppi_change import ppi_difference
from ragrail.judge.validate import kappa_interval, spearman_interval
from ragrail.reports.judged import change_text, corrected_detail, corrected_text
from ragrail.reports.terminal.scorecard import judged_total_lines
from ragrail.store.history import History
from ragrail.store.validations import StoredValidation, load_validations
from tests.judge.test_correct import POLITE, TARGET, run_of, stored
from tests.store.test_validations import Agreement

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

Z = 1.959963984540054
KEY = ("key-polite", "polite")
F_ALL = [1.0, 1.0, 1.0, 0.0] * 25  # the labelled run: judge mean 0.75
B_ALL = [1.0, 1.0, 0.0, 0.0] * 25  # a later run: judge mean 0.50
F_LAB = [1.0, 1.0, 0.0, 0.0] * 5
Y_LAB = [1.0, 0.0, 0.0, 0.0] * 5


def test_difference_with_shared_labels_and_two_lambdas_hand_computed():
    """A = a later run (λ_A = 1), B = the labelled run (λ_B = 1/2), the same 20 labels.
    D = λ_A·mean f_A - λ_B·mean f_B + (λ_B - λ_A)·mean f(X) = 0.5 - 0.375 - 0.25 = -0.125
    (= θ̂_A - θ̂_B = 0.25 - 0.375). λ_A f_A - λ_B f_B per block = (.5, .5, -.5, 0): mean
    1/8, σ² = 0.171875·100/99. Labels' term: (λ_A - λ_B)²·σ²_f(X) = 1/4·(1/4·20/19).
    Var = 0.171875/99 + (1/16)/19."""
    d = ppi_difference(B_ALL, F_LAB, Y_LAB, F_ALL, F_LAB, Y_LAB, paired=True, lam_a=1.0, lam_b=0.5)
    assert (d.a.theta, d.b.theta) == pytest.approx((0.25, 0.375))
    assert d.estimate == pytest.approx(-0.125)
    half = Z * math.sqrt(0.171875 / 99 + 0.0625 / 19)
    assert (d.low, d.high) == pytest.approx((-0.125 - half, -0.125 + half))
    # with one λ the labels cancel: D = mean(f_A - f_B), Var = σ²(f_A - f_B)/N only
    same = ppi_difference(B_ALL, F_LAB, Y_LAB, F_ALL, F_LAB, Y_LAB, paired=True, tuned=False)
    half = Z * math.sqrt(0.1875 / 99)
    assert same.estimate == pytest.approx(-0.25)
    assert (same.low, same.high) == pytest.approx((-0.25 - half, -0.25 + half))


def test_a_difference_with_nothing_varying_is_never_zero_width():
    """Two identical later runs: D = 0 and every term's σ² is 0; the judged term is
    floored at w(1 - w), w = z²/(N + z²), so the half-width is z·√(w(1-w)/N) = w."""
    d = ppi_difference(F_ALL, F_LAB, Y_LAB, F_ALL, F_LAB, Y_LAB, paired=True, tuned=False)
    w = Z * Z / (100 + Z * Z)
    assert d.estimate == 0.0 and (d.low, d.high) == pytest.approx((-w, w))
    assert floored(0.25, 10, Z) == 0.25 and floored(0.0, 100, Z) == pytest.approx(w * (1 - w))


def test_classic_ppi_across_runs_is_unbiased_where_a_tuned_lambda_is_not():
    """Same-error judge (benchmarks/bench_corrected.py), labels from a run at 0.60 applied
    to a run at 0.50, 1,000 seeds: classic PPI's mean error is 0 within 0.006 (its sd over
    1,000 runs is about 0.003); the old tuned λ misses by more than 0.02."""
    import bench_corrected as bench
    import numpy as np

    errs_new, errs_old = [], []
    for i in range(1000):
        rng = np.random.default_rng([7, i])
        f_lab, y_lab = bench.pairs(rng, 0.60, 100, "same error")
        f_now, _ = bench.pairs(rng, 0.50, 300, "same error")
        truth = bench.truth(0.50, "same error")
        errs_new.append(ppi_mean(f_now, f_lab, y_lab, lam=1.0).theta - truth)
        errs_old.append(ppi_mean(f_now, f_lab, y_lab).theta - truth)
    assert abs(np.mean(errs_new)) < 0.006
    assert np.mean(errs_old) > 0.02


def test_the_benchmark_covers_across_runs():
    import bench_corrected as bench

    r = bench.simulate(bench.SCENARIOS[1], "same error", trials=300)
    # true coverage 95%: P(<= 88% of 300) is far below 1e-4
    assert r.total_after >= 0.88 and r.diff_after >= 0.88
    assert r.diff_before < 0.5  # the old per-run λ, far from 95%


def test_judge_from_90_to_40_percent_moves_the_corrected_total_and_the_diff():
    """Issue 24's acceptance. People passed all 20 labels; the judge passed 18 of them
    (90%). Run 2 is the labelled run again (PPI++: λ = 0, the labels' rate, 1.0); run 3's
    judge passes 40%: classic PPI 0.40 + (1 - 0.90) = 0.50. Before issue 24 both printed
    the labels' rate and the diff +0.0 [+0.0, +0.0]. The paired difference is
    D = 0.40 - 0·0.90 + (0 - 1)·0.90 = -0.50, and its interval leaves out 0."""
    labelled = run_of([True] * 18 + [False] * 2)
    pairs = [(1.0, 1.0)] * 18 + [(0.0, 1.0)] * 2
    found = {KEY: stored(pairs, on=labelled)}
    again = run_of([True] * 18 + [False] * 2)
    again.judge_corrected = correct_totals(again, [TARGET], found)
    later = run_of([True] * 8 + [False] * 12)
    later.judge_corrected = correct_totals(later, [TARGET], found)
    c2, c3 = again.judge_corrected["judge_polite"], later.judge_corrected["judge_polite"]
    assert (c2.method, c2.lam, c2.estimate) == ("ppi++", 0.0, 1.0)
    assert (c3.method, c3.lam) == ("ppi", 1.0) and c3.estimate == pytest.approx(0.5)
    assert c3.low is not None and c3.low < 0.5 < c3.high
    assert "assumes the judge errs on this run as it did on the labelled one" in (
        corrected_detail(c3)
    )
    (change,), notes = compare_corrected(again, later)
    assert notes == [] and change.paired and change.methods == ("ppi++", "ppi")
    assert change.difference == pytest.approx(-0.5)
    # Var = σ²(f_3)/20 + (0 - 1)²·σ²_f(X)/20: f_3 = 8 of 20, f(X) = 18 of 20
    var = (0.4 * 0.6 * 20 / 19) / 20 + (0.9 * 0.1 * 20 / 19) / 20
    assert (change.low, change.high) == pytest.approx(
        (-0.5 - Z * math.sqrt(var), -0.5 + Z * math.sqrt(var))
    )
    assert change.significant and "the interval leaves out 0" in change_text(change)


def test_labels_that_do_not_fit_the_run_are_a_note_not_a_crash():
    """The judge passed all 20 labelled answers, people 2 of them (mean error -0.9);
    this run's judge passes 20%: θ̂ = 0.2 - 0.9 = -0.7, and θ̂ + z·se < 0: no interval
    (before issue 24: high < low 0, a ValidationError and exit 3)."""
    pairs = [(1.0, 0.0)] * 18 + [(1.0, 1.0)] * 2
    run = run_of([True] * 20 + [False] * 80)
    run.judge_stats = judge_totals(run)
    run.judge_corrected = correct_totals(run, [TARGET], {KEY: stored(pairs)})
    c = run.judge_corrected["judge_polite"]
    assert not c.fits and c.low is None and c.high is None and c.labels_to_halve is None
    assert c.estimate == 0.0 and c.unclipped == pytest.approx(-0.7)
    text = corrected_text(c)
    assert "corrected 0.0% (clipped from -70.0%) no interval (the labels do not fit this run)" in (
        text
    )
    assert "the labels do not fit this run" in corrected_detail(c)
    assert any("do not fit" in line for line in judged_total_lines(run))
    again = type(run).model_validate_json(run.to_json())  # a results file reads back
    assert again.judge_corrected["judge_polite"] == c
    other = run_of([True] * 20 + [False] * 80)
    other.judge_corrected = run.judge_corrected
    changes, notes = compare_corrected(run, other)
    assert changes == [] and "the labels do not fit either run" in notes[0]


def test_labels_from_another_system_are_said_to_be_too_old():
    labelled = run_of([True, True, False, False])
    labelled.config.model = "model-a"
    source = labelled_source(labelled, TARGET)
    run = run_of([True, True, True, False])
    run.config.model, run.config.top_k = "model-b", 9
    found = {KEY: StoredValidation(1, "2026-12-01T10:00:00+00:00", [("q0", 1.0, 1.0)] * 2, source)}
    c = correct_totals(run, [TARGET], found)["judge_polite"]
    assert c.stale == ["model", "top_k"] and c.method == "ppi"
    assert "labels may be too old for this run: labelled on another system (model, top_k" in (
        corrected_detail(c)
    )
    labelled.judge_corrected = {}
    same = correct_totals(labelled, [TARGET], found)["judge_polite"]
    assert same.stale == [] and same.method == "ppi++"


def test_a_validation_keeps_its_labelled_run_and_an_older_one_reads_none(tmp_path):
    path = tmp_path / "history.sqlite"
    run = run_of([True, False])
    store = History(path)
    try:
        store.record_validation("k", "j", "polite", Agreement(1, [("q0", 1.0, 1.0)]))
        src = labelled_source(run, Target("polite", POLITE, "k"))
        store.record_validation("k", "j", "tone", Agreement(1, [("q0", 1.0, 1.0)]), src)
    finally:
        store.close()
    found = load_validations(path, [("k", "polite"), ("k", "tone")])
    assert found["k", "polite"].source is None and found["k", "tone"].source == src
    assert src["system"]["answerer"] == "standin" and src["digest"].startswith("sha256:")


def test_kappa_at_perfect_agreement_has_a_wilson_mapped_interval():
    """20 pairs, 10 passed and 10 failed by both: the bootstrap gives [1, 1]. p_e = 1/2;
    Wilson's low end for 20 of 20 is 20/(20 + z²): kappa's low (L - 1/2)/(1/2)."""
    pairs = [(1, 1)] * 10 + [(0, 0)] * 10
    low, high = kappa_interval(pairs)
    assert high == 1.0 and low == pytest.approx((20 / (20 + Z * Z) - 0.5) / 0.5, abs=1e-6)
    assert low < 0.8
    assert kappa_interval([(1, 1)] * 5) is None  # p_e = 1: kappa undefined


def test_spearman_interval_uses_the_bonett_wright_standard_error():
    # rho 0.5, n 20: SE = √((1 + 0.125)/17) = 0.257248, not 1/√17 = 0.242536
    low, high = spearman_interval(0.5, 20)
    se = math.sqrt(1.125 / 17)
    assert (low, high) == pytest.approx(
        (math.tanh(math.atanh(0.5) - 1.959964 * se), math.tanh(math.atanh(0.5) + 1.959964 * se))
    )
    assert high - low > math.tanh(math.atanh(0.5) + 1.959964 / math.sqrt(17)) - math.tanh(
        math.atanh(0.5) - 1.959964 / math.sqrt(17)
    )


@pytest.mark.parametrize(
    ("p", "text"), [(3.6e-89, "3.6e-89"), (0.00012, "0.00012"), (0.024, "0.024"), (1.0, "1.000")]
)
def test_small_p_values_print_in_scientific_notation(p, text):
    assert _p_text(p) == text
