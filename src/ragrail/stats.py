"""Intervals and paired tests for totals.

Every total is reported with its n and a 95% interval: Wilson's score
interval for rates (hit rate, answer pass rate), a percentile bootstrap for
means of per-question scores (recall, precision, faithfulness, ...). The
bootstrap uses a fixed seed, so the same scores always give the same
interval. Comparing two runs of the same questions uses McNemar's exact test
on the questions whose verdict flipped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

Z95 = 1.959963984540054
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20240229


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


def wilson(successes: int, n: int, z: float = Z95) -> Interval | None:
    """Wilson score interval for a proportion p = successes / n:

        centre = (p + z²/2n) / (1 + z²/n)
        half   = z / (1 + z²/n) * sqrt(p(1-p)/n + z²/4n²)

    None when n = 0.
    """
    if n <= 0:
        return None
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return Interval(max(0.0, centre - half), min(1.0, centre + half))


def bootstrap_mean(
    values: Sequence[float], resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> Interval | None:
    """Percentile bootstrap 95% interval of the mean: resample the n values with
    replacement ``resamples`` times and take the 2.5th and 97.5th percentiles of
    the resampled means. None when there are no values."""
    if not values:
        return None
    import numpy as np

    data = np.asarray(values, dtype=float)
    if len(data) == 1 or np.all(data == data[0]):
        return Interval(float(data[0]), float(data[0]))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(data), size=(resamples, len(data)))
    means = data[idx].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return Interval(float(low), float(high))


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
