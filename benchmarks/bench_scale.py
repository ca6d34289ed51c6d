"""ragrail against the plain-Python floor at 2,000, 20,000 and 100,000 questions.

    python benchmarks/bench_scale.py [--sizes 2000,20000,100000] [--reps 5] [--keep DIR]

For each N it builds the anchor data (benchmarks/anchor_data.py: the shared benchmark's
generator, the first 2,000 questions identical at every N) as a ragrail project scoring
precomputed retrieval, then runs, interleaved (floor, ragrail, floor, ragrail, ...), each
as a whole process:

- the floor: plain Python reading the same two files (golden.jsonl, outputs.jsonl) and
  computing each question's fact recall (a fact counts when it is a substring of a
  retrieved context, lowercased), nothing else;
- ragrail: ``ragrail run --no-history --json results.json`` (every metric, causes,
  intervals, the scorecard and the results file).

Printed per N: wall time and peak RSS (median [min, max] of --reps runs, each process's
own rusage from wait4), the ragrail/floor wall ratio (median of the pairs), and the
targets of issue 13: at most 8x the floor at 2,000, under 10 s and 1 GB at 100,000, and
memory past the floor's growing slower than N.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import anchor_data  # noqa: E402

FLOOR = r"""
import json, sys
folder = sys.argv[1]
facts = {}
with open(folder + "/golden.jsonl", encoding="utf-8") as f:
    for line in f:
        case = json.loads(line)
        facts[case["id"]] = [fact.lower() for fact in case["facts"]]
recall = []
with open(folder + "/outputs.jsonl", encoding="utf-8") as f:
    for line in f:
        row = json.loads(line)
        texts = [c["text"].lower() for c in row["contexts"]]
        wanted = facts[row["id"]]
        recall.append(sum(any(fact in t for t in texts) for fact in wanted) / len(wanted))
print(f"{sum(recall) / len(recall):.5f}")
"""


def timed(cmd: list[str]) -> tuple[float, float, int, str]:
    """Wall seconds, peak RSS in MB (this child's own), exit code and stdout of one run."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    out = proc.stdout.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss / 1024, proc.returncode, out


def summary(values: list[float], fmt: str = "{:.3f}") -> str:
    return (
        f"{fmt.format(statistics.median(values))} "
        f"[{fmt.format(min(values))}, {fmt.format(max(values))}]"
    )


def measure(n: int, folder: Path, reps: int) -> dict[str, float]:
    toml = anchor_data.write_project(n, folder)
    floor_cmd = [sys.executable, "-c", FLOOR, str(folder)]
    ragrail_cmd = [
        sys.executable, "-m", "ragrail", "run", "--config", str(toml), "--no-history",
        "--json", str(folder / "results.json"),
    ]
    timed(floor_cmd)  # warm the page cache for both
    floors, runs = [], []
    for _ in range(reps):
        floors.append(timed(floor_cmd))
        runs.append(timed(ragrail_cmd))
    codes = {r[2] for r in runs}
    ratios = [r[0] / f[0] for f, r in zip(floors, runs, strict=True)]
    size = sum(p.stat().st_size for p in (folder / "golden.jsonl", folder / "outputs.jsonl"))
    print(f"N = {n:,}  (input {size / 1e6:.0f} MB; floor recall {floors[0][3].strip()}; "
          f"ragrail exit {sorted(codes)})")
    print(f"  floor    wall s {summary([f[0] for f in floors])}   "
          f"peak MB {summary([f[1] for f in floors], '{:.0f}')}")
    print(f"  ragrail  wall s {summary([r[0] for r in runs])}   "
          f"peak MB {summary([r[1] for r in runs], '{:.0f}')}")
    print(f"  ratio ragrail/floor {summary(ratios, '{:.1f}')}x")
    return {
        "n": n,
        "wall": statistics.median(r[0] for r in runs),
        "rss": statistics.median(r[1] for r in runs),
        "floor_rss": statistics.median(f[1] for f in floors),
        "ratio": statistics.median(ratios),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,20000,100000")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="build the projects here and keep them")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        results = [measure(n, root / f"anchor-{n}", args.reps) for n in sizes]
    print("\ntargets (issue 13):")
    for r in results:
        if r["n"] == 2000:
            print(f"  2,000: ratio {r['ratio']:.1f}x the floor (target <= 8x): "
                  f"{'met' if r['ratio'] <= 8 else 'NOT met'}")
        if r["n"] == 100_000:
            ok = r["wall"] < 10 and r["rss"] < 1024
            print(f"  100,000: {r['wall']:.1f} s and {r['rss']:.0f} MB "
                  f"(target < 10 s and < 1 GB): {'met' if ok else 'NOT met'}")
    if len(results) > 1:
        first, last = results[0], results[-1]
        grew = (last["rss"] - last["floor_rss"]) / max(first["rss"] - first["floor_rss"], 1)
        print(f"  memory past the floor's: x{grew:.1f} for x{last['n'] / first['n']:.0f} "
              f"questions ({'sublinear' if grew < last['n'] / first['n'] else 'NOT sublinear'})")


if __name__ == "__main__":
    main()
