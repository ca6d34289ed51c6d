"""Ranking metrics per query vs in a numpy batch: 2,000 queries x 100 ranked docs, graded.

Prints the time of the six measures (P@k, R@k, Success@k, RR@k, AP@k, nDCG@k)
computed query by query with ``ragrail.scoring.ranking`` and over the whole batch
with ``ragrail.scoring.ranking_batch`` (building the batch from the id lists, and
the measures alone), the median of ``--repeats`` runs, and the largest difference
between the two.

    python benchmarks/bench_ranking.py [--queries 2000] [--docs 100] [--k 10] [--repeats 5]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from collections.abc import Callable

from ragrail.scoring import ranking_batch as rb

PER_QUERY = rb.PER_QUERY


def make_queries(n: int, docs: int, seed: int = 7):
    """Each query ranks ``docs`` ids and judges 10 of a wider pool with grades 0 to 3."""
    rng = random.Random(seed)
    pool = [f"doc{i}" for i in range(docs * 2)]
    rankings = [rng.sample(pool, docs) for _ in range(n)]
    judgements = [{d: rng.randint(0, 3) for d in rng.sample(pool, 10)} for _ in range(n)]
    return rankings, judgements


def median_time(run: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=2_000)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rankings, judgements = make_queries(args.queries, args.docs)
    k = args.k

    def per_query() -> dict[str, list[float | None]]:
        pairs = list(zip(rankings, judgements, strict=True))
        return {name: [f(r, j, k) for r, j in pairs] for name, f in PER_QUERY.items()}

    batch = rb.from_rankings(rankings, judgements)
    t_per_query = median_time(per_query, args.repeats)
    t_build = median_time(lambda: rb.from_rankings(rankings, judgements), args.repeats)
    t_measures = median_time(lambda: rb.all_measures(batch, k), args.repeats)

    expected, got = per_query(), rb.all_measures(batch, k)
    worst = max(
        abs(got[name][q] - v) if v is not None else (0.0 if math.isnan(got[name][q]) else math.inf)
        for name, values in expected.items()
        for q, v in enumerate(values)
    )
    print(
        f"{args.queries:,} queries x {args.docs} ranked docs, graded 0-3, six measures at k={k}, "
        f"median of {args.repeats}"
    )
    print(f"  per query (ranking)          {t_per_query * 1000:8.1f} ms")
    print(
        f"  batch (ranking_batch)        {(t_build + t_measures) * 1000:8.1f} ms  "
        f"= build {t_build * 1000:.1f} ms + measures {t_measures * 1000:.1f} ms"
    )
    print(
        f"  per query / batch: {t_per_query / (t_build + t_measures):5.1f}x with the build, "
        f"{t_per_query / t_measures:6.1f}x on a built batch; largest difference {worst:.1e}"
    )


if __name__ == "__main__":
    main()
