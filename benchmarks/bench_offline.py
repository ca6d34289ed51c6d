"""Offline pipeline throughput: chunking, stand-in retrieval and scoring at scale.

A synthetic help center of 20,000 section chunks (2,000 articles x 10
sections) and 2,000 questions, each labelled with its article and a fact
planted in one section. Prints seconds per stage and peak memory.

    python benchmarks/bench_offline.py [--chunks 20000] [--questions 2000]
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

from ragrail.golden import Case, GoldenSet
from ragrail.run import evaluate
from ragrail.system.answerers import StandinAnswerer
from ragrail.system.pipeline import Pipeline, PipelineSettings

WORDS = [f"term{i}" for i in range(5000)]


def build(folder: Path, n_chunks: int, n_questions: int, seed: int = 1) -> GoldenSet:
    rng = random.Random(seed)
    sections = 10
    articles = n_chunks // sections
    facts: dict[str, list[str]] = {}
    for a in range(articles):
        parts = []
        for s in range(sections):
            body = " ".join(rng.choices(WORDS, k=40))
            fact = f"fact{a}x{s}"
            facts.setdefault(f"article{a}", []).append((fact, body))
            parts.append(f"## Section {s}\n\n{body} {fact}.\n")
        (folder / f"article{a}.md").write_text("\n".join(parts))
    cases = []
    for q in range(n_questions):
        name = f"article{rng.randrange(articles)}"
        fact, body = rng.choice(facts[name])
        words = rng.sample(body.split(), 6)
        cases.append(Case(id=f"q{q}", question=" ".join(words), sources=[name], facts=[fact]))
    return GoldenSet(path=folder / "golden.json", cases=cases, lines={})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--questions", type=int, default=2_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        golden = build(folder, args.chunks, args.questions)
        t0 = time.perf_counter()
        pipeline = Pipeline(PipelineSettings(docs=folder, product="Bench"))
        t1 = time.perf_counter()
        result = evaluate("bench", golden, pipeline, StandinAnswerer())
        t2 = time.perf_counter()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"chunks            {len(pipeline.chunks):>10,}")
    print(f"questions         {len(golden.cases):>10,}")
    print(f"load+chunk+index  {t1 - t0:>10.2f} s")
    print(f"retrieve+answer+score {t2 - t1:>6.2f} s")
    print(f"total             {t2 - t0:>10.2f} s   (target < 20 s)")
    print(f"peak memory       {peak_mb:>10.0f} MB  (target < 1024 MB)")
    print(f"hit rate@3        {result.totals.hit_rate:>10.1%}")
    sys.exit(0 if (t2 - t0) < 20 and peak_mb < 1024 else 1)


if __name__ == "__main__":
    main()
