"""Comparing a large run with its baseline: 100,000 questions, built in memory.

    python benchmarks/bench_diff.py [--questions 100000]

The mix exercises every path of ``compare``: retrieval that dropped or rose, single
answers that flipped, repeated answers (the noise-aware tests), errors, and questions added
and removed. It is the worst case for the lines a diff holds (about 1.15 per question;
a real run's diff has a few): ``compare`` against a whole saved run and against the
compact baseline ``--baseline`` loads. Target (issue 13): under 2 s at 100,000 (a
linear baseline search per question took 133 s at 20,000).

Wall time counts waiting for a busy CPU, so CPU time is printed beside it, with the
reference loop of ``bench_baseline.py`` to scale the figures by. Peak RSS is the
process's, before the timed compares (the runs built, scipy imported) and after
them: the difference is what ``compare`` itself holds.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_baseline import REPEAT, peak_rss_mb, reference_us, timed

from ragrail.diff import compare
from ragrail.records.results import CaseResult, RunConfig, RunResult, Trace
from ragrail.run import compute_totals
from ragrail.store.baseline import Baseline

TARGET_S = 2.0
# one validated question per shape, copied for each id: validating 200,000 took a minute
_SHAPES: dict[tuple[float, int, int, str | None], CaseResult] = {}


def case(cid: str, recall: float, passes: int, runs: int, error: str | None = None) -> CaseResult:
    """One scored question; an errored one has no scored answer, as scoring leaves it."""
    shape = (recall, passes, runs, error)
    if shape not in _SHAPES:
        _SHAPES[shape] = CaseResult(
            id="shape",
            question="question?",
            sources=["doc"],
            facts=["fact"],
            facts_retrieved=["fact"] if recall else [],
            retrieval_hit=recall > 0,
            retrieval_recall=recall,
            answer_pass=None if error else passes == runs,
            answer_runs=0 if error else runs,
            answer_passes=0 if error else passes,
            problems=[] if error or passes == runs else ['missing "fact"'],
            # the checks each answer faced, as scoring counts them (issue 23)
            checks={}
            if error
            else {
                "behaviour": runs,
                "fact: fact": passes,
                "citation": runs,
                "claims supported": runs,
            },
            trace=Trace(case_id="shape", error=error),
        )
    trace = _SHAPES[shape].trace.model_copy(update={"case_id": cid})
    update = {"id": cid, "question": f"question {cid}?", "trace": trace}
    return _SHAPES[shape].model_copy(update=update)


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
    parser.add_argument("--questions", type=int, default=100_000)
    args = parser.parse_args()
    (run, baseline), build_s, _ = timed(build, args.questions)
    compact = Baseline.from_run(baseline)
    compare(run, baseline)  # warm up: scipy's first import is not the comparison
    built_mb = peak_rss_mb()
    diff, whole_s, whole_cpu = timed(compare, run, baseline, repeat=REPEAT)
    diff, compact_s, compact_cpu = timed(compare, run, compact, repeat=REPEAT)
    print(f"questions        {len(run.cases):>8,} (baseline {len(baseline.cases):,}; "
          f"built in {build_s:.1f} s)")  # fmt: skip
    print(f"reference loop   {reference_us():8.1f} us (about 8 us on an idle, current machine)")
    print(
        f"lines            {len(diff.changes):>8,} ({len(diff.worse):,} WORSE, "
        f"{len(diff.fixed):,} fixed, {len(diff.errors):,} ERROR; "
        f"{len(diff.new_cases):,} new, {len(diff.removed_cases):,} removed)"
    )
    print(f"{'':17}{'wall':>8}   {'CPU':>6}   (median of {REPEAT})")
    print(f"compare, run     {whole_s:8.3f} s {whole_cpu:6.3f} s   (a whole saved run)")
    print(f"compare, compact {compact_s:8.3f} s {compact_cpu:6.3f} s   (target < {TARGET_S:g} s)")
    print(
        f"peak RSS         {peak_rss_mb():8.0f} MB (before the timed compares: {built_mb:.0f} MB)"
    )
    sys.exit(0 if max(whole_s, compact_s) < TARGET_S else 1)


if __name__ == "__main__":
    main()
