"""Issue 24 (online): each A/B and MOVED row tests what it shows, every p-value names its
test, the cost interval stays at or above $0, Holm runs over the whole report, and a
user's conversations are one cluster. Hand-computed, or checked against scipy and
statsmodels."""

from __future__ import annotations

import math

import pytest

from ragrail.online import inference
from ragrail.online.ab import compare
from ragrail.online.record import Conversation
from ragrail.online.signals import compute_signals, mean_figure, rate_figure
from ragrail.reports.online import ab_text, online_json, p_text, signals_text
from ragrail.reports.online_html import online_html
from ragrail.stats import wilson
from tests.online.synth import START

DAY = 86400.0


def conv(cid: str, version: str = "v1", at: float = START, **fields) -> Conversation:
    return Conversation(id=cid, at=at, version=version, question=cid, answer="", **fields)


def _gamma_costs(shape: float, n: int, seed: int) -> list[float]:
    import numpy as np

    return [float(x) for x in np.random.default_rng(seed).gamma(shape, 0.004 / shape, n)]


def test_same_mean_cost_with_another_spread_is_not_significant():
    """The issue's case: B's cost has A's mean (0.004) but a far wider, skewed spread.
    Mann-Whitney calls that a difference (p ~ 1e-80: B's typical conversation is
    cheaper); the row shows a difference of means, so it is tested by Welch's t."""
    from scipy.stats import mannwhitneyu, ttest_ind

    a_costs, b_costs = _gamma_costs(50.0, 4000, 1), _gamma_costs(0.3, 4000, 2)
    log = [conv(f"a{i}", "A", cost=c) for i, c in enumerate(a_costs)]
    log += [conv(f"b{i}", "B", cost=c) for i, c in enumerate(b_costs)]
    row = {r.signal: r for r in compare(log, set(), "A", "B", resamples=200).rows}["cost"]
    assert mannwhitneyu(a_costs, b_costs).pvalue < 1e-50
    ref = ttest_ind(b_costs, a_costs, equal_var=False)
    assert row.test == "Welch t-test"
    assert row.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert (row.low, row.high) == pytest.approx(tuple(ref.confidence_interval(0.95)), rel=1e-9)
    assert row.p_value > 0.05 and not row.significant
    assert row.low < 0 < row.high  # interval and test agree
    text = ab_text(compare(log, set(), "A", "B", resamples=200))
    line = next(x for x in text.splitlines() if "Welch" in x)
    assert "Welch t-test p=" in line and "Holm-adjusted p=" in line
    assert line.endswith("not significant")


def test_a_shifted_median_latency_is_tested_by_moods_median_test():
    """Same median, different spread: Mood's test finds nothing; a shifted median: found.
    Both against scipy.stats.median_test (correction=False)."""
    from scipy.stats import median_test

    a = [1000.0 + 10 * (i % 21 - 10) for i in range(420)]  # median 1000, narrow
    b = [1000.0 + 100 * (i % 21 - 10) for i in range(420)]  # median 1000, wide
    got = inference.median_test(a, b)
    assert got.test == "Mood median test"
    assert got.p_value == pytest.approx(median_test(a, b, correction=False).pvalue)
    assert got.p_value > 0.5
    shifted = [x + 60.0 for x in a]
    moved = inference.median_test(a, shifted)
    assert moved.p_value == pytest.approx(median_test(a, shifted, correction=False).pvalue)
    assert moved.p_value < 1e-10
    # small counts: Fisher's exact test of the same 2x2 table
    from scipy.stats import fisher_exact

    small = inference.median_test([1.0, 2, 3], [4.0, 5, 6])
    assert small.test == "Mood median test (Fisher exact)"
    assert small.p_value == pytest.approx(fisher_exact([[0, 3], [3, 0]]).pvalue)


def test_the_cost_interval_never_goes_below_zero_and_says_so():
    # 9 free conversations and one at $1: mean 0.1, s² = (9·0.01 + 0.81)/9 = 0.1,
    # s/√n = 0.1, t(0.975, 9) = 2.262157: [-0.1262, 0.3262] -> [0, 0.3262]
    f = mean_figure([0.0] * 9 + [1.0])
    assert f.value == pytest.approx(0.1) and f.clipped and f.low == 0.0
    assert f.high == pytest.approx(0.1 + 0.2262157, abs=1e-6)
    assert not mean_figure([10.0, 11.0, 12.0]).clipped
    [p] = compute_signals([conv(f"c{i}", cost=0.0 if i < 9 else 1.0) for i in range(10)],
                          set(), by=None)  # fmt: skip
    assert "low end clipped at $0" in signals_text([p], "all")


def test_p_values_print_with_their_test_and_never_as_zero():
    assert p_text(3.6e-89) == "p=3.6e-89"
    assert p_text(0.00099) == "p=9.9e-04"
    assert p_text(0.0012) == "p=0.0012"
    assert p_text(0.024) == "p=0.024"
    assert p_text(0.0) == "p<1e-300"
    week1 = [conv(f"a{i}", at=START + 3600 * i, escalated=i < 10) for i in range(100)]
    week2 = [conv(f"b{i}", at=START + 7 * DAY + 3600 * i, escalated=i < 60) for i in range(100)]
    periods = compute_signals(week1 + week2, set(), by="week")
    text = signals_text(periods, "week")
    assert "MOVED up vs 2026-W45 (two-proportion z-test p=" in text
    assert "Holm-adjusted p=" in text and "0.00" not in text.split("MOVED")[1]
    both = week1 + [conv(f"v{c.id}", "v2", c.at, escalated=c.escalated) for c in week1]
    result = compare(both + [conv(f"w{c.id}", "v3", c.at, escalated=c.escalated)
                             for c in week2], set(), "v2", "v3", resamples=50)  # fmt: skip
    from ragrail.reports.online import Flagged

    data = online_json(periods, result, Flagged(0, ()), database="db", by="week",
                       reask_minutes=30, reask_similarity=0.5)  # fmt: skip
    move = data["periods"][1]["moves"][0]
    assert move["test"] == "two-proportion z-test" and move["adjustment"] == "Holm"
    assert move["p_value"] < 1e-10  # the number itself, unrounded
    rows = data["compare"]["rows"]
    assert rows[0]["test"] == "two-proportion z-test" and rows[0]["family"] == 2
    page = online_html(periods, result, Flagged(0, ()), database="db", by="week")
    assert "two-proportion z-test p=" in page and "Holm-adjusted p=" in page
    assert "<th>test</th>" in page


def test_holm_runs_over_every_move_of_the_report():
    """Three weeks, escalation 10% -> 30% -> 10% (and re-ask 0 of 100 throughout): four
    tests in the report. Each escalation move's p (z = 0.2/√(0.16·0.02) = 3.5355,
    p = 0.000407) is Holm-adjusted over all four: min(1, 4p), then max(4p, 3p)."""
    weeks = [
        [conv(f"w{w}-{i}", at=START + 7 * DAY * w + 3600 * i, escalated=i < rate)
         for i in range(100)]
        for w, rate in enumerate((10, 30, 10))
    ]  # fmt: skip
    periods = compute_signals([c for week in weeks for c in week], set(), by="week")
    moves = [m for p in periods for m in p.moves]
    assert [m.signal for m in moves] == ["escalation", "reask", "escalation", "reask"]
    esc = [m for m in moves if m.signal == "escalation"]
    p = esc[0].p_value
    assert p == pytest.approx(2 * inference.phi_upper(0.2 / math.sqrt(0.16 * 0.02)))
    assert [m.p_adjusted for m in esc] == pytest.approx([4 * p, 4 * p])  # within one week: 2p
    assert all(m.family == 4 for m in moves)
    assert [m.p_adjusted for m in moves] == pytest.approx(
        inference.holm([m.p_value for m in moves])
    )


def test_the_users_are_the_sample_for_a_rate():
    """10 users x 5 conversations, 5 always escalating and 5 never: p = 0.5, n = 50.
    V_user = 10/9 · 10 · 2.5² / 50² = 1/36; V_ind = s²/n = (50·0.25/49)/50 = 0.25/49;
    deff = 49/9 and the effective n 50·9/49 = 9.18: Wilson(0.5·n_eff, n_eff), about
    Wilson(4.5, 9) = [0.227, 0.773] and not the pooled Wilson(25, 50) = [0.366, 0.634]."""
    log = [conv(f"u{u}-{k}", user=f"u{u}", escalated=u < 5) for u in range(10) for k in range(5)]
    [p] = compute_signals(log, set(), by=None)
    f = p.figures["escalation"]
    n_eff = 50 * 9 / 49
    assert f.n == 50 and f.n_eff == pytest.approx(n_eff)
    expected = wilson(0.5 * n_eff, n_eff)
    assert (f.low, f.high) == pytest.approx((expected.low, expected.high))
    assert f.low == pytest.approx(0.2285, abs=1e-4) and f.high == pytest.approx(0.7715, abs=1e-4)
    # the same conversations without users: one cluster each, Wilson(25, 50) exactly
    anonymous = [conv(c.id, escalated=c.escalated) for c in log]
    [q] = compute_signals(anonymous, set(), by=None)
    plain = wilson(25, 50)
    assert (q.figures["escalation"].low, q.figures["escalation"].high) == (plain.low, plain.high)
    assert q.figures["escalation"].n_eff is None
    assert rate_figure(25, 50) == q.figures["escalation"]


def test_cluster_robust_variance_by_hand():
    """Costs 1, 3 (user 1), 2 (user 2), 6, 8, 4 (user 3): n = 6, mean 4. The users' sums
    4, 2, 18 minus 4·m_i: -4, -2, 6, so V_user = 3/2 · 56/36 = 7/3; V_ind = s²/n =
    (34/5)/6 = 17/15; deff = 35/17; the interval 4 ± t(0.975, 2)·√(7/3) = 4 ± 6.5724
    (statsmodels' cluster-robust OLS of an intercept gives the same: its
    G/(G-1)·(N-1)/(N-K) correction is G/(G-1) at K = 1)."""
    costs, users = [1.0, 3.0, 2.0, 6.0, 8.0, 4.0], [1, 1, 2, 3, 3, 3]
    s = inference.spread(costs, users)
    assert s.variance == pytest.approx(7 / 3) and s.df == 2
    assert s.deff == pytest.approx(35 / 17)
    ci = inference.mean_ci(costs, users)
    assert (ci.low, ci.high) == pytest.approx((4 - 6.572411, 4 + 6.572411), abs=1e-6)
    # every cost its own user: Student's t exactly
    plain = inference.spread(costs, [1, 2, 3, 4, 5, 6])
    assert (plain.variance, plain.df, plain.deff) == pytest.approx((17 / 15, 5, 1.0))
    # one user: nothing shows the users' spread, no interval
    assert inference.mean_ci(costs, [1] * 6) is None


def test_a_user_logging_every_conversation_k_times_adds_nothing_to_welch():
    """Each of B's users repeats one cost k = 4 times: by user, S_i = k·x_i and m_i = k,
    so V_user = s²/Q and df = Q - 1: Welch's test of the de-duplicated arms (scipy)."""
    from scipy.stats import ttest_ind

    a = [0.001 * (i % 7) for i in range(40)]
    b = [0.002 + 0.001 * (i % 5) for i in range(30)]
    b4 = [x for x in b for _ in range(4)]
    users = [i for i in range(30) for _ in range(4)]
    interval, tested = inference.welch(a, b4, None, users)
    ref = ttest_ind(b, a, equal_var=False)
    assert tested.test == "Welch t-test by user"
    assert tested.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert (interval.low, interval.high) == pytest.approx(tuple(ref.confidence_interval()))
    # counted as 120 independent conversations the test would be far surer
    assert inference.welch(a, b4)[1].p_value < ref.pvalue / 4


def test_ab_rates_by_user_use_the_effective_counts():
    """B's 200 users each logged two conversations with the same outcome (60 escalated
    both): 120 of 400. V_user = 200/199 · (60·1.4² + 140·0.6²)/400² and V_ind =
    (400·0.21/399)/400, so deff = 399/199 and B counts as 400/deff = 199.5 conversations
    (its 200 users), 0.3 of them escalated. Rao-Scott: the pooled z-test on those
    effective counts against A's 20 of 200 single users."""
    a = [conv(f"a{i}", "A", user=f"a{i}", escalated=i < 20) for i in range(200)]
    b = [conv(f"b{i}-{k}", "B", user=f"b{i}", escalated=i < 60) for i in range(200)
         for k in range(2)]  # fmt: skip
    esc = compare(a + b, set(), "A", "B", resamples=50).rows[0]
    assert esc.a.n_eff is None and esc.b.n_eff == pytest.approx(400 * 199 / 399)
    m2 = 400 * 199 / 399
    y2 = 0.3 * m2
    pooled = (20 + y2) / (200 + m2)
    z = (0.3 - 0.1) / math.sqrt(pooled * (1 - pooled) * (1 / 200 + 1 / m2))
    assert esc.test == "two-proportion z-test by user (Rao-Scott)"
    assert esc.p_value == pytest.approx(2 * inference.phi_upper(z), rel=1e-9)
    ci = inference.newcombe(20, 200, y2, m2)
    assert (esc.low, esc.high) == pytest.approx((ci.low, ci.high))
    assert esc.high - esc.low > (lambda n: n.high - n.low)(inference.newcombe(20, 200, 120, 400))


def test_a_heavy_user_does_not_narrow_the_ab_interval():
    """B: 19 users with one conversation (2 escalated) and one user with 80, all
    escalated. Counted as 99 independent conversations B looks sure (82 of 99); by user
    it is about 20 users' worth, and the test is Fisher's on the rounded effective counts."""
    a = [conv(f"a{i}", "A", user=f"a{i}", escalated=i < 10) for i in range(100)]
    b = [conv(f"b{i}", "B", user=f"b{i}", escalated=i < 2) for i in range(19)]
    b += [conv(f"h{k}", "B", user="heavy", escalated=True) for k in range(80)]
    esc = compare(a + b, set(), "A", "B", resamples=50).rows[0]
    assert esc.b.n == 99 and esc.b.n_eff is not None and esc.b.n_eff < 25
    deff_b = 99 / esc.b.n_eff
    from scipy.stats import fisher_exact

    k, t = round(82 / deff_b), round(99 / deff_b)
    assert esc.test == "Fisher exact by user (Rao-Scott)"
    assert esc.p_value == pytest.approx(fisher_exact([[10, 90], [k, t - k]]).pvalue)
    naive = inference.newcombe(10, 100, 82, 99)
    assert esc.high - esc.low > 2 * (naive.high - naive.low)


def test_quantile_interval_by_user_uses_the_effective_n():
    values = [float(i) for i in range(1, 101)]
    # deff 2: ranks of 50 values, (18, 33) by the binomial, scaled by 2 -> x(36), x(66)
    assert inference.quantile_ranks(50, 0.5) == (18, 33)
    assert inference.quantile_ci(values, 0.5, 2.0) == (36.0, 66.0)
    assert inference.quantile_ci(values, 0.5) == (40.0, 61.0)  # deff 1: unchanged


def test_the_median_bootstrap_resamples_users():
    """Each of 60 latencies logged 10 times by its own user: resampling users gives
    about the interval of the 60 values; resampling the 600 conversations one by one
    would give one about √10 times narrower."""
    import numpy as np

    rng = np.random.default_rng(5)
    a, b = list(rng.lognormal(7, 0.5, 60)), list(rng.lognormal(7, 0.5, 60))
    a10, b10 = [x for x in a for _ in range(10)], [x for x in b for _ in range(10)]
    users = [i for i in range(60) for _ in range(10)]

    def width(found):
        return found.high - found.low

    base = width(inference.bootstrap_quantile_difference(a, b))
    by_user = width(inference.bootstrap_quantile_difference(a10, b10, 0.5, 2000, 1, users, users))
    naive = width(inference.bootstrap_quantile_difference(a10, b10))
    assert 0.7 * base < by_user < 1.3 * base
    assert naive < 0.5 * base
