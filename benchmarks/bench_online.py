"""Online signals' acceptance: interval coverage and A/B rejection rates over seeded logs.

    python benchmarks/bench_online.py [--seeds 100] [--n 10000] [--arm 5000]

(a) Coverage: each seed draws a log of --n conversations with known true rates
    (tests/online/synth.py), computes every signal over the whole log and counts the
    seeds whose 95% interval holds the truth (target: >= 95 of 100 for escalation).
(b) A/B: each seed draws two arms of --arm conversations with escalation 10% vs 13%
    (planted +3 points) and 10% vs 10%; prints how often escalation is significant
    after Holm (target: >= 95% and <= 5%), and how often any signal is.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.online.synth import Truth, synth

from ragrail.online.ab import compare
from ragrail.online.reask import reasked_ids
from ragrail.online.signals import SIGNALS, compute_signals


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--arm", type=int, default=5_000)
    args = parser.parse_args()
    truth = Truth()
    expected = truth.expected()
    hits = dict.fromkeys(SIGNALS, 0)
    found = false_esc = false_any = 0
    start = time.perf_counter()
    for seed in range(args.seeds):
        log = synth({"v": (args.n, truth)}, seed=seed)
        reasked = reasked_ids(log, 30, 0.5)
        [p] = compute_signals(log, reasked, by=None)
        for name, f in p.figures.items():
            inside = f.low is not None and f.high is not None and f.low <= expected[name] <= f.high
            hits[name] += inside
        base = {"A": (args.arm, Truth(escalation=0.10))}
        log = synth({**base, "B": (args.arm, Truth(escalation=0.13))}, seed=10_000 + seed)
        found += compare(log, reasked_ids(log, 30, 0.5), "A", "B").rows[0].significant
        log = synth({**base, "B": (args.arm, Truth(escalation=0.10))}, seed=20_000 + seed)
        null = compare(log, reasked_ids(log, 30, 0.5), "A", "B")
        false_esc += null.rows[0].significant
        false_any += any(r.significant for r in null.rows)
    took = time.perf_counter() - start
    s = args.seeds
    print(f"coverage of the 95% intervals over {s} seeded logs of {args.n:,} conversations:")
    for name in SIGNALS:
        print(f"  {name:<12} {hits[name]:>4}/{s}  (truth {expected[name]:.6g})")
    print(f"A/B, {args.arm:,} per arm, escalation 10% vs 13% (+3 points):")
    print(f"  escalation significant after Holm: {found}/{s}")
    print("A/B, escalation 10% vs 10% (no difference):")
    print(f"  escalation significant after Holm: {false_esc}/{s}")
    print(f"  any of the six signals significant: {false_any}/{s}")
    print(f"{took:.1f} s")


if __name__ == "__main__":
    main()
