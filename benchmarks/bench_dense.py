"""Dense retrieval with the embeddings cache: first run against second run, whole process.

Builds a project from the Kitebase example with extra help articles (sentences of
Kitebase's own, recombined; ``--sections`` in all, 216 by default), then times
``ragrail run --retriever dense`` three times: with an empty embeddings cache, again
with the cache it filled, and with ``--no-cache`` (what every run cost before the
cache). Prints each run's wall time, the chunks and questions it encoded, and the
second run's speed-up. Needs the semantic extra (``pip install '.[semantic]'``).

    python benchmarks/bench_dense.py [--sections 216] [--example]

``--example`` times the bundled Kitebase example as it is (13 sections) instead.
"""

from __future__ import annotations

import argparse
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ragrail.project import example_dir

NOTE = re.compile(
    r"(\d+) chunks: (\d+) encoded, (\d+) from the cache; (\d+) questions: (\d+) encoded"
)


def build_project(folder: Path, sections: int) -> Path:
    """The Kitebase example plus generated articles, ``sections`` sections in all."""
    shutil.copytree(example_dir("kitebase"), folder)
    docs = folder / "docs"
    sentences = [
        s.strip()
        for path in sorted(docs.glob("*.md"))
        for s in re.split(r"(?<=[.!?])\s+", path.read_text(encoding="utf-8"))
        if len(s.split()) > 4 and not s.lstrip().startswith("#")
    ]
    own = sum(
        1
        for path in docs.glob("*.md")
        for line in path.read_text().splitlines()
        if line.startswith("#")
    )
    rng = random.Random(20240601)
    extra = max(sections - own, 0)
    for n in range(0, extra, 4):  # four sections an article
        parts = [f"# Workspace guide {n // 4 + 1}"]
        for k in range(min(4, extra - n)):
            if k:
                parts.append(f"## Topic {k + 1} of guide {n // 4 + 1}")
            parts.append(" ".join(rng.choice(sentences) for _ in range(rng.randint(3, 9))))
        (docs / f"guide-{n // 4 + 1:03d}.md").write_text(
            "\n\n".join(parts) + "\n", encoding="utf-8"
        )
    return folder / "ragrail.toml"


def run_once(
    config: Path | None, cwd: Path, extra: tuple[str, ...] = ()
) -> tuple[float, float, str]:
    """One whole ``ragrail run --retriever dense``: wall and CPU seconds (user + system:
    steadier than wall time on a shared machine) and the cache line."""
    where = ("--config", str(config)) if config else ("--example", "kitebase")
    cmd = [sys.executable, "-m", "ragrail", "run", *where, "--retriever", "dense", "--no-history"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([*cmd, *extra], cwd=cwd, capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        sys.exit(f"ragrail run failed ({done.returncode}): {done.stderr.strip()}")
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("dense retriever")), "")
    return wall, cpu, line


def counts(line: str) -> str:
    m = NOTE.search(line)
    if not m:
        return "(no cache line)"
    n, enc, _, q, qenc = m.groups()
    return f"encoded {enc:>4} of {n} chunks, {qenc:>3} of {q} questions"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", type=int, default=216)
    parser.add_argument("--example", action="store_true", help="the bundled Kitebase example")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        config = None if args.example else build_project(root / "project", args.sections)
        runs = [
            ("first run (empty cache)", ()),
            ("second run (warm cache)", ()),
            ("third run (warm cache)", ()),
            ("--no-cache (as before)", ("--no-cache",)),
        ]
        walls, cpus = [], []
        for label, extra in runs:
            wall, cpu, line = run_once(config, root, extra)
            walls.append(wall)
            cpus.append(cpu)
            what = counts(line) if line else "no cache"
            print(f"{label:<26} {wall:7.2f} s wall {cpu:7.2f} s CPU   {what}", flush=True)
        first, warm = walls[0], min(walls[1:3])
        print(
            f"speed-up of a warm run: {first / warm:.1f}x wall, {cpus[0] / min(cpus[1:3]):.1f}x CPU"
        )


if __name__ == "__main__":
    main()
