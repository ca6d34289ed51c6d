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
