"""Intervals and paired tests for totals.

Every total is reported with its n and a 95% interval (z = 1.96).

**Rates** (hit rate, a judge criterion's pass rate, the answer pass rate with one answer
per question): Wilson's score interval, ``wilson``.

**Means of per-question scores** (recall, precision, faithfulness, ...), ``mean_interval``:

- n <= BOOTSTRAP_MAX_N (5,000): a percentile bootstrap with a fixed seed (2,000
  resamples), so the same scores always give the same interval. The resample indices
  are drawn in blocks of rows from one generator stream; numpy draws the same numbers in
  blocks as in one (resamples x n) array, so the intervals are exactly those of the
  whole-array bootstrap, in memory for about BLOCK_ELEMENTS indices whatever n is. Means
  of the same n share one draw (each reseeded the same generator, so they always drew
  the same indices).
- n > BOOTSTRAP_MAX_N: the normal interval x̄ ± z·σ/√n with σ² = Σ(x - x̄)²/n, the
  variance of the bootstrap's own resampled means, clipped to [min x, max x]. On
  Bernoulli(0.5, 0.05, 0.01), thirds, Beta(0.2, 0.5), mostly-1 and reciprocal-rank shaped
  data the two agree to 0.0008 at n = 5,000 and 0.0004 at 10,000 (the bootstrap's own
  Monte Carlo error with 2,000 resamples is of that size): a tenth of the printed unit
  (0.01, or 1%). The bootstrap would cost 2,000 x n draws per metric: 3 GB at 100,000.
- Honest at the bounds. With scores in [0, 1], sum s and n - s: when s < 10 or
  n - s < 10 (the success-failure condition for a normal approximation of a proportion),
  or the interval has zero width (all values equal), the interval is widened to hold
  Wilson's interval of (s, n): the mean taken as a proportion. Below 20 values that is
  always so. That is conservative,
  not a guess: a score X in [0, 1] with mean μ has variance at most μ(1 - μ), a coin's
  (replace each score x by a coin that lands 1 with probability x: same mean). A
  bootstrap only resamples what it saw, so 11 faithful answers of 11 gave
  "1.00 [1.00, 1.00]"; now Wilson(11, 11) = [0.74, 1.00] (the "rule of three" says
  about the same: 1 - 3/11 = 0.73).

**Answer pass rate with repeats**, ``clustered_rate``: the questions are the sample, and
the repeats of one question are not independent trials, so pooling them in one Wilson
interval (n = questions x repeats) is too narrow. Wilson's interval uses the effective
number of trials instead (Kish's design effect; Korn & Graubard 1998 for proportions):
with y_i passes of m_i answers for question i of Q, p = Σy/Σm,

    V     = Q/(Q-1) · Σ (y_i - p·m_i)² / (Σm)²      (ratio-estimator variance over questions)
    n_eff = p(1-p) / V,  at most Σm

and the interval is Wilson(p·n_eff, n_eff). When the questions cannot show their spread
(Q = 1, or p is 0 or 1) n_eff = Q: each question counts once.

Comparing two runs of the same questions uses McNemar's exact test on the questions
whose verdict flipped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

Z95 = 1.959963984540054
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20240229
BOOTSTRAP_MAX_N = 5000  # above it, the normal interval (see the module docstring)
BLOCK_ELEMENTS = 1 << 18  # resample indices drawn at a time: 2 MB of int64
BOUNDARY_MASS = 10.0  # s or n - s below it: widen to Wilson's interval


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


def wilson(successes: float, n: float, z: float = Z95) -> Interval | None:
    """Wilson score interval for a proportion p = successes / n:

        centre = (p + z²/2n) / (1 + z²/n)
        half   = z / (1 + z²/n) * sqrt(p(1-p)/n + z²/4n²)

    successes and n may be fractional (a sum of scores, an effective n). At p = 1 the
    high end is 1 exactly (centre + half = 1 in exact arithmetic), at p = 0 the low end
    is 0. None when n <= 0.
    """
    if n <= 0:
        return None
    p = min(1.0, max(0.0, successes / n))
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low = 0.0 if p == 0.0 else max(0.0, centre - half)
    high = 1.0 if p == 1.0 else min(1.0, centre + half)
    return Interval(low, high)


def bootstrap_mean(
    values: Sequence[float], resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> Interval | None:
    """Percentile bootstrap 95% interval of the mean: resample the n values with
    replacement ``resamples`` times and take the 2.5th and 97.5th percentiles of
    the resampled means (numpy's linear interpolation). A single value, or values all
    equal, give that value as both ends. None when there are no values. Memory stays
    near BLOCK_ELEMENTS indices whatever n is (see ``_bootstrap_same_n``)."""
    if not len(values):
        return None
    import numpy as np

    return _bootstrap_same_n([np.asarray(values, dtype=float)], resamples, seed)[0]


def mean_interval(values: Sequence[float]) -> Interval | None:
    """The 95% interval of a mean of per-question scores: bootstrap up to
    BOOTSTRAP_MAX_N values, normal above, widened to Wilson's interval near the bounds
    of [0, 1] (module docstring). None when there are no values."""
    return mean_intervals([values])[0]


def mean_intervals(
    columns: Sequence[Sequence[float]],
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> list[Interval | None]:
    """``mean_interval`` of each column, sharing one resample draw between the columns
    of the same length and computing a repeated column once."""
    import numpy as np

    arrays = [np.asarray(c, dtype=float) for c in columns]
    base: dict[int, Interval] = {}
    by_n: dict[int, dict[bytes, list[int]]] = {}
    for i, data in enumerate(arrays):
        if 0 < len(data) <= BOOTSTRAP_MAX_N:
            by_n.setdefault(len(data), {}).setdefault(data.tobytes(), []).append(i)
        elif len(data):
            base[i] = _normal(data)
    for same_n in by_n.values():
        members = list(same_n.values())
        found = _bootstrap_same_n([arrays[m[0]] for m in members], resamples, seed)
        for ids, interval in zip(members, found, strict=True):
            base.update(dict.fromkeys(ids, interval))
    return [_widen_at_bounds(base[i], data) if len(data) else None for i, data in enumerate(arrays)]


def clustered_rate(passes: Sequence[int], trials: Sequence[int]) -> Interval | None:
    """Wilson's interval of Σpasses / Σtrials when each question i gave trials[i] answers
    (repeats) of which passes[i] passed, with the effective n of the module docstring:
    p = Σy/Σm, V = Q/(Q-1)·Σ(y_i - p·m_i)²/(Σm)², n_eff = min(Σm, p(1-p)/V), and
    n_eff = Q when Q = 1 or p is 0 or 1. Questions with no trials are left out. None
    when nothing was tried.

    10 questions x 5 repeats, 5 always passing and 5 always failing: p = 0.5, every
    y_i - p·m_i = ±2.5, V = 10/9 · 62.5 / 50² = 1/36, n_eff = 0.25 · 36 = 9, so the
    interval is Wilson(4.5, 9) = [0.227, 0.773], not the pooled Wilson(25, 50) =
    [0.366, 0.634].
    """
    pairs = [(y, m) for y, m in zip(passes, trials, strict=True) if m > 0]
    total = sum(m for _, m in pairs)
    if not total:
        return None
    q = len(pairs)
    p = sum(y for y, _ in pairs) / total
    if q < 2 or p in (0.0, 1.0):
        n_eff = float(q)
    else:
        v = q / (q - 1) * sum((y - p * m) ** 2 for y, m in pairs) / (total * total)
        n_eff = float(total) if v <= 0 else max(1.0, min(float(total), p * (1 - p) / v))
    return wilson(p * n_eff, n_eff)


def _bootstrap_same_n(arrays: Sequence[np.ndarray], resamples: int, seed: int) -> list[Interval]:
    """Percentile bootstrap of each array's mean, all of the same length n, drawing the
    resample indices (rows of n) from one generator in blocks of BLOCK_ELEMENTS / n rows.
    Each block's rows are the rows the (resamples x n) array would hold, and each row's
    mean is taken as ``data[idx].mean(axis=1)`` took it, so the result is bit for bit the
    whole-array bootstrap's."""
    import numpy as np

    found: dict[int, Interval] = {}
    varied: list[int] = []
    for j, data in enumerate(arrays):
        if len(data) == 1 or np.all(data == data[0]):
            found[j] = Interval(float(data[0]), float(data[0]))
        else:
            varied.append(j)
    if varied:
        n = len(arrays[varied[0]])
        rng = np.random.default_rng(seed)
        means = np.empty((len(varied), resamples))
        rows = max(1, BLOCK_ELEMENTS // n)
        for start in range(0, resamples, rows):
            stop = min(resamples, start + rows)
            idx = rng.integers(0, n, size=(stop - start, n))
            for k, j in enumerate(varied):
                means[k, start:stop] = arrays[j][idx].mean(axis=1)
        for k, j in enumerate(varied):
            low, high = np.percentile(means[k], [2.5, 97.5])
            found[j] = Interval(float(low), float(high))
    return [found[j] for j in range(len(arrays))]


def _normal(data: np.ndarray) -> Interval:
    lo, hi = float(data.min()), float(data.max())
    # numpy's rounded mean of equal values can fall an ulp outside them (5,001 x 3.3
    # gave 3.2999999999999994): clamped first, low never passes high
    mean = min(hi, max(lo, float(data.mean())))
    half = Z95 * float(data.std()) / math.sqrt(len(data))
    return Interval(max(lo, mean - half), min(hi, mean + half))


def _widen_at_bounds(interval: Interval, data: np.ndarray) -> Interval:
    """The interval, widened to hold Wilson's interval of (Σx, n) when the scores lie in
    [0, 1] and Σx or n - Σx is under BOUNDARY_MASS, or the interval has zero width."""
    if float(data.min()) < 0.0 or float(data.max()) > 1.0:
        return interval
    n = len(data)
    s = float(data.sum())
    if min(s, n - s) >= BOUNDARY_MASS and interval.high > interval.low:
        return interval
    w = wilson(s, n) or interval  # n >= 1 here, so never None
    return Interval(min(interval.low, w.low), max(interval.high, w.high))


@dataclass(frozen=True)
class McNemar:
    worse: int  # passed before, fails now
    better: int  # failed before, passes now
    p_value: float

    @property
    def significant(self) -> bool:
        return self.p_value < 0.05


def mcnemar_exact(worse: int, better: int) -> McNemar:
    """Exact McNemar test on paired pass/fail verdicts.

    Only discordant pairs carry information: under "no change", each flip is
    worse or better with probability 1/2, so
    p = min(1, 2 * P(X <= min(worse, better))) with X ~ Binomial(worse + better, 1/2).
    p = 1 when nothing flipped.
    """
    n = worse + better
    if n == 0:
        return McNemar(worse, better, 1.0)
    k = min(worse, better)
    # C(n, i+1) from C(n, i): one multiply-divide per term instead of a fresh math.comb,
    # which made 10,000 flipped questions take seconds. Exact integers, one rounding.
    term = total = 1
    for i in range(k):
        term = term * (n - i) // (i + 1)
        total += term
    return McNemar(worse, better, min(1.0, 2 * (total / 2**n)))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given: for the j-th smallest of m
    (j = 1..m), max over i <= j of min(1, (m - i + 1) p_(i)). One family: the gate's
    per-question tests (ragrail.diff.noise) and the online report's (ragrail.online)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
