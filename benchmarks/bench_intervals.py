"""The totals of a run and their 95% intervals: ``ragrail.run.compute_totals``.

    python benchmarks/bench_intervals.py [--sizes 2000 20000 100000] [--projects DIR] [--times 3]

Scores the 2,000-question anchor project of ``benchmarks/anchor_data.py`` once (built, or
reused from ``--projects``), repeats its results to N questions, and prints, per N, the
time of ``compute_totals`` (median of ``--times``; its 12 mean intervals and 2 rate
intervals are most of it), the wall and CPU time of the intervals alone, and the peak
memory ``compute_totals`` allocates (tracemalloc, which sees numpy's arrays). The intervals are bootstrapped up to
5,000 questions and normal above (``ragrail.stats``), so memory stays flat in N.

Target (this 2-core machine): every interval of a 100,000-question run well under 1 s.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

import anchor_data  # noqa: E402

from ragrail import run as ragrail_run  # noqa: E402
from ragrail.app import load_project, prepare  # noqa: E402
from ragrail.diagnose import assign_cause  # noqa: E402
from ragrail.scoring.case import score_case  # noqa: E402
from ragrail.system.adapters import make_system  # noqa: E402

TARGET_S = 1.0  # all intervals at 100,000


def anchor_results(root: Path) -> list[Any]:
    """The scored 2,000 anchor questions (CaseResults)."""
    toml = root / "p2000" / "ragrail.toml"
    if not toml.is_file():
        anchor_data.write_project(2000, toml.parent)
    project = load_project(toml)
    prepared = prepare(project)
    system = make_system(prepared.settings.system, project.root, prepared.system)
    cases = list(prepared.golden.cases)
    results = []
    for case, trace in zip(cases, system.traces(cases), strict=True):
        result = score_case(case, trace, prepared.settings.scoring)
        assign_cause(result, 0.0)
        results.append(result)
    return results


def intervals_only(cases: list[Any]) -> None:
    """What ``compute_totals`` spends on ``stats``: the score columns, their intervals,
    the two rates."""
    with_facts = [c for c in cases if c.retrieval_recall is not None]
    hits = sum(1 for c in with_facts if c.retrieval_hit)
    passed = sum(c.answer_passes for c in cases)
    ragrail_run._stats(cases, hits, len(with_facts), passed, sum(c.answer_runs for c in cases))


def timed(fn: Callable[[], Any], times: int) -> tuple[float, float]:
    """Median wall and CPU seconds: on a shared machine the CPU time shows the cost
    when other processes take turns on the cores."""
    walls, cpus = [], []
    for _ in range(times):
        gc.collect()
        start, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def peak_mb(fn: Callable[[], Any]) -> float:
    gc.collect()
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2_000, 20_000, 100_000])
    parser.add_argument("--projects", type=Path, help="where the anchor project is (or goes)")
    parser.add_argument("--times", type=int, default=3, help="timings per size (median)")
    args = parser.parse_args(argv)
    tmp = None
    if args.projects is None:
        tmp = tempfile.TemporaryDirectory(prefix="ragrail-bench-intervals-")
        args.projects = Path(tmp.name)
    base = anchor_results(args.projects)
    print(f"{'N':>8}  {'totals s':>9}  {'intervals s':>11}  {'(cpu s)':>8}  {'peak MB':>8}  target")
    for n in sorted(args.sizes):
        cases = (base * (n // len(base) + 1))[:n]
        total = timed(lambda c=cases: ragrail_run.compute_totals(c), args.times)[0]
        alone, cpu = timed(lambda c=cases: intervals_only(c), args.times)
        peak = peak_mb(lambda c=cases: ragrail_run.compute_totals(c))
        verdict = ""
        if n == 100_000:
            verdict = f"intervals < {TARGET_S:g} s: {'ok' if alone < TARGET_S else 'MISSED'}"
        print(
            f"{n:>8,}  {total:>9.3f}  {alone:>11.3f}  {cpu:>8.3f}  {peak:>8.1f}  {verdict}",
            flush=True,
        )
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
