"""A lenient judge corrected by human labels: coverage and width of PPI intervals.

    python benchmarks/bench_ppi.py [--trials 200] [--labelled 300] [--unlabelled 5000] [--seed 0]

A binary criterion whose true pass rate is 0.70. The judge passes 95% of the passing
answers (TPR 0.95) and 45% of the failing ones, so its mean is 0.70·0.95 + 0.30·0.45 =
0.80: a planted +10-point bias, from a judge still correlated with the truth. Each
seeded trial draws ``--labelled`` answers with a human label and the judge's verdict and
``--unlabelled`` answers with the judge's verdict only, then prints, over the trials,
how often each 95% interval covers 0.70 and its mean width:

- raw: Wilson's interval of the judge's rate on the unlabelled answers (expected to
  cover almost never: it is centred 10 points off);
- PPI++ and classic PPI: ``ragrail.judge.ppi.ppi_mean`` (expected at about 95%);
- human only: the labels alone (the interval PPI must beat on width).

Targets (issue 16): raw under 10%, PPI++ at least 93%, PPI++ narrower than human only.
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
from ragrail.stats import wilson  # noqa: E402

TRUE_RATE = 0.70
TPR = 0.95
FALSE_PASS = (0.80 - TRUE_RATE * TPR) / (1 - TRUE_RATE)  # 0.45: the judge's mean is 0.80


@dataclass(frozen=True)
class Coverage:
    """Share of trials whose interval held the truth, and mean widths, per interval."""

    trials: int
    raw: float
    ppi_pp: float
    ppi: float
    human: float
    width_raw: float
    width_ppi_pp: float
    width_ppi: float
    width_human: float
    mean_lambda: float
    mean_estimate: float
    mean_raw: float


def draw(rng: np.random.Generator, size: int) -> tuple[list[float], list[float]]:
    """(human truth, judge verdict) for ``size`` answers."""
    truth = rng.random(size) < TRUE_RATE
    u = rng.random(size)
    judge = (truth & (u < TPR)) | (~truth & (u < FALSE_PASS))
    return truth.astype(float).tolist(), judge.astype(float).tolist()


def simulate(trials: int, labelled: int = 300, unlabelled: int = 5000, seed: int = 0) -> Coverage:
    """Run ``trials`` seeded trials (trial i uses seed + i) and tally the intervals."""
    import numpy as np

    hits = {"raw": 0, "pp": 0, "ppi": 0, "human": 0}
    widths = {"raw": 0.0, "pp": 0.0, "ppi": 0.0, "human": 0.0}
    lam = est = raw = 0.0
    for i in range(trials):
        rng = np.random.default_rng(seed + i)
        human, judge_lab = draw(rng, labelled)
        _, judge_all = draw(rng, unlabelled)
        tuned = ppi_mean(judge_all, judge_lab, human)
        classic = ppi_mean(judge_all, judge_lab, human, tuned=False)
        raw_iv = wilson(sum(judge_all), len(judge_all))
        assert raw_iv is not None and tuned.low is not None and tuned.high is not None
        assert classic.low is not None and classic.high is not None and tuned.human_only
        for key, (low, high) in {
            "raw": (raw_iv.low, raw_iv.high),
            "pp": (tuned.low, tuned.high),
            "ppi": (classic.low, classic.high),
            "human": tuned.human_only,
        }.items():
            hits[key] += low <= TRUE_RATE <= high
            widths[key] += high - low
        lam += tuned.lam
        est += tuned.estimate
        raw += tuned.raw
    t = float(trials)
    return Coverage(
        trials,
        hits["raw"] / t,
        hits["pp"] / t,
        hits["ppi"] / t,
        hits["human"] / t,
        widths["raw"] / t,
        widths["pp"] / t,
        widths["ppi"] / t,
        widths["human"] / t,
        lam / t,
        est / t,
        raw / t,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--labelled", type=int, default=300)
    parser.add_argument("--unlabelled", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    c = simulate(args.trials, args.labelled, args.unlabelled, args.seed)
    print(
        f"truth {TRUE_RATE:.2f}, judge TPR {TPR:.2f}, false-pass {FALSE_PASS:.2f} "
        f"(judge mean {TRUE_RATE * TPR + (1 - TRUE_RATE) * FALSE_PASS:.2f}); "
        f"{args.labelled} labelled, {args.unlabelled} unlabelled, {c.trials} trials"
    )
    print(
        f"mean raw judge rate {c.mean_raw:.4f}, mean PPI++ estimate {c.mean_estimate:.4f}, "
        f"mean lambda {c.mean_lambda:.3f}"
    )
    print(f"{'interval':<12} {'coverage':>9} {'mean width':>11}")
    for name, cov, width in [
        ("raw judge", c.raw, c.width_raw),
        ("PPI++", c.ppi_pp, c.width_ppi_pp),
        ("classic PPI", c.ppi, c.width_ppi),
        ("human only", c.human, c.width_human),
    ]:
        print(f"{name:<12} {cov:>9.1%} {width:>11.4f}")
    ok = c.raw < 0.10 and c.ppi_pp >= 0.93 and c.width_ppi_pp < c.width_human
    print(
        f"targets (raw < 10%, PPI++ >= 93%, PPI++ narrower than human only): "
        f"{'met' if ok else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
