"""Judge-scored totals corrected by human labels: prediction-powered inference.

A judge's raw rate over all answers inherits the judge's bias: a judge 10 points too
lenient makes the total 10 points too high, with an interval far too narrow to show
it. Prediction-powered inference (PPI, Angelopoulos, Bates, Fannjiang, Jordan, Zrnic,
"Prediction-powered inference", Science 382, 2023) corrects the judge's mean by its
measured error on a few hundred human-labelled answers and gives a valid interval;
PPI++ (Angelopoulos, Duchi, Zrnic, "PPI++: Efficient prediction-powered inference",
arXiv:2311.01453, 2023) weights the judge by a tuned λ so the interval is never much
wider than the human-labels-only one. ARES (Saad-Falcon et al., NAACL 2024) uses PPI
for RAG judges.

Notation. f is the judge, Y the human label, both in [0, 1] (a pass/fail verdict or a
faithfulness score). f(X̃_1..N): the judge on all N questions (the "unlabelled" set);
(f(X_i), Y_i), i = 1..n: the judge and the human on the n labelled answers. σ² is a
sample variance (denominator n - 1), Cov a sample covariance (n - 1), z = Φ⁻¹(1 - α/2).

**Classic PPI** (λ = 1) and **PPI++** (tuned λ), one formula:

    θ̂_λ    = λ·mean f(X̃) + mean(Y - λ·f(X))
    Var    = λ²·σ²_f(X̃)/N + σ²_{Y-λf(X)}/n
    CI     = θ̂_λ ± z·√Var,  intersected with [0, 1]

λ = 1 is classic PPI: the judge's mean plus the mean of (human - judge). λ = 0 is the
human labels alone. PPI++ picks the λ that minimises Var (treating it as known):

    λ̂ = Cov(Y, f(X)) / ((1 + n/N)·σ²_f)

with σ²_f the judge's variance over the labelled and unlabelled values pooled (as the
reference implementation, ppi_py, does), clipped to [0, 1]: below 0 the judge is
anti-correlated with the humans (noise at small n, or a judge not worth using) and 0
falls back to the human labels; above 1 would extrapolate past the classic
correction on a noisy λ̂. θ̂_λ stays unbiased for any fixed λ; λ̂ costs only a
vanishing term asymptotically (PPI++, Theorem 1). A caller may fix λ (``lam``).

**Labels from another run.** Unbiasedness for every λ needs the labelled answers to be a
sample of the N judged ones. When the labels come from another run (an earlier answer
set), write Δ = E[Y - f] for the judge's mean error (the rectifier). If the judge errs on
this run as on the labelled one (Δ the same), θ = E f(X̃) + Δ and

    E θ̂_λ = θ - (1 - λ)·(E f(X̃) - E f(X))

so only λ = 1 is unbiased: any other λ pulls the estimate back towards the labelled
run's rate (λ = 0 freezes it at the labels' rate, whatever this run's judge says).
Re-tuning λ on this run's variance does not help (the bias is in the mean). Such runs
use classic PPI with the same variance formula (the two samples are independent);
the assumption "the judge errs on this run as it did on the labelled one" is what
the estimate rests on, and callers print it.

**Bounds.** The interval is intersected with [0, 1] (the true rate lies there, so
coverage is kept). When the intersection is empty (θ̂ + z·√Var < 0 or θ̂ - z·√Var > 1:
the judge passes far fewer, or more, answers than the labels allow) there is no
interval and ``fits`` is False: the labels do not fit this run. The estimate is clipped
to [0, 1]; ``unclipped`` keeps θ̂ (the unbiased figure that differences use). PPI
assumes the labelled answers are a random sample from the same population as the
N judged ones; labelled questions may also be among the N (the usual practice; the
dependence is negligible when n ≪ N).

**Degenerate cases**, handled rather than hidden:

- n = 0 or N = 0: ValueError: there is nothing to correct with (callers report the raw,
  uncorrected figure).
- n = 1: the classic correction (λ = 1) is still unbiased, so it is the estimate, but no
  variance can be estimated: low, high and human_only are None.
- the judge gives the same value everywhere (σ²_f = 0): λ̂ = 0 and the estimate is the
  human-only mean (with λ = 1 it is the same number: the constant cancels).
- a term of the variance is 0 with n >= 2 (every rectifier equal, or the judge constant
  on the run): a zero-width term would claim certainty from a finite sample (and a
  Wald interval of 20 labels that all agree undercovers badly). No variation seen in m
  values bounds the share that would differ by Wilson's upper bound
  w = w(0, m) = z²/(m + z²) (``ragrail.stats.wilson``), so the term's σ² is taken as
  w·(1 - w), the variance of a 0/1 value at that share (``floored``). ``se`` stays the
  plain estimate. With λ = 0 and all labels 1 (or 0) the interval is then exactly
  Wilson's interval of the labels: z·√(w(1 - w)/n) = w.
- the labels alone (``human_only``): Wilson's interval when every label is 0 or 1 (a
  proportion: it stays in [0, 1] and is not degenerate at 0 or n passes), else the
  normal interval of their mean, intersected with [0, 1].

Inputs must be finite and in [0, 1], with paired labelled arrays of equal length;
otherwise ValueError (a programming error here: the CLI validates files before).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ragrail.stats import wilson

if TYPE_CHECKING:
    import numpy as np


MAX_LABELS = 10**12  # beyond this "more labels" is no advice (and no exact count either)


@dataclass(frozen=True)
class PPIEstimate:
    """A corrected mean. ``estimate`` is θ̂ clipped to [0, 1], ``unclipped`` θ̂ itself;
    ``fits`` is False when θ̂ ± z·√Var misses [0, 1] altogether (no interval then).
    ``var_judge`` is σ²_f(X̃) and ``var_rectifier`` σ²_{Y-λf(X)} (None when n < 2);
    ``se`` = √Var (None when n < 2)."""

    estimate: float
    low: float | None
    high: float | None
    raw: float
    n_labelled: int
    n_unlabelled: int
    lam: float
    human_only: tuple[float, float] | None
    se: float | None = None
    var_judge: float = 0.0
    var_rectifier: float | None = None
    alpha: float = 0.05
    unclipped: float | None = None  # θ̂; None: set to ``estimate`` (never clipped)
    fits: bool = True

    def __post_init__(self) -> None:
        if self.unclipped is None:
            object.__setattr__(self, "unclipped", self.estimate)

    @property
    def theta(self) -> float:
        """θ̂ unclipped (what a difference of two estimates is built from)."""
        return self.estimate if self.unclipped is None else self.unclipped

    @property
    def clipped(self) -> bool:
        return self.theta != self.estimate


def _z(alpha: float) -> float:
    from scipy.stats import norm

    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    return float(norm.ppf(1.0 - alpha / 2.0))


def _array(values: Sequence[float] | np.ndarray, name: str) -> np.ndarray:
    import numpy as np

    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a flat sequence of numbers")
    if arr.size and (not np.all(np.isfinite(arr)) or arr.min() < 0.0 or arr.max() > 1.0):
        raise ValueError(f"{name} must hold finite values in [0, 1]")
    return arr


def _var(arr: np.ndarray) -> float:  # sample variance, 0 for fewer than 2 values
    return float(arr.var(ddof=1)) if arr.size >= 2 else 0.0


def _clip01(low: float, high: float) -> tuple[float, float] | None:
    """[low, high] ∩ [0, 1]; None when they do not meet."""
    low, high = max(0.0, low), min(1.0, high)
    return (low, high) if low <= high else None


def _human_interval(human: np.ndarray, z: float) -> tuple[float, float] | None:
    """Wilson's interval of the labels when each is 0 or 1 (or none varies); otherwise
    mean(Y) ± z·σ_Y/√n within [0, 1] (see the module docstring)."""
    import numpy as np

    n = human.size
    if n < 2:
        return None
    se = math.sqrt(_var(human) / n)
    if se == 0.0 or bool(np.all((human == 0.0) | (human == 1.0))):
        iv = wilson(float(human.sum()), n, z)
        assert iv is not None  # n >= 2
        return iv.low, iv.high
    mean = float(human.mean())
    found = _clip01(mean - z * se, mean + z * se)
    assert found is not None  # the mean lies in [0, 1]
    return found


def floored(var: float, size: int, z: float) -> float:
    """A sample variance for an interval: σ² itself, or w·(1 - w) when the ``size``
    values did not vary, w = z²/(size + z²) Wilson's upper bound on a share of 0 of
    ``size`` (see the module docstring)."""
    if var > 0.0:
        return var
    w = z * z / (size + z * z)
    return w * (1.0 - w)


def interval_var(est: PPIEstimate, z: float) -> float:
    """The variance an interval of ``est`` uses: Var with each term floored."""
    assert est.var_rectifier is not None  # n >= 2
    judged = est.lam**2 * floored(est.var_judge, est.n_unlabelled, z) if est.lam else 0.0
    return judged / est.n_unlabelled + floored(est.var_rectifier, est.n_labelled, z) / (
        est.n_labelled
    )


def tuned_lambda(
    judge_all: Sequence[float] | np.ndarray,
    judge_labelled: Sequence[float] | np.ndarray,
    human_labelled: Sequence[float] | np.ndarray,
) -> float:
    """PPI++'s λ̂ = Cov(Y, f(X)) / ((1 + n/N)·σ²_f), clipped to [0, 1]; σ²_f over the
    pooled judge values. 1 (classic PPI) when n < 2; 0 when the judge is constant."""
    import numpy as np

    f_all, f_lab, y = (
        _array(judge_all, "judge_all"),
        _array(judge_labelled, "judge_labelled"),
        _array(human_labelled, "human_labelled"),
    )
    n, big_n = y.size, f_all.size
    if n < 2:
        return 1.0
    var_f = _var(np.concatenate([f_lab, f_all]))
    if var_f == 0.0:
        return 0.0
    cov = float(np.cov(y, f_lab, ddof=1)[0, 1])
    return min(1.0, max(0.0, cov / ((1.0 + n / big_n) * var_f)))


def ppi_mean(
    judge_all: Sequence[float],
    judge_labelled: Sequence[float],
    human_labelled: Sequence[float],
    *,
    alpha: float = 0.05,
    tuned: bool = True,
    lam: float | None = None,
) -> PPIEstimate:
    """The corrected mean θ̂_λ and its 1 - α interval (formulas in the module
    docstring): λ = ``lam`` when given (in [0, 1]), else 1 (classic PPI) when ``tuned``
    is False and PPI++'s λ̂ otherwise. λ is 1 whenever n < 2."""
    z = _z(alpha)
    f_all = _array(judge_all, "judge_all")
    f_lab = _array(judge_labelled, "judge_labelled")
    y = _array(human_labelled, "human_labelled")
    if f_lab.size != y.size:
        raise ValueError(f"judge_labelled has {f_lab.size} values, human_labelled {y.size}")
    if y.size == 0 or f_all.size == 0:
        raise ValueError("PPI needs at least one labelled and one judged answer")
    n, big_n = y.size, f_all.size
    if lam is not None and not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam must be in [0, 1], got {lam}")
    if n < 2:
        lam = 1.0  # the only unbiased choice that needs no variance
    elif lam is None:
        lam = tuned_lambda(f_all, f_lab, y) if tuned else 1.0
    raw = float(f_all.mean())
    rect = y - lam * f_lab
    theta = lam * raw + float(rect.mean())
    var_judge = _var(f_all)
    common: dict[str, Any] = dict(
        estimate=min(1.0, max(0.0, theta)),
        unclipped=theta,
        raw=raw,
        n_labelled=n,
        n_unlabelled=big_n,
        lam=lam,
        var_judge=var_judge,
        alpha=alpha,
    )
    if n < 2:
        return PPIEstimate(low=None, high=None, human_only=None, **common)
    var_rect = _var(rect)
    human_only = _human_interval(y, z)
    se = math.sqrt(lam * lam * var_judge / big_n + var_rect / n)
    est = PPIEstimate(
        low=None, high=None, human_only=human_only, se=se, var_rectifier=var_rect, **common
    )
    half = z * math.sqrt(interval_var(est, z))
    found = _clip01(theta - half, theta + half)
    if found is None:
        return replace(est, fits=False)
    return replace(est, low=found[0], high=found[1])


def judge_bias(
    judge_labelled: Sequence[float],
    human_labelled: Sequence[float],
    alpha: float = 0.05,
    span: float = 1.0,
) -> tuple[float, float | None, float | None]:
    """The judge's bias d̄ = mean(f(X) - Y) on the labelled answers with the paired t
    interval d̄ ± t_{1-α/2, n-1}·s_d/√n (s_d the sample SD of the differences),
    intersected with [-span, span]; ``span`` is the largest possible difference (1 for
    pass/fail and rates, 4 for a 1-5 score). No interval when n < 2. When every
    difference is equal (s_d = 0, e.g. a judge that agreed on all n) the half-width is
    span times Wilson's upper bound on a disagreement rate of 0 of n (|d̄| <= P(disagree)
    · span), not zero: n agreements do not prove none ever happen."""
    import numpy as np
    from scipy.stats import t as student_t

    z = _z(alpha)  # validates alpha
    f_lab = np.asarray(judge_labelled, dtype=float)
    y = np.asarray(human_labelled, dtype=float)
    if (
        f_lab.ndim != 1
        or y.ndim != 1
        or not (np.all(np.isfinite(f_lab)) and np.all(np.isfinite(y)))
    ):
        raise ValueError("judge_bias needs two flat sequences of finite numbers")
    if f_lab.size != y.size:
        raise ValueError(f"judge_labelled has {f_lab.size} values, human_labelled {y.size}")
    if y.size == 0:
        raise ValueError("judge_bias needs at least one labelled answer")
    d = f_lab - y
    n, mean = d.size, float(d.mean())
    if n < 2:
        return mean, None, None
    sd = math.sqrt(_var(d))
    if sd == 0.0:
        iv = wilson(0.0, n, z)
        assert iv is not None
        half = iv.high * span
    else:
        half = float(student_t.ppf(1.0 - alpha / 2.0, n - 1)) * sd / math.sqrt(n)
    return mean, max(-span, mean - half), min(span, mean + half)


def labels_to_halve(est: PPIEstimate) -> int | None:
    """How many labels beyond the n already held would halve the corrected interval's
    width, holding N, λ and both variances. Halving the width quarters the variance:

        λ²σ²_f/N + σ²_r/n' = Var/4   ⇒   n' = σ²_r / (Var/4 - λ²σ²_f/N)

    and the answer is ⌈n'⌉ - n. None when labels alone cannot do it: the unlabelled
    term λ²σ²_f/N is already at least Var/4 (more judged questions, or a better judge,
    are needed), or there is no variance to halve (n < 2, or Var = 0), or it would take
    more than MAX_LABELS (a trillion) labels."""
    if est.se is None or est.var_rectifier is None or est.se == 0.0:
        return None
    target = est.se * est.se / 4.0
    unlabelled = est.lam * est.lam * est.var_judge / est.n_unlabelled
    room = target - unlabelled
    if room <= 0.0 or est.var_rectifier == 0.0:
        return None
    needed = est.var_rectifier / room
    if needed > MAX_LABELS:  # room within float noise of 0: as good as impossible
        return None
    # A tiny tolerance so float noise in an exact hand case does not add one label.
    return max(0, math.ceil(needed - 1e-9) - est.n_labelled)


def planned_labels_to_halve(
    judge_labelled: Sequence[float], human_labelled: Sequence[float], n_judged: int
) -> int | None:
    """:func:`labels_to_halve` before a run of ``n_judged`` answers is judged, as
    ``judge validate`` reports it: σ²_f(X̃) taken as the judge's variance on the labelled
    answers, and λ̂ as PPI++ would tune it with that variance. None as there, or when
    ``n_judged`` < 1."""
    import numpy as np

    f_lab = _array(judge_labelled, "judge_labelled")
    y = _array(human_labelled, "human_labelled")
    if f_lab.size != y.size:
        raise ValueError(f"judge_labelled has {f_lab.size} values, human_labelled {y.size}")
    n = y.size
    if n < 2 or n_judged < 1:
        return None
    var_f = _var(f_lab)
    lam = 0.0
    if var_f > 0.0:
        cov = float(np.cov(y, f_lab, ddof=1)[0, 1])
        lam = min(1.0, max(0.0, cov / ((1.0 + n / n_judged) * var_f)))
    var_rect = _var(y - lam * f_lab)
    var = lam * lam * var_f / n_judged + var_rect / n
    est = PPIEstimate(
        estimate=0.0,
        low=None,
        high=None,
        raw=0.0,
        n_labelled=n,
        n_unlabelled=n_judged,
        lam=lam,
        human_only=None,
        se=math.sqrt(var),
        var_judge=var_f,
        var_rectifier=var_rect,
    )
    return labels_to_halve(est)
