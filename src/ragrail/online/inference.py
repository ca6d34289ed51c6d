"""The tests and intervals behind the online signals and the A/B readout.

All at 95% (z = 1.959964), two-sided. Rates use Wilson's interval (ragrail.stats).

**Users are the sample.** One user's conversations are not independent (a heavy user's
fifty escalations are not fifty draws), so every interval and test below takes a cluster
id per value: the user's, or one of its own for a conversation with no user. With Q
users, m_i values of user i, S_i their sum, n = Σm_i and x̄ = ΣS_i/n, the variance of
the mean (a rate's or a cost's) is the ratio estimator's, cluster-robust:

    V_user = Q/(Q-1) · Σ (S_i - x̄·m_i)² / n²,       V_ind = s²/n,  s² = Σ(x - x̄)²/(n-1)

V_ind is the same formula with every value its own cluster, so with one conversation per
user nothing changes: the intervals and tests are the textbook ones exactly. The design
effect ``deff = max(1, V_user / V_ind)`` (Kish) is never below 1, so a heavy user never
narrows an interval; n/deff is the effective n. When the users cannot show their spread
(Q = 1; or every value equal, V_ind = 0) deff = n/Q: each user counts once, as
``ragrail.stats.clustered_rate`` does for repeats.

- ``mean_ci``: x̄ ± t(0.975, df) · √V, V = V_ind and df = n - 1 (Student's t) when no
  user has two values, else V = max(V_user, V_ind) and df = Q - 1.
- ``rate_ci``: Wilson's interval of (x/deff, n/deff): the effective counts.
- ``quantile_ci``: distribution-free, from the order statistics x(1) <= ... <= x(n).
  The number B of values below the true q-quantile is Binomial(n, q), and
  x(l) <= ξ_q <= x(u) whenever l <= B <= u - 1, so with l - 1 the largest k with
  P(B <= k) <= 0.025 and u - 1 the smallest k with P(B <= k) >= 0.975 the coverage
  P(l <= B <= u - 1) is at least 95%. An end that falls outside 1..n is unbounded
  (None: too few values to bound it). By user (deff of the indicator x <= the sample
  quantile above 1): the ranks of n_eff = ⌊n/deff⌋ values, scaled by n/n_eff, low rank
  down and high rank up (Woodruff's idea: the quantile's interval is the rate's).
- ``newcombe``: the difference p2 - p1 of two independent rates, Newcombe's hybrid score
  interval (his method 10) from the Wilson intervals (l1, u1) and (l2, u2):
  [d - √((p2 - l2)² + (u1 - p1)²),  d + √((u2 - p2)² + (p1 - l1)²)], on the effective
  counts by user.
- ``rate_test``: the pooled z-test, z = (p2 - p1) / √(p̄(1 - p̄)(1/n1 + 1/n2)),
  p̄ = (x1 + x2)/(n1 + n2), p = 2(1 - Φ(|z|)) ("two-proportion z-test"); Fisher's exact
  test (scipy, "Fisher exact") instead when an expected cell count n_i·p̄ or n_i·(1 - p̄)
  is under 5. By user, both on the effective counts x_i/deff_i, n_i/deff_i (Rao and
  Scott's design-effect correction; Fisher's on those counts rounded), named "... by
  user (Rao-Scott)".
- ``welch``: the difference of means, mean(b) - mean(a) ± t(0.975, ν)·√(V_a + V_b) with
  Welch-Satterthwaite's ν = (V_a + V_b)² / (V_a²/df_a + V_b²/df_b), V and df per arm as in
  ``mean_ci``, and Welch's t-test of the same t = d/√(V_a + V_b) ("Welch t-test"): the
  interval excludes 0 exactly when p < 0.05. Without repeated users it is scipy's
  ``ttest_ind(b, a, equal_var=False)``.
- ``median_test``: Mood's median test of a difference of medians: the share of each
  arm's values above the pooled sample's median (a value equal to it counts as below,
  scipy's ties="below"), compared by ``rate_test`` (scipy's ``median_test`` with
  correction=False, Fisher's exact for small counts), by user as above.
- ``mann_whitney_p``: Mann-Whitney U, two-sided (scipy). Kept for callers who ask
  whether one distribution tends to be larger; no online row uses it, since it tests
  neither a mean nor a median (same mean, different spread: p = 3.6e-89).
- ``holm``: Holm's step-down adjustment of m p-values: sorted ascending, the i-th
  (from 0) becomes max over j <= i of min(1, (m - j) · p_(j)).
- ``bootstrap_quantile_difference``: percentile bootstrap of a quantile's difference
  (each arm resampled independently, fixed seed; conversations, not users).
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
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragrail.stats import Interval, wilson
from ragrail.stats import (
    holm as holm,  # re-exported: ab.py, signals.py and tests call inference.holm
)

if TYPE_CHECKING:
    from typing import TypeAlias

    import numpy as np

    # each value's cluster (its user's number); None: every value its own
    Clusters: TypeAlias = Sequence[int] | np.ndarray | None

ALPHA = 0.05
POWER = 0.8
RAO_SCOTT = " by user (Rao-Scott)"


@dataclass(frozen=True)
class Spread:
    """A mean's variance and its degrees of freedom (module docstring), and the design
    effect by user (1: no user has two values)."""

    variance: float
    df: int
    deff: float


@dataclass(frozen=True)
class Tested:
    """A test's two-sided p-value and its name, as the reports print it."""

    p_value: float
    test: str


def phi_upper(z: float) -> float:
    """P(Z > z) for a standard normal Z."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def normal_quantile(p: float) -> float:
    """z with P(Z <= z) = p."""
    from statistics import NormalDist

    return NormalDist().inv_cdf(p)


def _by_cluster(values: np.ndarray, clusters: Clusters) -> tuple[np.ndarray, np.ndarray]:
    """Each cluster's sum and count; every value its own cluster when ``clusters`` is None."""
    import numpy as np

    if clusters is None:
        return values, np.ones(len(values))
    _, inverse = np.unique(np.asarray(clusters), return_inverse=True)
    return np.bincount(inverse, weights=values), np.bincount(inverse).astype(float)


def spread(values: Sequence[float] | np.ndarray, clusters: Clusters = None) -> Spread | None:
    """The variance of the mean of ``values`` (module docstring: V_ind, or by user
    max(V_user, V_ind) with the design effect); None for fewer than two values."""
    import numpy as np

    x = np.asarray(values, dtype=float)
    n = len(x)
    if n < 2:
        return None
    mean = float(x.mean())
    v_ind = float(((x - mean) ** 2).sum()) / (n - 1) / n
    sums, counts = _by_cluster(x, clusters)
    q = len(sums)
    if q == n:  # no user has two values: the textbook formula, exactly
        return Spread(v_ind, n - 1, 1.0)
    if q < 2 or v_ind == 0:  # nothing shows the users' spread: each counts once
        return Spread(v_ind * n / q, max(q - 1, 0), n / q)
    v_user = q / (q - 1) * float(((sums - mean * counts) ** 2).sum()) / (n * n)
    deff = max(1.0, v_user / v_ind)
    return Spread(v_ind * deff, q - 1, deff)


def design_effect(outcomes: Sequence[float] | np.ndarray, clusters: Clusters) -> float:
    """Kish's design effect of a mean by user (module docstring); 1 without users or
    with fewer than two values."""
    found = spread(outcomes, clusters) if clusters is not None else None
    return 1.0 if found is None else found.deff


def mean_ci(values: Sequence[float], clusters: Sequence[int] | None = None) -> Interval | None:
    """Student's t interval of the mean, by user when ``clusters`` repeat (module
    docstring); None for fewer than two values or a single user (nothing shows the
    spread)."""
    s = spread(values, clusters)
    if s is None or s.df < 1:
        return None
    from scipy.stats import t

    mean = math.fsum(values) / len(values)
    half = float(t.ppf(0.975, s.df)) * math.sqrt(s.variance)
    return Interval(mean - half, mean + half)


def rate_ci(successes: int, n: int, deff: float = 1.0) -> Interval | None:
    """Wilson's interval of the effective counts (successes/deff, n/deff)."""
    if deff == 1.0:
        return wilson(successes, n)
    return wilson(successes / deff, n / deff)


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


def quantile_ci(
    sorted_values: Sequence[float], q: float, deff: float = 1.0
) -> tuple[float | None, float | None]:
    """(low, high) order-statistic interval of the q-quantile, by user when deff > 1
    (module docstring); None for an unbounded end."""
    n = len(sorted_values)
    if n == 0:
        return None, None
    if deff <= 1.0:
        low_rank, high_rank = quantile_ranks(n, q)
    else:
        m = max(1, math.floor(n / deff))
        low_m, high_m = quantile_ranks(m, q)
        low_rank = math.floor(low_m * n / m)
        high_rank = n + 1 if high_m > m else math.ceil(high_m * n / m)
    low = sorted_values[low_rank - 1] if low_rank >= 1 else None
    high = sorted_values[high_rank - 1] if high_rank <= n else None
    return low, high


def newcombe(
    x1: float, n1: float, x2: float, n2: float, deff1: float = 1.0, deff2: float = 1.0
) -> Interval | None:
    """Newcombe's hybrid score interval of p2 - p1 (module docstring), on the effective
    counts x/deff, n/deff."""
    x1, n1, x2, n2 = x1 / deff1, n1 / deff1, x2 / deff2, n2 / deff2
    w1, w2 = wilson(x1, n1), wilson(x2, n2)
    if w1 is None or w2 is None:
        return None
    p1, p2 = x1 / n1, x2 / n2
    d = p2 - p1
    return Interval(
        d - math.sqrt((p2 - w2.low) ** 2 + (w1.high - p1) ** 2),
        d + math.sqrt((w2.high - p2) ** 2 + (p1 - w1.low) ** 2),
    )


def rate_test(x1: int, n1: int, x2: int, n2: int, deff1: float = 1.0, deff2: float = 1.0) -> Tested:
    """Two-sided test that two rates differ: pooled z-test, or Fisher's exact test when an
    expected count is under 5, on the effective counts by user (module docstring). p = 1
    when an arm is empty."""
    by_user = deff1 > 1.0 or deff2 > 1.0
    suffix = RAO_SCOTT if by_user else ""
    if n1 == 0 or n2 == 0:
        return Tested(1.0, "two-proportion z-test" + suffix)
    y1, m1, y2, m2 = x1 / deff1, n1 / deff1, x2 / deff2, n2 / deff2
    pooled = (y1 + y2) / (m1 + m2)
    if min(m1, m2) * min(pooled, 1 - pooled) < 5:
        from scipy.stats import fisher_exact

        # Fisher's test counts whole conversations: the effective counts rounded
        k1, k2 = round(y1), round(y2)
        t1, t2 = max(round(m1), k1, 1), max(round(m2), k2, 1)
        table = [[k1, t1 - k1], [k2, t2 - k2]]
        return Tested(float(fisher_exact(table).pvalue), "Fisher exact" + suffix)
    z = (y2 / m2 - y1 / m1) / math.sqrt(pooled * (1 - pooled) * (1 / m1 + 1 / m2))
    return Tested(min(1.0, 2 * phi_upper(abs(z))), "two-proportion z-test" + suffix)


def two_proportion_p(x1: int, n1: int, x2: int, n2: int) -> float:
    """``rate_test``'s p-value for independent conversations."""
    return rate_test(x1, n1, x2, n2).p_value


def welch(
    a: Sequence[float],
    b: Sequence[float],
    clusters_a: Sequence[int] | None = None,
    clusters_b: Sequence[int] | None = None,
) -> tuple[Interval, Tested] | None:
    """Welch's interval of mean(b) - mean(a) and Welch's t-test of it, by user (module
    docstring). None when an arm has fewer than two values or one user; both arms
    constant: the difference itself as the interval, p = 1 when it is 0, else 0."""
    sa, sb = spread(a, clusters_a), spread(b, clusters_b)
    if sa is None or sb is None or sa.df < 1 or sb.df < 1:
        return None
    by_user = sa.deff > 1.0 or sb.deff > 1.0
    name = "Welch t-test" + (" by user" if by_user else "")
    d = math.fsum(b) / len(b) - math.fsum(a) / len(a)
    v = sa.variance + sb.variance
    if v == 0:
        return Interval(d, d), Tested(1.0 if d == 0 else 0.0, name)
    from scipy.stats import t

    df = v**2 / (sa.variance**2 / sa.df + sb.variance**2 / sb.df)
    half = float(t.ppf(0.975, df)) * math.sqrt(v)
    p = float(2 * t.sf(abs(d) / math.sqrt(v), df))
    return Interval(d - half, d + half), Tested(min(1.0, p), name)


def welch_ci(a: Sequence[float], b: Sequence[float]) -> Interval | None:
    """``welch``'s interval for independent values."""
    found = welch(a, b)
    return None if found is None else found[0]


def median_test(
    a: Sequence[float],
    b: Sequence[float],
    clusters_a: Sequence[int] | None = None,
    clusters_b: Sequence[int] | None = None,
) -> Tested | None:
    """Mood's median test (module docstring); None when an arm is empty."""
    if not len(a) or not len(b):
        return None
    import numpy as np

    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    grand = float(np.median(np.concatenate([xa, xb])))
    above_a, above_b = (xa > grand).astype(float), (xb > grand).astype(float)
    found = rate_test(
        int(above_a.sum()),
        len(xa),
        int(above_b.sum()),
        len(xb),
        design_effect(above_a, clusters_a),
        design_effect(above_b, clusters_b),
    )
    name = "Mood median test"
    if found.test.startswith("Fisher"):
        name += " (Fisher exact)"
    return Tested(found.p_value, name + (RAO_SCOTT if found.test.endswith(RAO_SCOTT) else ""))


def mann_whitney_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided Mann-Whitney U p-value (scipy); 1.0 when a side is empty or every value
    is the same."""
    if not len(a) or not len(b):
        return 1.0
    from scipy.stats import mannwhitneyu

    p = float(mannwhitneyu(a, b, alternative="two-sided").pvalue)
    return 1.0 if math.isnan(p) else p


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


def bootstrap_quantile_difference(
    a: Sequence[float],
    b: Sequence[float],
    q: float = 0.5,
    resamples: int = 2000,
    seed: int = 20240229,
    clusters_a: Sequence[int] | None = None,
    clusters_b: Sequence[int] | None = None,
) -> Interval | None:
    """Percentile bootstrap 95% interval of quantile_q(b) - quantile_q(a): each arm
    resampled with replacement, independently, ``resamples`` times from one seeded
    generator (the same data always give the same interval), in blocks of rows so
    memory stays near 2^18 indices per arm. By user (``clusters_*`` given) an arm's
    users are resampled, each with all its values, and the quantile is the weighted
    one (the smallest value whose cumulative weight reaches q of the total). None when
    an arm is empty."""
    if not len(a) or not len(b):
        return None
    import numpy as np

    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    diffs = np.empty(resamples)
    rows = max(1, (1 << 18) // max(len(xa), len(xb)))
    arm_a, arm_b = _Arm(xa, clusters_a), _Arm(xb, clusters_b)
    for start in range(0, resamples, rows):
        stop = min(resamples, start + rows)
        qa = arm_a.quantiles(rng, q, stop - start)  # A drawn first, as it always was
        diffs[start:stop] = arm_b.quantiles(rng, q, stop - start) - qa
    low, high = np.percentile(diffs, [2.5, 97.5])
    return Interval(float(low), float(high))


class _Arm:
    """One arm of the bootstrap: its values, or by user its values sorted with each
    one's user (numbered 0..Q-1), prepared once for every block of resamples."""

    def __init__(self, x: np.ndarray, clusters: Sequence[int] | None) -> None:
        import numpy as np

        self.x = x
        self.users = 0
        if clusters is not None:
            order = np.argsort(x, kind="stable")
            self.x = x[order]
            _, self.inverse = np.unique(np.asarray(clusters)[order], return_inverse=True)
            self.users = int(self.inverse.max()) + 1

    def quantiles(self, rng: np.random.Generator, q: float, rows: int) -> np.ndarray:
        """``rows`` bootstrap q-quantiles: the values resampled, or the users (each
        user's draw count weighting its values)."""
        import numpy as np

        x = self.x
        if not self.users:
            return np.quantile(x[rng.integers(0, len(x), size=(rows, len(x)))], q, axis=1)
        drawn = rng.multinomial(self.users, np.full(self.users, 1.0 / self.users), size=rows)
        cumulative = np.cumsum(drawn[:, self.inverse], axis=1)
        reached = cumulative >= q * cumulative[:, -1:]
        return x[np.argmax(reached, axis=1)]
