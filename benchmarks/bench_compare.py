"""Comparing a large run with its baseline: 20,000 questions, built in memory.

    python benchmarks/bench_compare.py [--questions 20000]

The mix exercises every path of ``compare``: retrieval that dropped or rose, single
answers that flipped, repeated answers (the Fisher test), errors, and questions added
and removed. Target: under 1 s (a linear baseline search per question took 133 s).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ragrail.compare import compare
from ragrail.results import CaseResult, RunConfig, RunResult, Trace
from ragrail.run import compute_totals

TARGET_S = 1.0


def case(cid: str, recall: float, passes: int, runs: int, error: str | None = None) -> CaseResult:
    """One scored question; an errored one has no scored answer, as scoring leaves it."""
    trace = Trace(case_id=cid, error=error)
    return CaseResult(
        id=cid,
        question=f"question {cid}?",
        sources=["doc"],
        facts=["fact"],
        facts_retrieved=["fact"] if recall else [],
        retrieval_hit=recall > 0,
        retrieval_recall=recall,
        answer_pass=None if error else passes == runs,
        answer_runs=0 if error else runs,
        answer_passes=0 if error else passes,
        problems=[] if error or passes == runs else ['missing "fact"'],
        trace=trace,
    )


def run_of(cases: list[CaseResult]) -> RunResult:
    config = RunConfig(
        name="bench",
        chunking="chunks by section",
        top_k=3,
        min_score=0.2,
        retriever="standin",
        answerer="standin",
        answerer_label="stand-in",
        n_chunks=1,
        n_cases=len(cases),
    )
    return RunResult(config=config, totals=compute_totals(cases), cases=cases)


def build(n: int, seed: int = 7) -> tuple[RunResult, RunResult]:
    """(run, baseline) of ``n`` questions each; 0.5% of the ids differ (new and removed)."""
    rng = random.Random(seed)
    before, after = [], []
    for i in range(n):
        cid = f"q{i:06d}"
        runs = 5 if i % 100 == 0 else 1  # 1% sampled with --repeats
        old_recall, new_recall = rng.choice((0.0, 0.5, 1.0)), rng.choice((0.0, 0.5, 1.0))
        old_pass, new_pass = rng.randint(0, runs), rng.randint(0, runs)
        error = "HTTP 500" if i % 250 == 1 else None
        old_id = f"gone{i:06d}" if i % 200 == 3 else cid
        before.append(case(old_id, old_recall, old_pass, runs))
        after.append(case(cid, new_recall, new_pass, runs, error))
    return run_of(after), run_of(before)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=20_000)
    args = parser.parse_args()
    t0 = time.perf_counter()
    run, baseline = build(args.questions)
    build_s = time.perf_counter() - t0
    compare(run, baseline)  # warm up: scipy's first import is not the comparison
    t0 = time.perf_counter()
    diff = compare(run, baseline)
    compare_s = time.perf_counter() - t0
    print(f"questions        {len(run.cases):>8,} (baseline {len(baseline.cases):,})")
    print(f"build            {build_s:8.2f} s")
    print(
        f"lines            {len(diff.changes):>8,} ({len(diff.worse):,} WORSE, "
        f"{len(diff.fixed):,} fixed, {len(diff.errors):,} ERROR; "
        f"{len(diff.new_cases):,} new, {len(diff.removed_cases):,} removed)"
    )
    print(f"compare          {compare_s:8.3f} s   (target < {TARGET_S:g} s)")
    sys.exit(0 if compare_s < TARGET_S else 1)


if __name__ == "__main__":
    main()
