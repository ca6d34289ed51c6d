"""Ingest of a production log: lines per second and peak memory (issue 14's targets:
at least 50,000 lines/s, under 300 MB, for 1,000,000 lines).

Writes a synthetic JSON Lines log into a temporary folder (deterministic, seed 14):
each line a conversation with three contexts of about 200 characters drawn from a pool
of 5,000 passages (as a real corpus repeats its chunks), a question and an answer, the
outcome fields, a follow-up turn in one of four, and personal data in one of twenty
(an e-mail address, a phone or a card number in the question). Then runs
``ragrail logs ingest`` in a child process and prints its wall time, lines/s and the
child's peak RSS.

    .venv/bin/python benchmarks/bench_ingest.py              # 1,000,000 lines
    .venv/bin/python benchmarks/bench_ingest.py --lines 100000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SEED = 14
POOL = 5_000
PII = (
    "my email is ana.perez{n}@example.com",
    "call me on +44 20 7946 {n:04d}",
    "card 4111 1111 1111 1111 was charged twice",
    "reach me at (415) 555-{n:04d}",
)


def _words(rng: random.Random, n: int) -> str:
    return " ".join(
        "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(2, 9)))
        for _ in range(n)
    )


def write_log(path: Path, lines: int) -> int:
    """Write ``lines`` conversations as JSON Lines; returns the file's size in bytes."""
    rng = random.Random(SEED)
    pool = [(f"doc-{i // 10}.md#{i % 10}", _words(rng, 34)) for i in range(POOL)]
    questions = [_words(rng, rng.randint(6, 14)) + "?" for _ in range(2_000)]
    answers = [_words(rng, rng.randint(20, 45)) + "." for _ in range(2_000)]
    start = 1_704_067_200  # 2024-01-01
    with path.open("w", encoding="utf-8") as fh:
        for i in range(lines):
            question = questions[rng.randrange(2_000)]
            if rng.random() < 0.05:
                question += " " + rng.choice(PII).format(n=i % 10_000)
            contexts = [
                {"id": cid, "source": cid.split("#")[0], "text": text}
                for cid, text in (pool[rng.randrange(POOL)] for _ in range(3))
            ]
            row = {
                "id": f"conv-{i:08d}",
                "timestamp": start + i * 2,
                "version": "v2" if i % 2 else "v1",
                "user": f"user{rng.randrange(50_000)}@example.com",
                "question": question,
                "answer": answers[rng.randrange(2_000)],
                "contexts": contexts,
                "thumbs": rng.choice(("up", "down", None, None, None)),
                "escalated": rng.random() < 0.08,
                "resolved": rng.random() < 0.7,
                "latency_ms": round(rng.uniform(300, 4000), 1),
                "tokens_in": rng.randint(500, 3000),
                "tokens_out": rng.randint(50, 400),
                "cost": round(rng.uniform(0.001, 0.02), 5),
            }
            if rng.random() < 0.25:
                row["turns"] = [
                    {"question": questions[rng.randrange(2_000)], "timestamp": start + i * 2 + 60}
                ]
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path.stat().st_size


def tree_rss(root: int) -> int:
    """Bytes resident in process ``root`` and all its descendants, from /proc (Linux)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    tree, grew = {root}, True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in tree} - tree
        tree |= more
        grew = bool(more)
    total = 0
    for pid in tree:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


def cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        folder = Path(tmp)
        log = folder / "conversations.jsonl"
        t0 = time.perf_counter()
        size = write_log(log, args.lines)
        print(
            f"wrote {args.lines:,} lines ({size / 1e6:,.0f} MB) in {time.perf_counter() - t0:.1f} s"
        )
        (folder / "ragrail.toml").write_text("", encoding="utf-8")
        db = folder / "logs.sqlite"
        command = [sys.executable, "-m", "ragrail", "logs", "ingest", "--config",
                   str(folder / "ragrail.toml"), "--db", str(db), str(log)]  # fmt: skip
        t0 = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        peak_tree = 0
        while child.poll() is None:  # the ingest and its worker processes, all together
            peak_tree = max(peak_tree, tree_rss(child.pid))
            time.sleep(0.2)
        stdout, stderr = child.communicate()
        wall = time.perf_counter() - t0
        peak_one = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KB on Linux
        if child.returncode != 0:
            sys.exit(f"ingest failed ({child.returncode}): {stderr.strip()}")
        print(stdout.strip())
        print(
            f"ingested {args.lines:,} lines in {wall:.1f} s: {args.lines / wall:,.0f} lines/s "
            f"(target 50,000) with {cpus()} CPUs; peak RSS of all its processes together "
            f"{peak_tree / 1e6:,.0f} MB (target < 300), of the largest one {peak_one:,.0f} MB; "
            f"database {db.stat().st_size / 1e6:,.0f} MB"
        )


if __name__ == "__main__":
    main()
