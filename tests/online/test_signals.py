"""Online signals: hand-computed intervals, periods, denominators and moves."""

from __future__ import annotations

import math

import pytest

from ragrail.online import inference
from ragrail.online.record import Conversation
from ragrail.online.signals import SIGNALS, compute_signals, period_key, rate_figure
from tests.online.synth import START, Truth, synth

DAY = 86400.0


def conv(cid: str, at: float = START, **fields) -> Conversation:
    return Conversation(id=cid, at=at, version=fields.pop("version", "v1"), question=cid,
                        answer="", **fields)  # fmt: skip


def test_periods_are_utc_iso_weeks_and_days():
    friday = 1_795_737_600.0  # 2026-11-27 00:00 UTC
    assert period_key(friday, "week") == "2026-W48"
    assert period_key(friday, "day") == "2026-11-27"
    assert period_key(friday - 1, "day") == "2026-11-26"
    # 2027-01-01 (a Friday) belongs to ISO week 53 of 2026
    assert period_key(1_798_761_600.0, "week") == "2026-W53"
    assert period_key(START, "week") == "2026-W45"


def test_wilson_rate_by_hand():
    # p = 0.1, n = 100: centre (0.1 + 1.96²/200) / (1 + 1.96²/100) = 0.11480,
    # half 1.96/1.03841 · √(0.0009 + 1.96²/40000) = 0.05957
    f = rate_figure(10, 100)
    assert f.value == 0.1 and f.n == 100
    assert f.low == pytest.approx(0.05523, abs=1e-5)
    assert f.high == pytest.approx(0.17437, abs=1e-5)
    assert rate_figure(0, 0).value is None


def test_denominators_are_the_conversations_that_logged_the_field():
    log = [
        conv("a", thumbs=1, escalated=True, resolved=None, cost=1.0, latency_ms=100.0),
        conv("b", thumbs=-1, escalated=False, resolved=True, cost=2.0, latency_ms=200.0),
        conv("c", thumbs=-1, escalated=None, resolved=False, cost=3.0),
        conv("d", thumbs=None, escalated=False, cost=4.0),
    ]
    [p] = compute_signals(log, reasked={"b"}, by="week")
    f = p.figures
    assert list(f) == list(SIGNALS) and p.n == 4
    assert (f["thumbs_down"].value, f["thumbs_down"].n) == (2 / 3, 3)  # of those who voted
    assert (f["escalation"].value, f["escalation"].n) == (1 / 3, 3)
    assert (f["resolution"].value, f["resolution"].n) == (1 / 2, 2)
    assert (f["reask"].value, f["reask"].n) == (1 / 4, 4)  # every conversation counts
    # cost 1..4: mean 2.5, s² = 5/3, t(0.975, 3) = 3.182446: half 3.182446 · √(5/12)
    assert f["cost"].value == 2.5 and f["cost"].n == 4
    assert f["cost"].low == pytest.approx(2.5 - 2.054260, abs=1e-6)
    assert f["cost"].high == pytest.approx(2.5 + 2.054260, abs=1e-6)
    assert f["latency_p50"].value == 150.0 and f["latency_p50"].n == 2
    assert (f["latency_p50"].low, f["latency_p50"].high) == (None, None)  # 2 values bound nothing


def test_quantile_interval_from_binomial_order_statistics():
    # n = 5, median: P(B <= 0) = 1/32 > 0.025 and P(B <= 4) = 31/32 < 0.975: unbounded
    assert inference.quantile_ranks(5, 0.5) == (0, 6)
    # n = 6: P(B <= 0) = 1/64 <= 0.025 < 7/64, P(B <= 5) = 63/64 >= 0.975 > 57/64:
    # [x(1), x(6)], coverage 1 - 2/64
    assert inference.quantile_ranks(6, 0.5) == (1, 6)
    assert inference.quantile_ci([1.0, 2, 3, 4, 5, 6], 0.5) == (1.0, 6.0)
    # the textbook n = 100 median interval: x(40) to x(61)
    assert inference.quantile_ranks(100, 0.5) == (40, 61)
    values = [float(i) for i in range(1, 101)]
    assert inference.quantile_ci(values, 0.5) == (40.0, 61.0)
    assert inference.quantile(values, 0.95) == pytest.approx(95.05)


def test_a_week_that_moved_is_flagged_with_its_direction():
    week1 = [conv(f"a{i}", START + 3600 * i, escalated=i < 10) for i in range(100)]
    week2 = [conv(f"b{i}", START + 7 * DAY + 3600 * i, escalated=i < 30) for i in range(100)]
    first, second = compute_signals(week1 + week2, reasked=set(), by="week")
    assert first.moves == () and (first.period, second.period) == ("2026-W45", "2026-W46")
    # pooled p 0.2: z = 0.2 / √(0.16 · 0.02) = 3.5355, p = 2(1 - Φ(z)) = 0.000407;
    # re-ask (0 of 100 both weeks) is the only other signal tested: Holm doubles it
    moves = {m.signal: m for m in second.moves}
    assert set(moves) == {"escalation", "reask"}
    esc = moves["escalation"]
    assert esc.direction == "up" and esc.previous == "2026-W45"
    assert esc.p_value == pytest.approx(0.000407, rel=1e-2)
    assert esc.p_adjusted == pytest.approx(2 * esc.p_value)
    assert [m.signal for m in second.flagged] == ["escalation"]
    # nothing moved: same rates both weeks
    same = [conv(f"c{i}", START + 7 * DAY + 3600 * i, escalated=i < 10) for i in range(100)]
    assert compute_signals(week1 + same, set(), "week")[1].flagged == ()


def test_versions_are_kept_apart_and_filtered():
    log = [conv("a", version="v1", escalated=True), conv("b", version="v2", escalated=False)]
    got = compute_signals(log, set(), "day")
    assert [(p.version, p.period, p.figures["escalation"].value) for p in got] == [
        ("v1", "2026-11-02", 1.0), ("v2", "2026-11-02", 0.0),
    ]  # fmt: skip
    assert [p.version for p in compute_signals(log, set(), "day", versions=["v2"])] == ["v2"]
    assert got[1].moves == ()  # another version's period is not "the one before"


def test_coverage_over_seeded_logs_meets_the_bound():
    """100 seeded logs of 1,000 conversations: the share of intervals holding the true
    escalation rate is 95% in expectation; 100 draws of a 95% event fall below 89 with
    probability 0.4% (binomial), so 89 is the bound."""
    truth = Truth(escalation=0.1)
    expected = truth.expected()
    hits = dict.fromkeys(("escalation", "thumbs_down", "resolution", "latency_p50"), 0)
    for seed in range(100):
        log = synth({"v": (1000, truth)}, seed=seed)
        [p] = compute_signals(log, set(), by=None)
        for name in hits:
            f = p.figures[name]
            hits[name] += f.low <= expected[name] <= f.high
    assert hits["escalation"] >= 89, hits
    assert min(hits.values()) >= 89, hits


def test_the_binomial_bound_used_above():
    from scipy.stats import binom

    assert binom.cdf(88, 100, 0.95) < 0.005 < binom.cdf(89, 100, 0.95)
    assert math.isclose(Truth().expected()["latency_p95"], 1200 * math.exp(1.6448536 * 0.5),
                        rel_tol=1e-6)  # fmt: skip
