"""Corrected judged totals across runs: coverage before and after issue 24.

    python benchmarks/bench_corrected.py [--trials 2000] [--seed 0]

People labelled ``n`` answers of one run (the labelled run); later runs of a changed
system are corrected with those labels. Each seeded trial draws the labelled run's
pairs (judge verdict f, human verdict Y), a later run's N judge verdicts, and a
baseline run judged on the same N questions, then checks whether each 95% interval
holds the truth. Printed, never timed or asserted; the targets are issue 24's.

Two judges:

- **same error** (the assumption the corrected total prints: "the judge errs on this
  run as it did on the labelled one"): the judge's disagreements with people occur at
  fixed rates, P(f=1, Y=0) = 0.10 and P(f=0, Y=1) = 0.04, whatever the run, so its mean
  error E[Y - f] = -0.06 is the same on every run while its pass rate moves.
- **same TPR/TNR** (the assumption broken a little): the judge passes 90% of good
  answers and 20% of bad ones on every run, so its mean error moves with the true rate
  (by 0.03 between true rates 0.5 and 0.6): shown for what the correction does then.

Corrections compared:

- before (until issue 24): PPI++'s λ tuned on the labels and applied to the later run
  (``ppi_mean(tuned=True)``, what ``ragrail run`` did), and the paired difference of two
  later runs each with its tuned λ;
- after: the later run by classic PPI (λ = 1), as ``ragrail.judge.correct`` does for any
  run but the labelled one; the difference by ``ragrail.judge.ppi_change`` with those λ.

Scenarios (judge rate of the labelled run -> baseline run -> later run; n labels, N
answers), among them issue 24's: labels from a run at 0.60 applied to a run at 0.50,
and the run whose judge fell from 90% to 40%. Target: after >= 93% for the total and
the paired difference under the same-error judge.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from ragrail.judge.ppi import ppi_mean  # noqa: E402
from ragrail.judge.ppi_change import ppi_difference  # noqa: E402

FALSE_PASS, FALSE_FAIL = 0.10, 0.04  # same-error judge: P(f=1, Y=0), P(f=0, Y=1)
TPR, FPR = 0.90, 0.20  # same-TPR/TNR judge


@dataclass(frozen=True)
class Scenario:
    name: str
    labelled: float  # the judge's pass rate on the labelled run
    baseline: float  # on the baseline run (a later run, corrected by the same labels)
    now: float  # on the run being checked
    n: int  # labels
    big_n: int  # judged answers per run


SCENARIOS = (
    Scenario("0.60 -> 0.60 -> 0.50, 20 labels", 0.60, 0.60, 0.50, 20, 200),
    Scenario("0.60 -> 0.60 -> 0.50, 100 labels", 0.60, 0.60, 0.50, 100, 1000),
    Scenario("0.60 -> 0.55 -> 0.50, 300 labels", 0.60, 0.55, 0.50, 300, 5000),
    Scenario("0.90 -> 0.90 -> 0.40, 20 labels", 0.90, 0.90, 0.40, 20, 200),
    Scenario("0.70 -> 0.70 -> 0.70, 50 labels", 0.70, 0.70, 0.70, 50, 500),
)


@dataclass(frozen=True)
class Result:
    scenario: Scenario
    judge: str
    trials: int
    total_before: float
    total_after: float
    diff_before: float
    diff_after: float
    bias_before: float  # mean estimate - truth, the later run's total
    bias_after: float
    width_after: float


def truth(judge_rate: float, judge: str) -> float:
    """The true pass rate of a run on which the judge passes ``judge_rate``."""
    if judge == "same error":
        return judge_rate - FALSE_PASS + FALSE_FAIL
    return (judge_rate - FPR) / (TPR - FPR)  # judge_rate = TPR·θ + FPR·(1 - θ)


def pairs(
    rng: np.random.Generator,
    judge_rate: float,
    size: int,
    judge: str,
    cells: tuple[float, float] = (FALSE_PASS, FALSE_FAIL),
):
    """(judge verdicts, human verdicts) of ``size`` answers of a run at ``judge_rate``;
    ``cells``: the same-error judge's P(f=1, Y=0) and P(f=0, Y=1)."""
    import numpy as np

    u = rng.random(size)
    if judge == "same error":
        # cells (f, Y): (1, 0) false pass, (0, 1) false fail, (1, 1) the rest of f = 1
        f = u < judge_rate
        y = np.where(f, u >= cells[0], u >= 1.0 - cells[1])
    else:
        y = u < truth(judge_rate, judge)
        v = rng.random(size)
        f = np.where(y, v < TPR, v < FPR)
    return f.astype(float), y.astype(float)


def paired_runs(rng: np.random.Generator, s: Scenario):
    """The baseline's and the later run's judge verdicts on the same N questions, each at
    its own rate and correlated: a question keeps its draw in both runs 70% of the time
    (one uniform u per question, f = u < rate), so most verdicts carry over."""
    import numpy as np

    u = rng.random(s.big_n)
    u_now = np.where(rng.random(s.big_n) < 0.7, u, rng.random(s.big_n))
    return (u < s.baseline).astype(float), (u_now < s.now).astype(float)


def simulate(s: Scenario, judge: str, trials: int, seed: int = 0) -> Result:
    import numpy as np

    hits = {"tb": 0, "ta": 0, "db": 0, "da": 0}
    err_b = err_a = width = 0.0
    for i in range(trials):
        rng = np.random.default_rng([seed, i])
        f_lab, y_lab = pairs(rng, s.labelled, s.n, judge)
        f_base, f_now = paired_runs(rng, s)
        true_now = truth(s.now, judge)
        true_diff = true_now - truth(s.baseline, judge)
        before = ppi_mean(f_now, f_lab, y_lab, tuned=True)
        after = ppi_mean(f_now, f_lab, y_lab, lam=1.0)
        for key, est in (("tb", before), ("ta", after)):
            if est.low is not None and est.high is not None:
                hits[key] += est.low <= true_now <= est.high
        err_b += before.theta - true_now
        err_a += after.theta - true_now
        if after.low is not None and after.high is not None:
            width += after.high - after.low
        old = ppi_difference(f_now, f_lab, y_lab, f_base, f_lab, y_lab, paired=True)
        new = ppi_difference(
            f_now, f_lab, y_lab, f_base, f_lab, y_lab, paired=True, lam_a=1.0, lam_b=1.0
        )
        for key, d in (("db", old), ("da", new)):
            if d.low is not None and d.high is not None:
                hits[key] += d.low <= true_diff <= d.high
    t = float(trials)
    return Result(
        s,
        judge,
        trials,
        hits["tb"] / t,
        hits["ta"] / t,
        hits["db"] / t,
        hits["da"] / t,
        err_b / t,
        err_a / t,
        width / t,
    )


def labelled_against_later(trials: int, seed: int = 0) -> tuple[float, float]:
    """The labelled run itself (PPI++, its labels a subset of its N answers) against a
    later run (classic PPI), issue 24's 90% -> 40% with 20 labels all passed by people:
    a strict judge (it fails 10% of the answers, all good ones: true rates 1.00 and
    0.50). Coverage of the difference's interval, and how often it leaves out 0."""
    import numpy as np

    cover = excl = 0
    n, big_n, strict = 20, 200, (0.0, 0.10)
    for i in range(trials):
        rng = np.random.default_rng([seed, 10_000 + i])
        f_base, y_base = pairs(rng, 0.90, big_n, "same error", strict)
        f_now, _ = pairs(rng, 0.40, big_n, "same error", strict)
        f_lab, y_lab = f_base[:n], y_base[:n]
        assert np.all(y_lab == 1.0)  # people pass every labelled answer
        base = ppi_mean(f_base, f_lab, y_lab)  # the labelled run: PPI++
        d = ppi_difference(
            f_now, f_lab, y_lab, f_base, f_lab, y_lab, paired=True, lam_a=1.0, lam_b=base.lam
        )
        if d.low is None or d.high is None:
            continue
        cover += d.low <= -0.5 <= d.high  # the judge's shift, the same error on both runs
        excl += d.high < 0
    return cover / trials, excl / trials


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(f"{args.trials} seeded trials per row; 95% intervals; coverage before -> after")
    head = f"{'scenario (labelled -> baseline -> now)':<36} {'judge':<13}"
    print(f"{head} {'total':>15} {'paired diff':>15} {'bias of total':>17} {'width':>6}")
    ok = True
    for judge in ("same error", "same TPR/TNR"):
        for s in SCENARIOS:
            r = simulate(s, judge, args.trials, args.seed)
            print(
                f"{s.name:<36} {judge:<13} {r.total_before:>6.1%} -> {r.total_after:>5.1%} "
                f"{r.diff_before:>6.1%} -> {r.diff_after:>5.1%} "
                f"{r.bias_before:>+7.3f} -> {r.bias_after:>+6.3f} {r.width_after:>6.3f}"
            )
            if judge == "same error":
                ok = ok and r.total_after >= 0.93 and r.diff_after >= 0.93
    cover, excl = labelled_against_later(args.trials, args.seed)
    print(
        f"labelled run (PPI++) 90% -> later run 40%, 20 labels all passed by people: "
        f"difference's coverage {cover:.1%}, interval leaves out 0 in {excl:.1%} "
        "(before: +0.0 [+0.0, +0.0], never)"
    )
    print(
        "targets (same-error judge: total and paired difference >= 93% after): "
        f"{'met' if ok and cover >= 0.93 else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
