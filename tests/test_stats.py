from __future__ import annotations

import math

import pytest

from ragrail.stats import bootstrap_mean, mcnemar_exact, wilson


def test_wilson_hand_computed():
    # 8 of 12, z = 1.96: centre = (p + z²/2n)/(1 + z²/n), half = z/(1+z²/n)*sqrt(p(1-p)/n + z²/4n²)
    z, n, p = 1.959963984540054, 12, 8 / 12
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    iv = wilson(8, 12)
    assert iv.low == pytest.approx(centre - half) and iv.high == pytest.approx(centre + half)
    assert iv.low == pytest.approx(0.3906, abs=1e-4) and iv.high == pytest.approx(0.8619, abs=1e-4)
    assert wilson(0, 0) is None
    assert wilson(5, 5).high == 1.0 and wilson(0, 5).low == 0.0


def test_bootstrap_is_deterministic_and_brackets_the_mean():
    values = [1.0, 0.5, 0.0, 1.0, 1.0, 0.5, 1.0, 0.0, 1.0, 1.0]
    a, b = bootstrap_mean(values), bootstrap_mean(values)
    assert a == b
    assert a.low < sum(values) / len(values) < a.high
    assert bootstrap_mean([]) is None
    assert bootstrap_mean([0.7, 0.7]).low == 0.7


def test_mcnemar_exact():
    # 2 broken, 2 fixed: perfectly balanced
    assert mcnemar_exact(2, 2).p_value == 1.0
    # 6 broken, 0 fixed: p = 2 * (1/2)^6
    assert mcnemar_exact(6, 0).p_value == pytest.approx(2 / 64)
    assert mcnemar_exact(6, 0).significant
    assert mcnemar_exact(0, 0).p_value == 1.0
    # 1 vs 7: p = 2 * (C(8,0)+C(8,1)) / 2^8
    assert mcnemar_exact(1, 7).p_value == pytest.approx(2 * 9 / 256)


# --- intervals of means: bounded memory, the same numbers, honest at the bounds ---

Z2 = 1.959963984540054**2


def whole_array_bootstrap(values: list[float]) -> tuple[float, float]:
    """The bootstrap as it was before block drawing: one (2000 x n) index array."""
    import numpy as np

    data = np.asarray(values, dtype=float)
    idx = np.random.default_rng(20240229).integers(0, len(data), size=(2000, len(data)))
    low, high = np.percentile(data[idx].mean(axis=1), [2.5, 97.5])
    return float(low), float(high)


@pytest.mark.parametrize("n", [2, 37, 500, 2000])
def test_bootstrap_in_blocks_gives_the_whole_array_numbers(n, monkeypatch):
    import numpy as np

    from ragrail import stats

    values = list(np.random.default_rng(n).integers(0, 7, n) / 6)
    expected = whole_array_bootstrap(values)
    for elements in (1, 3 * n + 1, 1 << 18):  # one row a block, ragged blocks, the default
        monkeypatch.setattr(stats, "BLOCK_ELEMENTS", elements)
        iv = stats.bootstrap_mean(values)
        assert (iv.low, iv.high) == expected, elements


def test_columns_of_one_length_share_a_draw_and_match_one_at_a_time():
    import numpy as np

    from ragrail.stats import mean_interval, mean_intervals

    g = np.random.default_rng(5)
    columns = [list(g.random(300)), list((g.random(300) < 0.4) * 1.0), list(g.random(120))]
    columns.append(columns[0])
    together = mean_intervals([*columns, []])
    assert together == [*(mean_interval(c) for c in columns), None]
    # away from the bounds, nothing widens them: they are the plain bootstrap's
    assert (together[1].low, together[1].high) == whole_array_bootstrap(columns[1])


def test_eleven_of_eleven_is_not_certain():
    from ragrail.stats import mean_interval

    # all faithful: Wilson(11, 11); at p = 1, low = n / (n + z²), high = 1
    ones = mean_interval([1.0] * 11)
    assert ones.low == pytest.approx(11 / (11 + Z2)) and ones.low < 0.8
    assert ones.low == pytest.approx(0.7412, abs=1e-4) and ones.high == 1.0
    # none faithful: high = z² / (n + z²), low = 0
    zeros = mean_interval([0.0] * 11)
    assert zeros.high == pytest.approx(Z2 / (11 + Z2)) and zeros.high > 0.2
    assert zeros.low == 0.0
    # large n too: 2,000 of 2,000 is below 1 at the low end, and exactly 1 at the high
    big = mean_interval([1.0] * 2000)
    assert big.low == pytest.approx(2000 / (2000 + Z2)) and big.high == 1.0


def test_all_equal_scores_inside_the_range_get_wilsons_interval():
    from ragrail.stats import mean_interval

    # 40 scores of 0.5: s = 20 and n - s = 20 pass the mass test, but a zero-width
    # bootstrap is no interval. Wilson(20, 40) at p = 1/2: centre 1/2,
    # half = z/(1 + z²/40) * sqrt(1/160 + z²/6400)
    iv = mean_interval([0.5] * 40)
    half = math.sqrt(Z2) / (1 + Z2 / 40) * math.sqrt(0.25 / 40 + Z2 / 6400)
    assert iv.low == pytest.approx(0.5 - half) and iv.high == pytest.approx(0.5 + half)
    assert iv.low == pytest.approx(0.3520, abs=1e-4)


def test_near_a_bound_the_bootstrap_is_widened_to_hold_wilson():
    from ragrail.stats import bootstrap_mean, mean_interval

    # 10 of 11 at 1.0, one at 0: n - s = 1 < 10. The bootstrap never resamples more
    # failures than it can draw; Wilson(10, 11) goes lower.
    values = [1.0] * 10 + [0.0]
    boot, iv, w = bootstrap_mean(values), mean_interval(values), wilson(10, 11)
    assert iv.low == w.low < boot.low and iv.high == boot.high == 1.0
    assert w.low == pytest.approx(0.6226, abs=1e-4)
    # 30 of 60 each side: the bootstrap as it is
    mid = [1.0] * 30 + [0.0] * 30
    assert mean_interval(mid) == bootstrap_mean(mid)


def test_scores_outside_zero_one_are_never_read_as_a_proportion():
    from ragrail.stats import bootstrap_mean, mean_interval

    assert mean_interval([3.0, 3.0]).low == 3.0
    assert mean_interval([2.0, 0.0, 1.0]) == bootstrap_mean([2.0, 0.0, 1.0])


def test_above_the_bootstrap_limit_the_normal_interval_agrees_with_it():
    import numpy as np

    from ragrail.stats import BOOTSTRAP_MAX_N, bootstrap_mean, mean_interval

    n = BOOTSTRAP_MAX_N + 1
    values = list(np.random.default_rng(11).integers(0, 4, n) / 3)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / n)
    iv = mean_interval(values)
    assert iv.low == pytest.approx(mean - math.sqrt(Z2) * sd / math.sqrt(n), abs=1e-12)
    assert iv.high == pytest.approx(mean + math.sqrt(Z2) * sd / math.sqrt(n), abs=1e-12)
    boot = bootstrap_mean(values)  # still available, in bounded memory
    assert abs(boot.low - iv.low) < 1e-3 and abs(boot.high - iv.high) < 1e-3
    # and honest at the bound at any n
    ones = mean_interval([1.0] * n)
    assert ones.low == pytest.approx(n / (n + Z2)) and ones.high == 1.0


@pytest.mark.parametrize("n", [4999, 5001, 5003, 7777])
@pytest.mark.parametrize("value", [3.3, 7.1, 123.456, -0.3, 0.1])
def test_equal_values_give_an_interval_in_order_on_both_sides_of_the_bootstrap_limit(n, value):
    # numpy's mean of 5,003 x 3.3 is 3.2999999999999994, an ulp below every value: the
    # normal interval clipped to [min, max] had low 3.3 above high
    from ragrail.stats import mean_interval

    iv = mean_interval([value] * n)
    assert iv.low <= iv.high
    if not 0.0 <= value <= 1.0:  # off the [0, 1] scale: never widened to Wilson's
        assert iv.low == iv.high == value


def test_wilson_takes_fractional_successes():
    # a sum of scores, an effective n: the same formula
    iv = wilson(4.5, 9)
    assert iv.low == pytest.approx(0.2265, abs=1e-4) and iv.high == pytest.approx(0.7735, abs=1e-4)


# --- the answer pass rate with repeats: questions are the sample ---


def test_repeats_of_one_question_are_not_independent_trials():
    from ragrail.stats import clustered_rate

    # 10 questions x 5 repeats, 5 always pass and 5 always fail: p = 1/2, each
    # y - p·m = ±2.5, V = 10/9 · 62.5 / 50² = 1/36, n_eff = p(1-p)/V = 9
    iv = clustered_rate([5] * 5 + [0] * 5, [5] * 10)
    assert (iv.low, iv.high) == pytest.approx((wilson(4.5, 9).low, wilson(4.5, 9).high))
    pooled = wilson(25, 50)
    assert iv.low < pooled.low - 0.1 and iv.high > pooled.high + 0.1
    # every question always passes: nothing shows the spread, each question counts once
    always = clustered_rate([5] * 4, [5] * 4)
    assert always == wilson(4, 4) and always.low == pytest.approx(4 / (4 + Z2))
    assert always.low < wilson(20, 20).low - 0.3 and always.high == 1.0
    assert clustered_rate([0] * 4, [5] * 4) == wilson(0, 4)


def test_effective_n_hand_computed():
    from ragrail.stats import clustered_rate

    # passes 3, 5, 0, 2 of 5 each: p = 10/20, y - p·m = 0.5, 2.5, -2.5, -0.5,
    # Σ² = 13, V = 4/3 · 13/400, n_eff = 0.25 / V = 75/13 = 5.769
    n_eff = 0.25 / (4 / 3 * 13 / 400)
    assert n_eff == pytest.approx(75 / 13)
    assert clustered_rate([3, 5, 0, 2], [5, 5, 5, 5]) == wilson(0.5 * n_eff, n_eff)
    # questions that agree exactly (3 of 5 each) show no spread between them:
    # at most every answer counts, never more
    assert clustered_rate([3, 3, 3], [5, 5, 5]) == wilson(9, 15)
    # one question: it counts once; questions never asked are left out
    assert clustered_rate([2, 0], [3, 0]) == wilson(2 / 3, 1)
    assert clustered_rate([], []) is None and clustered_rate([0], [0]) is None


def test_totals_use_questions_with_repeats_and_answers_without():
    from ragrail.records.results import CaseResult, Sample, Trace
    from ragrail.run import compute_totals
    from ragrail.stats import clustered_rate

    def answered(cid: str, passes: int, runs: int) -> CaseResult:
        return CaseResult(
            id=cid,
            question="q",
            sources=[],
            facts=[],
            trace=Trace(case_id=cid),
            answer_runs=runs,
            answer_passes=passes,
            answer_pass=passes == runs,
        )

    once = [answered(f"q{i}", int(i < 7), 1) for i in range(10)]
    stat = compute_totals(once).stats["answer_pass_rate"]
    assert (stat.value, stat.low, stat.high, stat.n) == (
        0.7,
        wilson(7, 10).low,
        wilson(7, 10).high,
        10,
    )

    # 4 questions x 5 repeats, 2 always pass, 2 always fail, and one that errored on
    # every repeat: 5 answers lost, 0 passed. p = 10/25.
    lost = answered("e", 0, 0)
    lost.trace.error = "HTTP 500"
    lost.trace.samples = [Sample(error="HTTP 500") for _ in range(4)]
    cases = [
        answered("a", 5, 5),
        answered("b", 5, 5),
        answered("c", 0, 5),
        answered("d", 0, 5),
        lost,
    ]
    stat = compute_totals(cases).stats["answer_pass_rate"]
    expected = clustered_rate([5, 5, 0, 0, 0], [5, 5, 5, 5, 5])
    assert (stat.value, stat.n) == (10 / 25, 25)
    assert (stat.low, stat.high) == (expected.low, expected.high)
    assert stat.high - stat.low > wilson(10, 25).high - wilson(10, 25).low
