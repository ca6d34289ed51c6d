"""A/B readout: each formula by hand or against scipy, Holm, power, and the planted
differences of the acceptance at a small size."""

from __future__ import annotations

import pytest

from ragrail.errors import InputError
from ragrail.online import inference
from ragrail.online.ab import AB_SIGNALS, compare
from ragrail.online.record import Conversation
from tests.online.synth import START, Truth, synth


def conv(cid: str, version: str, **fields) -> Conversation:
    return Conversation(id=cid, at=START, version=version, question=cid, answer="", **fields)


def test_newcombe_matches_his_published_example():
    # Newcombe (1998), Table II example (56/70 vs 48/80), method 10: 0.0524 to 0.3339
    ci = inference.newcombe(48, 80, 56, 70)
    assert ci.low == pytest.approx(0.0524, abs=1e-4)
    assert ci.high == pytest.approx(0.3339, abs=1e-4)
    assert inference.newcombe(1, 0, 1, 2) is None


def test_two_proportion_z_test_equals_the_uncorrected_chi_square():
    from scipy.stats import chi2_contingency

    p = inference.two_proportion_p(100, 1000, 130, 1000)
    expected = chi2_contingency([[100, 900], [130, 870]], correction=False)[1]
    assert p == pytest.approx(expected, rel=1e-9)
    # by hand: pooled 0.115, se √(0.115 · 0.885 · 0.002) = 0.014267, z = 2.1028
    assert p == pytest.approx(0.03548, abs=1e-4)


def test_small_counts_use_fishers_exact_test():
    from scipy.stats import fisher_exact

    # pooled 0.15 · 10 = 1.5 expected escalations per arm: under 5
    p = inference.two_proportion_p(0, 10, 3, 10)
    assert p == pytest.approx(fisher_exact([[0, 10], [3, 7]]).pvalue)
    assert p == pytest.approx(0.2105, abs=1e-4)
    assert inference.two_proportion_p(0, 0, 3, 10) == 1.0


def test_holm_by_hand():
    # sorted 0.005, 0.01, 0.03, 0.04 -> 4·0.005, 3·0.01, 2·0.03, max(0.06, 1·0.04)
    assert inference.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert inference.holm([0.5, 0.9]) == [1.0, 1.0]
    assert inference.holm([]) == []


def test_sample_size_formulas_by_hand():
    # p1 0.10, p2 0.13: (1.959964·√(2·0.115·0.885) + 0.841621·√(0.09 + 0.1131))² / 0.03²
    # = (0.884267 + 0.379291)² / 0.0009 = 1773.97
    assert inference.n_for_rates(0.10, 0.13) == 1774
    assert inference.n_for_rates(0.10, 0.10) is None
    # 2 · (1.959964 + 0.841621)² · 2² / 1² = 62.79
    assert inference.n_for_means(1.0, 2.0) == 63
    assert inference.n_for_means(0.0, 2.0) is None


def test_welch_interval_matches_scipy():
    from scipy.stats import ttest_ind

    a = [1.0, 2.0, 3.0, 4.0, 10.0]
    b = [2.0, 4.0, 4.5, 7.0, 9.0, 12.0]
    ci = inference.welch_ci(a, b)
    ref = ttest_ind(b, a, equal_var=False).confidence_interval(0.95)
    assert (ci.low, ci.high) == pytest.approx((ref.low, ref.high))
    assert inference.welch_ci([1.0], b) is None


def test_bootstrap_median_difference_is_reproducible():
    a = [float(x) for x in range(100)]
    b = [x + 20.0 for x in a]
    first = inference.bootstrap_quantile_difference(a, b)
    assert first == inference.bootstrap_quantile_difference(a, b)
    assert first.low < 20.0 < first.high
    assert inference.bootstrap_quantile_difference([], b) is None


def test_compare_by_hand():
    a = [conv(f"a{i}", "A", escalated=i < 1, latency_ms=100.0 + i, cost=1.0 + i) for i in range(10)]
    b = [conv(f"b{i}", "B", escalated=i < 5, latency_ms=150.0 + i, cost=1.5 + i) for i in range(10)]
    result = compare(a + b, reasked=set(), a="A", b="B")
    assert (result.n_a, result.n_b) == (10, 10)
    rows = {r.signal: r for r in result.rows}
    assert [r.signal for r in result.rows] == list(AB_SIGNALS)
    esc = rows["escalation"]
    assert esc.difference == pytest.approx(0.4)
    assert esc.p_value == pytest.approx(inference.two_proportion_p(1, 10, 5, 10))  # Fisher
    assert (esc.low, esc.high) == pytest.approx(
        (inference.newcombe(1, 10, 5, 10).low, inference.newcombe(1, 10, 5, 10).high)
    )
    assert rows["thumbs_down"].difference is None and rows["thumbs_down"].p_value is None
    from scipy.stats import median_test, ttest_ind

    lat = rows["latency_p50"]
    assert lat.difference == 50.0 and lat.test == "Mood median test"
    # every A below the pooled median, every B above: z = 1/√(0.25·0.2) = 4.472
    mood = median_test([100.0 + i for i in range(10)], [150.0 + i for i in range(10)],
                       correction=False)  # fmt: skip
    assert lat.p_value == pytest.approx(mood.pvalue)
    assert lat.p_value == pytest.approx(7.744e-6, rel=1e-3)
    cost = rows["cost"]
    assert cost.difference == pytest.approx(0.5) and cost.test == "Welch t-test"
    ref = ttest_ind([1.5 + i for i in range(10)], [1.0 + i for i in range(10)], equal_var=False)
    assert cost.p_value == pytest.approx(ref.pvalue)
    assert (cost.low, cost.high) == pytest.approx(tuple(ref.confidence_interval(0.95)))
    assert esc.test == "Fisher exact" and esc.family == 4  # escalation, re-ask, cost, latency
    # Holm over the four tested signals (no votes, no resolution logged)
    tested = [r for r in result.rows if r.p_value is not None]
    assert [r.p_adjusted for r in tested] == pytest.approx(
        inference.holm([r.p_value for r in tested])
    )
    # power for the observed 40 points from 10%: n_for_rates(0.1, 0.5)
    assert esc.n_needed == inference.n_for_rates(0.1, 0.5)
    assert esc.n_more == max(0, esc.n_needed - 10)
    mde = compare(a + b, set(), "A", "B", mde=0.02).rows[0]
    assert mde.mde == 0.02 and mde.n_needed == inference.n_for_rates(0.1, 0.12)


def test_an_unknown_variant_is_an_input_error_naming_the_versions():
    with pytest.raises(InputError, match=r"'C'.*versions: A"):
        compare([conv("a", "A")], set(), "A", "C")


def test_planted_differences_at_a_small_size():
    """20 seeded logs, 1,000 per arm, escalation 10% against 18% (z ≈ 5.2: power above
    0.99 after Holm) and against 10%: the planted difference is found in all but at
    most one, the null in few (at most 5% each: more than 4 of 20 has probability
    0.3%)."""
    found = false = 0
    for seed in range(20):
        base = {"A": (1000, Truth(escalation=0.10))}
        log = synth({**base, "B": (1000, Truth(escalation=0.18))}, seed=seed)
        found += compare(log, set(), "A", "B", resamples=200).rows[0].significant
        log = synth({**base, "B": (1000, Truth(escalation=0.10))}, seed=1000 + seed)
        false += compare(log, set(), "A", "B", resamples=200).rows[0].significant
    assert found >= 19, found
    assert false <= 4, false
