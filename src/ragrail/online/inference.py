"""The tests and intervals behind the online signals and the A/B readout.

All at 95% (z = 1.959964), two-sided. Rates use Wilson's interval (ragrail.stats).

- ``mean_ci``: x̄ ± t(0.975, n-1) · s/√n, s² = Σ(x - x̄)²/(n-1) (Student's t; at the
  sizes of a log it is the normal interval).
- ``quantile_ci``: distribution-free, from the order statistics x(1) <= ... <= x(n).
  The number B of values below the true q-quantile is Binomial(n, q), and
  x(l) <= ξ_q <= x(u) whenever l <= B <= u - 1, so with l - 1 the largest k with
  P(B <= k) <= 0.025 and u - 1 the smallest k with P(B <= k) >= 0.975 the coverage
  P(l <= B <= u - 1) is at least 95%. An end that falls outside 1..n is unbounded
  (None: too few values to bound it).
- ``newcombe``: the difference p2 - p1 of two independent rates, Newcombe's hybrid score
  interval (his method 10) from the Wilson intervals (l1, u1) and (l2, u2):
  [d - √((p2 - l2)² + (u1 - p1)²),  d + √((u2 - p2)² + (p1 - l1)²)].
- ``two_proportion_p``: the pooled z-test, z = (p2 - p1) / √(p̄(1 - p̄)(1/n1 + 1/n2)),
  p̄ = (x1 + x2)/(n1 + n2), p = 2(1 - Φ(|z|)); Fisher's exact test (scipy) instead when
  an expected cell count n_i·p̄ or n_i·(1 - p̄) is under 5.
- ``mann_whitney_p``: Mann-Whitney U, two-sided (scipy: exact for small samples without
  ties, else the normal approximation with tie and continuity corrections).
- ``holm``: Holm's step-down adjustment of m p-values: sorted ascending, the i-th
  (from 0) becomes max over j <= i of min(1, (m - j) · p_(j)).
- ``welch_ci``: mean(b) - mean(a) ± t(0.975, ν)·√(s_a²/n_a + s_b²/n_b), Welch's ν.
- ``bootstrap_quantile_difference``: percentile bootstrap of a quantile's difference
  (each arm resampled independently, fixed seed).
- ``n_for_rates``: conversations per arm to detect p1 -> p2 (two-sided α, power 1 - β):
  n = (z_{1-α/2}·√(2p̄(1-p̄)) + z_{1-β}·√(p1(1-p1) + p2(1-p2)))² / (p2 - p1)²,
  p̄ = (p1 + p2)/2 (Fleiss, without continuity correction), rounded up.
- ``n_for_means``: per arm for a difference δ of means with standard deviation σ:
  n = 2(z_{1-α/2} + z_{1-β})²σ²/δ², rounded up (also used, as an approximation, for a
  median difference).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ragrail.stats import Interval, wilson

ALPHA = 0.05
POWER = 0.8


def phi_upper(z: float) -> float:
    """P(Z > z) for a standard normal Z."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def normal_quantile(p: float) -> float:
    """z with P(Z <= z) = p."""
    from statistics import NormalDist

    return NormalDist().inv_cdf(p)


def mean_ci(values: Sequence[float]) -> Interval | None:
    """Student's t interval of the mean (module docstring); None for fewer than two
    values (one value says nothing of the spread)."""
    n = len(values)
    if n < 2:
        return None
    mean = math.fsum(values) / n
    from scipy.stats import t

    var = math.fsum((x - mean) ** 2 for x in values) / (n - 1)
    half = float(t.ppf(0.975, n - 1)) * math.sqrt(var / n)
    return Interval(mean - half, mean + half)


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """The q-quantile with linear interpolation between order statistics (numpy's
    default): position (n - 1)·q."""
    pos = (len(sorted_values) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def quantile_ranks(n: int, q: float) -> tuple[int, int]:
    """1-based ranks (l, u) of the order statistics bounding the q-quantile with at least
    95% coverage (module docstring); l may be 0 and u may be n + 1 (unbounded)."""
    from scipy.stats import binom

    k = int(binom.ppf(0.025, n, q))  # smallest k with P(B <= k) >= 0.025
    low_rank = k if binom.cdf(k, n, q) > 0.025 else k + 1  # l - 1 = largest k with cdf <= .025
    high_rank = int(binom.ppf(0.975, n, q)) + 1
    return low_rank, high_rank


def quantile_ci(sorted_values: Sequence[float], q: float) -> tuple[float | None, float | None]:
    """(low, high) order-statistic interval of the q-quantile; None for an unbounded end."""
    n = len(sorted_values)
    if n == 0:
        return None, None
    low_rank, high_rank = quantile_ranks(n, q)
    low = sorted_values[low_rank - 1] if low_rank >= 1 else None
    high = sorted_values[high_rank - 1] if high_rank <= n else None
    return low, high


def newcombe(x1: int, n1: int, x2: int, n2: int) -> Interval | None:
    """Newcombe's hybrid score interval of p2 - p1 (module docstring)."""
    w1, w2 = wilson(x1, n1), wilson(x2, n2)
    if w1 is None or w2 is None:
        return None
    p1, p2 = x1 / n1, x2 / n2
    d = p2 - p1
    return Interval(
        d - math.sqrt((p2 - w2.low) ** 2 + (w1.high - p1) ** 2),
        d + math.sqrt((w2.high - p2) ** 2 + (p1 - w1.low) ** 2),
    )


def two_proportion_p(x1: int, n1: int, x2: int, n2: int) -> float:
    """Two-sided p-value that two rates differ: pooled z-test, or Fisher's exact test
    when an expected count is under 5 (module docstring). 1.0 when an arm is empty."""
    if n1 == 0 or n2 == 0:
        return 1.0
    pooled = (x1 + x2) / (n1 + n2)
    if min(n1, n2) * min(pooled, 1 - pooled) < 5:
        from scipy.stats import fisher_exact

        return float(fisher_exact([[x1, n1 - x1], [x2, n2 - x2]]).pvalue)
    z = (x2 / n2 - x1 / n1) / math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    return min(1.0, 2 * phi_upper(abs(z)))


def mann_whitney_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided Mann-Whitney U p-value (scipy); 1.0 when a side is empty or every value
    is the same."""
    if not len(a) or not len(b):
        return 1.0
    from scipy.stats import mannwhitneyu

    p = float(mannwhitneyu(a, b, alternative="two-sided").pvalue)
    return 1.0 if math.isnan(p) else p


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, in the order given (module docstring)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def n_for_rates(p1: float, p2: float, alpha: float = ALPHA, power: float = POWER) -> int | None:
    """Per-arm n to detect p1 -> p2 (module docstring); None when p1 == p2."""
    if p1 == p2:
        return None
    za, zb = normal_quantile(1 - alpha / 2), normal_quantile(power)
    mid = (p1 + p2) / 2
    root = za * math.sqrt(2 * mid * (1 - mid)) + zb * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    return math.ceil(root**2 / (p2 - p1) ** 2)


def n_for_means(delta: float, sd: float, alpha: float = ALPHA, power: float = POWER) -> int | None:
    """Per-arm n to detect a difference delta of means (module docstring); None when
    delta is 0."""
    if delta == 0:
        return None
    za, zb = normal_quantile(1 - alpha / 2), normal_quantile(power)
    return math.ceil(2 * (za + zb) ** 2 * sd**2 / delta**2)


def welch_ci(a: Sequence[float], b: Sequence[float]) -> Interval | None:
    """95% interval of mean(b) - mean(a) without assuming equal variances (Welch):
    d ± t(0.975, ν)·√(s_a²/n_a + s_b²/n_b), with Welch-Satterthwaite's
    ν = (s_a²/n_a + s_b²/n_b)² / ((s_a²/n_a)²/(n_a-1) + (s_b²/n_b)²/(n_b-1)).
    None when an arm has fewer than two values; the difference itself when both
    arms are constant."""
    na, nb = len(a), len(b)
    if na < 2 or nb < 2:
        return None
    ma, mb = math.fsum(a) / na, math.fsum(b) / nb
    va = math.fsum((x - ma) ** 2 for x in a) / (na - 1) / na
    vb = math.fsum((x - mb) ** 2 for x in b) / (nb - 1) / nb
    d = mb - ma
    if va + vb == 0:
        return Interval(d, d)
    from scipy.stats import t

    df = (va + vb) ** 2 / (va**2 / (na - 1) + vb**2 / (nb - 1))
    half = float(t.ppf(0.975, df)) * math.sqrt(va + vb)
    return Interval(d - half, d + half)


def bootstrap_quantile_difference(
    a: Sequence[float],
    b: Sequence[float],
    q: float = 0.5,
    resamples: int = 2000,
    seed: int = 20240229,
) -> Interval | None:
    """Percentile bootstrap 95% interval of quantile_q(b) - quantile_q(a): each arm
    resampled with replacement, independently, ``resamples`` times from one seeded
    generator (the same data always give the same interval), in blocks of rows so
    memory stays near 2^18 indices per arm. None when an arm is empty."""
    if not len(a) or not len(b):
        return None
    import numpy as np

    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    diffs = np.empty(resamples)
    rows = max(1, (1 << 18) // max(len(xa), len(xb)))
    for start in range(0, resamples, rows):
        stop = min(resamples, start + rows)
        qa = np.quantile(xa[rng.integers(0, len(xa), size=(stop - start, len(xa)))], q, axis=1)
        qb = np.quantile(xb[rng.integers(0, len(xb), size=(stop - start, len(xb)))], q, axis=1)
        diffs[start:stop] = qb - qa
    low, high = np.percentile(diffs, [2.5, 97.5])
    return Interval(float(low), float(high))
