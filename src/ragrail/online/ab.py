"""A/B readout: variant B against variant A, signal by signal.

For each signal, over all of each variant's conversations (formulas in
ragrail.online.inference), each row tests what it shows:

============  =========================  ==============================  ==================
signal        difference B - A           95% interval                    test (p-value)
============  =========================  ==============================  ==================
rates (4)     rate_B - rate_A            Newcombe's hybrid score          two-proportion z
                                                                         (Fisher's exact
                                                                         for small counts)
cost          mean_B - mean_A            Welch                           Welch's t-test
latency       median_B - median_A        bootstrap, fixed seed           Mood's median test
============  =========================  ==============================  ==================

Welch's interval and t-test are one procedure: the interval excludes 0 exactly when
p < 0.05. Mood's median test asks whether the two medians differ (the share of each
arm above the pooled median); the bootstrap interval of the medians' difference is a
separate procedure, so near p = 0.05 the two can disagree. Mann-Whitney's U is not
used: it asks whether one arm's values tend to be larger, and two arms with the same
mean cost but different spreads gave p = 3.6e-89.

**By user.** When a user logged more than one conversation in an arm, the users are the
sample (ragrail.online.inference): rates are compared on the effective counts (Rao and
Scott), cost by the cluster-robust Welch test, the median by Mood's test on effective
counts and a bootstrap that resamples users. The arms are taken as independent (an A/B
split by user: one user in one arm).

The p-values are Holm-adjusted over the signals compared in this readout (up to six: one
family, apart from the MOVED marks of ragrail.online.signals), and a signal is
significant at adjusted p < 0.05.

**Power**: the conversations per arm a test at α = 0.05 (two-sided) needs to detect a
difference with probability 0.8, for the difference ``mde`` (an absolute rate
difference, rates only) or, without it, the observed one:

    rates:           n = (1.96·√(2p̄(1-p̄)) + 0.8416·√(p1(1-p1) + p2(1-p2)))² / (p2 - p1)²
                     with p1 = rate_A, p2 = p1 + difference, p̄ = (p1 + p2)/2
    cost, latency:   n = 2(1.96 + 0.8416)²·σ² / δ²,  σ² = (s_A² + s_B²)/2

times the mean of the two arms' design effects by user (1 without repeated users); for
a median this is the t-test's n: a rough guide. ``more`` is how many more
conversations per arm that is than the smaller arm has now (0 when it has enough).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from ragrail.errors import InputError
from ragrail.online import inference
from ragrail.online.record import Conversation
from ragrail.online.signals import (
    RATES,
    Figure,
    Tally,
    compare_latency,
    mean_figure,
    quantile_figure,
    rate_figure,
    tally,
)

AB_SIGNALS = (*RATES, "cost", "latency_p50")


@dataclass(frozen=True)
class ABRow:
    signal: str
    a: Figure
    b: Figure
    difference: float | None
    low: float | None
    high: float | None
    p_value: float | None
    p_adjusted: float | None
    mde: float | None  # the difference the power figures are for
    n_needed: int | None  # per arm; None when that difference is 0 or unknown
    n_more: int | None
    test: str | None = None  # the test behind p_value, as printed
    family: int = 0  # the p-values Holm adjusted over

    @property
    def significant(self) -> bool:
        return self.p_adjusted is not None and self.p_adjusted < inference.ALPHA


@dataclass(frozen=True)
class ABResult:
    a: str
    b: str
    n_a: int
    n_b: int
    rows: tuple[ABRow, ...]


def compare(
    conversations: Iterable[Conversation],
    reasked: set[str],
    a: str,
    b: str,
    mde: float | None = None,
    resamples: int = 2000,
) -> ABResult:
    """B against A (module docstring). Raises InputError when A or B has no
    conversations, naming the versions there are."""
    groups = tally(conversations, reasked, by=None)
    seen = sorted({version for version, _ in groups})
    for name in (a, b):
        if (name, "all") not in groups:
            listed = ", ".join(seen) if seen else "none"
            raise InputError(f"no conversations of version {name!r} (versions: {listed})")
    ta, tb = groups[(a, "all")], groups[(b, "all")]
    rows = [_rate_row(name, ta, tb, mde) for name in RATES]
    rows.append(_cost_row(ta, tb))
    rows.append(_latency_row(ta, tb, resamples))
    tested = [i for i, row in enumerate(rows) if row.p_value is not None]
    adjusted = inference.holm([rows[i].p_value or 0.0 for i in tested])
    final = list(rows)
    for i, q in zip(tested, adjusted, strict=True):
        final[i] = replace(rows[i], p_adjusted=q, family=len(tested))
    return ABResult(a, b, ta.n, tb.n, tuple(final))


def _more(needed: int | None, n_a: int, n_b: int) -> int | None:
    return None if needed is None else max(0, needed - min(n_a, n_b))


def _inflate(needed: int | None, deff_a: float, deff_b: float) -> int | None:
    """Conversations per arm by user: the independent n times the mean design effect."""
    if needed is None or deff_a == deff_b == 1.0:
        return needed
    return math.ceil(needed * (deff_a + deff_b) / 2)


def _rate_row(name: str, ta: Tally, tb: Tally, mde: float | None) -> ABRow:
    (x1, n1), (x2, n2) = ta.counts[name], tb.counts[name]
    da, db = ta.rate_deff(name), tb.rate_deff(name)
    fa, fb = rate_figure(x1, n1, da), rate_figure(x2, n2, db)
    if not n1 or not n2:
        return ABRow(name, fa, fb, None, None, None, None, None, mde, None, None)
    p1, p2 = x1 / n1, x2 / n2
    interval = inference.newcombe(x1, n1, x2, n2, da, db)
    assert interval is not None  # both arms have data
    delta = mde if mde is not None else p2 - p1
    target = min(1.0, max(0.0, p1 + delta))
    needed = _inflate(inference.n_for_rates(p1, target), da, db)
    tested = inference.rate_test(x1, n1, x2, n2, da, db)
    return ABRow(
        name,
        fa,
        fb,
        p2 - p1,
        interval.low,
        interval.high,
        tested.p_value,
        None,
        delta,
        needed,
        _more(needed, n1, n2),
        tested.test,
    )


def _pooled_sd(a: Sequence[float], b: Sequence[float]) -> float:
    def var(x: Sequence[float]) -> float:
        if len(x) < 2:
            return 0.0
        m = math.fsum(x) / len(x)
        return math.fsum((v - m) ** 2 for v in x) / (len(x) - 1)

    return math.sqrt((var(a) + var(b)) / 2)


def _cost_row(ta: Tally, tb: Tally) -> ABRow:
    """Mean cost: Welch's interval and Welch's t-test, by user."""
    ca, cb = ta.clusters(ta.cost_users), tb.clusters(tb.cost_users)
    fa, fb = mean_figure(ta.costs, ca), mean_figure(tb.costs, cb)
    if fa.value is None or fb.value is None:
        return ABRow("cost", fa, fb, None, None, None, None, None, None, None, None)
    d = fb.value - fa.value
    found = inference.welch(ta.costs, tb.costs, ca, cb)
    sa, sb = inference.spread(ta.costs, ca), inference.spread(tb.costs, cb)
    needed = _inflate(
        inference.n_for_means(d, _pooled_sd(ta.costs, tb.costs)),
        1.0 if sa is None else sa.deff,
        1.0 if sb is None else sb.deff,
    )
    return ABRow(
        "cost",
        fa,
        fb,
        d,
        None if found is None else found[0].low,
        None if found is None else found[0].high,
        None if found is None else found[1].p_value,
        None,
        d,
        needed,
        _more(needed, fa.n, fb.n),
        None if found is None else found[1].test,
    )


def _latency_row(ta: Tally, tb: Tally, resamples: int) -> ABRow:
    """Median latency: the bootstrap interval (users resampled) and Mood's median test."""
    la, lb = sorted(ta.latencies), sorted(tb.latencies)
    fa = quantile_figure(la, 0.5, ta.latency_deff(la, 0.5))
    fb = quantile_figure(lb, 0.5, tb.latency_deff(lb, 0.5))
    if fa.value is None or fb.value is None:
        return ABRow("latency_p50", fa, fb, None, None, None, None, None, None, None, None)
    d = fb.value - fa.value
    ca, cb = ta.clusters(ta.latency_users), tb.clusters(tb.latency_users)
    interval = inference.bootstrap_quantile_difference(
        ta.latencies, tb.latencies, 0.5, resamples, clusters_a=ca, clusters_b=cb
    )
    tested = compare_latency(ta, tb)
    needed = _inflate(
        inference.n_for_means(d, _pooled_sd(la, lb)),
        ta.latency_deff(la, 0.5),
        tb.latency_deff(lb, 0.5),
    )
    return ABRow(
        "latency_p50",
        fa,
        fb,
        d,
        interval.low if interval is not None else None,
        interval.high if interval is not None else None,
        None if tested is None else tested.p_value,
        None,
        d,
        needed,
        _more(needed, fa.n, fb.n),
        None if tested is None else tested.test,
    )
