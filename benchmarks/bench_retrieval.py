"""Retrieval at scale: the stand-in and BM25 over 100,000 chunks and 5,000 questions.

Prints index time, queries per second and peak memory for each retriever, and
whether each reaches the target of issue 13: at least 5,000 queries/s over
100,000 chunks (a search scores a block of questions as one sparse product
and cuts every row to k at once, ``ragrail.system.topk``).

    python benchmarks/bench_retrieval.py [--chunks 100000] [--questions 5000] [--retriever standin,bm25]
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import resource
import time

from ragrail.system.corpus import Chunk
from ragrail.system.retrieval import make_retriever

WORDS = [f"term{i}" for i in range(20_000)]
TARGET_QPS = 5_000  # issue 13: queries/s for the stand-in and BM25 over 100,000 chunks


def measure(name: str, n_chunks: int, n_questions: int, out) -> None:  # in its own process
    rng = random.Random(7)
    chunks = [
        Chunk(
            id=f"doc{i // 10}#{i % 10 + 1}",
            source=f"doc{i // 10}",
            text=" ".join(rng.choices(WORDS, k=40)),
        )
        for i in range(n_chunks)
    ]
    questions = [
        " ".join(rng.sample(rng.choice(chunks).text.split(), 6)) for _ in range(n_questions)
    ]
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.perf_counter()
    retriever = make_retriever(name, chunks)
    t1 = time.perf_counter()
    hits = retriever.search(questions, top_k=5, min_score=0.0)
    t2 = time.perf_counter()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out.put(
        (
            name,
            t1 - t0,
            t2 - t1,
            len(questions) / (t2 - t1),
            peak,
            base_rss,
            sum(1 for h in hits if h),
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--questions", type=int, default=5_000)
    parser.add_argument("--retriever", default="standin,bm25")
    args = parser.parse_args()
    print(f"{args.chunks:,} chunks of 40 words, {args.questions:,} questions of 6 words, top_k=5")
    ctx = multiprocessing.get_context("spawn")
    reached = []
    for name in args.retriever.split(","):
        queue = ctx.Queue()
        proc = ctx.Process(target=measure, args=(name, args.chunks, args.questions, queue))
        proc.start()
        name, index_s, search_s, qps, peak, base, found = queue.get()
        proc.join()
        print(
            f"  {name:<8} index {index_s:6.2f} s   search {search_s:6.2f} s = {qps:7,.0f} queries/s"
            f"   peak RSS {peak:5,.0f} MB (corpus alone {base:,.0f} MB)   {found:,} with hits"
        )
        reached.append(f"{name} {qps:,.0f} {'>=' if qps >= TARGET_QPS else '<'} {TARGET_QPS:,}")
    print(f"target: >= {TARGET_QPS:,} queries/s each over 100,000 chunks: {';  '.join(reached)}")


if __name__ == "__main__":
    main()
