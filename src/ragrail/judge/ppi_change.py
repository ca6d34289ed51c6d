"""The difference of two corrected totals (``ragrail.judge.ppi``) and its interval: what
``ragrail diff`` shows for a judged total corrected in both runs.

Notation as in ``ragrail.judge.ppi``: run A (now) and run B (baseline), each with its
judge verdicts f_A(X̃), f_B(X̃) over N judged answers, corrected with λ_A and λ_B by
labelled pairs (f(X), Y) with rectifiers r = Y - λ·f(X). Each corrected total is
θ̂ = λ·mean f(X̃) + mean r, unclipped (the unbiased figure), so

    D = θ̂_A - θ̂_B = λ_A·mean f_A(X̃) - λ_B·mean f_B(X̃) + mean(r_A) - mean(r_B)

**One set of labels for both runs** (the same validation): r_A - r_B = (λ_B - λ_A)·f(X),
the people's Y cancel, and

    D = λ_A·mean f_A(X̃) - λ_B·mean f_B(X̃) + (λ_B - λ_A)·mean f(X)

The labels' term vanishes only when λ_A = λ_B: two runs corrected from another run's
labels (both classic PPI, λ = 1) differ by the judge's raw rates, D = mean(f_A - f_B);
the labelled run itself (PPI++, λ_B < 1) against a later run (λ_A = 1) keeps
(λ_B - 1)·mean f(X) with its own variance. D estimates θ_A - θ_B without bias when
the judge errs on both runs as it did on the labelled one (the same rectifier, see
``ragrail.judge.ppi``), for any λ_B of a run the labels were drawn from.

Variance, each λ treated as known (as in PPI++), the judged and labelled samples
independent of each other:

- paired (both runs judged on the same N questions, in the same order; the labels on
  the same n questions): Var = σ²(λ_A·f_A(X̃) - λ_B·f_B(X̃))/N + σ²(r_A - r_B)/n. With
  shared labels the second term is (λ_A - λ_B)²·σ²_f(X)/n: the covariance of the two
  estimates through the shared labels is what makes it that small (it is 0 when λ is
  the same: the labels cancel).
- unpaired (other questions, or each run with its own validation): the two estimates are
  independent, Var = Var_A + Var_B (conservative when the runs share questions).

CI = D ± z·√Var intersected with [-1, 1]; none when n < 2 in either run, or when the
intersection is empty. A term whose sample variance is 0 (no question changed its
verdict; labels that all agree) would claim certainty from a finite sample: it is
floored as in ``ragrail.judge.ppi.floored``, σ² := k²·w(1 - w) with w = z²/(m + z²)
Wilson's bound on a share of m values that might differ unseen, k = max(λ_A, λ_B) for
the judged term and |λ_A - λ_B| (shared labels) or 1 for the labels' term; a term with
k = 0 is exactly 0 and stays so (the labels cancel).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ragrail.judge.ppi import PPIEstimate, _array, _var, _z, floored, interval_var, ppi_mean


@dataclass(frozen=True)
class PPIDifference:
    """θ̂_A - θ̂_B (unclipped) with its interval; ``paired`` says which variance formula
    was used."""

    estimate: float
    low: float | None
    high: float | None
    paired: bool
    a: PPIEstimate
    b: PPIEstimate


def ppi_difference(
    a_all: Sequence[float],
    a_judge_labelled: Sequence[float],
    a_human_labelled: Sequence[float],
    b_all: Sequence[float],
    b_judge_labelled: Sequence[float],
    b_human_labelled: Sequence[float],
    *,
    paired: bool = False,
    alpha: float = 0.05,
    tuned: bool = True,
    lam_a: float | None = None,
    lam_b: float | None = None,
) -> PPIDifference:
    """θ̂_A - θ̂_B for two runs judged by the same validated judge, each corrected by
    ``ppi_mean`` (λ = ``lam_a``/``lam_b`` when given, else as ``tuned`` says), with a
    1 - α interval (formulas in the module docstring). ``paired=True``: both runs were
    judged on the same N questions and labelled on the same n questions in the same
    order (the caller guarantees the order; only the lengths are checked); passing the
    same labelled arrays for both gives the shared-labels covariance."""
    a = ppi_mean(a_all, a_judge_labelled, a_human_labelled, alpha=alpha, tuned=tuned, lam=lam_a)
    b = ppi_mean(b_all, b_judge_labelled, b_human_labelled, alpha=alpha, tuned=tuned, lam=lam_b)
    estimate = a.theta - b.theta
    if a.se is None or b.se is None:
        return PPIDifference(estimate, None, None, paired, a, b)
    z = _z(alpha)
    if paired:
        if a.n_unlabelled != b.n_unlabelled or a.n_labelled != b.n_labelled:
            raise ValueError("paired runs need the same number of judged and labelled answers")
        fa, fb = _array(a_all, "a_all"), _array(b_all, "b_all")
        fla, flb = _array(a_judge_labelled, "a"), _array(b_judge_labelled, "b")
        ya, yb = _array(a_human_labelled, "a"), _array(b_human_labelled, "b")
        ra, rb = ya - a.lam * fla, yb - b.lam * flb
        # a term that did not vary is floored (ragrail.judge.ppi.floored) unless it is
        # identically 0: no judge weight, or shared labels with the same λ
        shared = bool((fla == flb).all() and (ya == yb).all())
        c = abs(a.lam - b.lam) if shared else 1.0
        judged = _var(a.lam * fa - b.lam * fb) or max(a.lam, b.lam) ** 2 * floored(0.0, fa.size, z)
        labels = _var(ra - rb) or c * c * floored(0.0, ra.size, z)
        half = z * math.sqrt(judged / fa.size + labels / ra.size)
    else:
        half = z * math.sqrt(interval_var(a, z) + interval_var(b, z))
    low, high = max(-1.0, estimate - half), min(1.0, estimate + half)
    if low > high:
        return PPIDifference(estimate, None, None, paired, a, b)
    return PPIDifference(estimate, low, high, paired, a, b)
