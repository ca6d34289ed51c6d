"""The local backend against Ray with 2 workers, on this machine.

    python benchmarks/bench_backends.py [--sizes 100000] [--sweep-questions 1000] [--usd-per-hour 0.10]

For each size N (default 100,000), two workloads, each run as a whole process
(``ragrail run`` / ``ragrail sweep``), first with the local backend, then with
``--backend ray`` (a Ray instance started by the run with this machine's CPUs: 2 workers
here):

1. N precomputed questions: the anchor data (benchmarks/anchor_data.py) as an outputs
   project; the driver reads the outputs file, the workers score slices of it.
2. A sweep of 18 configurations (retriever standin, bm25 x k 1, 3, 5 x min score 0, 0.1,
   0.2) over a corpus of N chunks (N/10 articles of 10 sections of 40-60 pseudo-words,
   the anchor vocabulary) with ``--sweep-questions`` questions; with Ray, each retriever's
   index is one task.

Printed for each: wall time, cases a second (a case: one question scored in one
configuration), peak memory (the whole process tree, sampled from /proc every 0.1 s: the
driver, and for Ray its GCS, raylet, object store and workers), and the projected wall
time and machine cost of 1,000,000 cases at ``--usd-per-hour`` (the machine's price;
0.10 is about a 2-vCPU cloud VM; model calls are not part of it). The fixed cost of
starting Ray is measured on its own with the 12-question Kitebase example.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import anchor_data  # noqa: E402

SWEEP = ["--retriever", "standin,bm25", "--top-k", "1,3,5", "--min-score", "0,0.1,0.2"]
CONFIGS = 18
MILLION = 1_000_000


def tree_rss_mb(root: int) -> float:
    """Resident memory of ``root`` and all its descendants, in MB (from /proc)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid, ppid = int(entry), int(fields[1])
        children.setdefault(ppid, []).append(pid)
        rss[pid] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(children.get(pid, []))
    return total / 1e6


def measured(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, peak MB of the process tree) of one command, which must exit 0."""
    env = {**os.environ, "NO_COLOR": "1", "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("RAY_ADDRESS", None)
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    peak = [0.0]

    def sample() -> None:
        while proc.poll() is None:
            peak[0] = max(peak[0], tree_rss_mb(proc.pid))
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - start
    sampler.join()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {err.decode()[-2000:]}")
    return wall, peak[0]


def write_corpus(n_chunks: int, n_questions: int, out: Path) -> None:
    """A pipeline project: n_chunks sections in n_chunks/10 articles, and questions whose
    facts are word runs of one section each."""
    rng = random.Random(anchor_data.SEED)
    vocab = anchor_data._vocabulary(rng)
    docs = out / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    sections: list[list[str]] = []
    per = anchor_data.PER_ARTICLE
    for a in range(max(1, n_chunks // per)):
        parts = [f"# Article {a}\n"]
        for s in range(per):
            words = [vocab[rng.randrange(len(vocab))] for _ in range(rng.randint(40, 60))]
            sections.append(words)
            parts.append(f"## Part {s}\n\n{' '.join(words)}\n")
        (docs / f"a{a}.md").write_text("\n".join(parts), encoding="utf-8")
    with open(out / "golden.jsonl", "w", encoding="utf-8") as golden:
        for q in range(n_questions):
            index = rng.randrange(len(sections))
            words = sections[index]
            start = rng.randrange(len(words) - 5)
            fact = " ".join(words[start : start + 4])
            case = {"id": f"q{q}", "question": f"what about {fact}?",
                    "sources": [f"a{index // per}"], "facts": [fact]}  # fmt: skip
            golden.write(json.dumps(case) + "\n")
    (out / "ragrail.toml").write_text(
        'name = "sweep"\ndocs = "docs"\ngolden = "golden.jsonl"\n', encoding="utf-8"
    )


def report(label: str, cases: int, wall: float, peak: float, usd_per_hour: float) -> None:
    rate = cases / wall
    hours = MILLION / rate / 3600
    print(
        f"  {label:<22} {wall:8.1f} s  {rate:9,.0f} cases/s  peak {peak:7,.0f} MB  "
        f"1M cases: {hours * 60:7.1f} min, ${hours * usd_per_hour:.4f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100000", help="comma-separated N (questions, chunks)")
    parser.add_argument("--sweep-questions", type=int, default=1000)
    parser.add_argument("--usd-per-hour", type=float, default=0.10)
    parser.add_argument("--skip", default="", help="comma-separated: questions, sweep")
    args = parser.parse_args()
    ragrail = [sys.executable, "-m", "ragrail"]
    backends = (("local", []), ("ray (2 workers)", ["--backend", "ray"]))
    skip = set(filter(None, args.skip.split(",")))
    print(f"{os.cpu_count()} CPUs; costs at ${args.usd_per_hour:.2f} an hour of this machine")
    with tempfile.TemporaryDirectory(prefix="rg-bench-") as tmp:
        kb = Path(tmp) / "kb"
        subprocess.run([*ragrail, "example", "kitebase", str(kb)], check=True, capture_output=True)
        wall, peak = measured([*ragrail, "run", "--no-history", "--backend", "ray"], kb)
        print(f"Ray's fixed cost (start, connect, 12 questions, stop): {wall:.1f} s, "
              f"peak {peak:,.0f} MB")  # fmt: skip
        for n in (int(s) for s in args.sizes.split(",")):
            if "questions" not in skip:
                folder = Path(tmp) / f"q{n}"
                anchor_data.write_project(n, folder)
                print(f"\n{n:,} precomputed questions (ragrail run, outputs project):")
                for label, extra in backends:
                    cmd = [*ragrail, "run", "--no-history", "--json", "r.json", *extra]
                    report(label, n, *measured(cmd, folder), args.usd_per_hour)
            if "sweep" not in skip:
                folder = Path(tmp) / f"s{n}"
                write_corpus(n, args.sweep_questions, folder)
                cases = CONFIGS * args.sweep_questions
                print(f"\nsweep of {CONFIGS} configurations over {n:,} chunks x "
                      f"{args.sweep_questions:,} questions ({cases:,} cases):")  # fmt: skip
                for label, extra in backends:
                    cmd = [*ragrail, "sweep", *SWEEP, "--json", "s.json", *extra]
                    report(label, cases, *measured(cmd, folder), args.usd_per_hour)


if __name__ == "__main__":
    main()
