"""Saving and loading a large compact baseline: 100,000 questions, built in memory.

    python benchmarks/bench_baseline.py [--questions 100000]

Each question carries what a real run holds (three retrieved chunks, a prompt, an
answer, claims, metrics), so the figures show what the compact form leaves out.
``save`` is ``--save-baseline``'s whole write: the compact form, the temporary file
flushed to disk, read back and validated before it replaces the old one. ``load``
parses and validates every field. ``compare`` is the run against the loaded baseline,
as ``ragrail run`` does next. Target (issue 13): save, load and compare each under 2 s
at 100,000 (``bench_diff.py`` has the worst case for compare: a diff of 115,000 lines).

Wall time counts waiting for a busy CPU, so CPU time is printed beside it, and so is a
reference loop (``sum(range(1000))``, about 8 us on an idle, current machine) to scale
the figures by when the machine is shared or slow. Peak RSS is the process's: after
building the run in memory, and at the end.
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ragrail.diff import compare
from ragrail.records.results import (
    ArticleScores,
    CaseResult,
    Claim,
    RetrievedChunk,
    RunConfig,
    RunResult,
    Totals,
    Trace,
)
from ragrail.store.baseline import load_baseline, save_baseline

TARGET_S = 2.0
REPEAT = 3
TEXT = "Reset links expire after 30 minutes; request a new one from the sign-in page. " * 3


def case(i: int, rng: random.Random) -> CaseResult:
    cid = f"q{i:06d}"
    recall = rng.choice((0.0, 1 / 3, 0.5, 2 / 3, 1.0))
    passed = rng.random() < 0.7
    chunks = [
        RetrievedChunk(
            id=f"doc{i % 997}#{r}", source=f"doc{i % 997}", rank=r, score=0.9 / r, text=TEXT
        )
        for r in (1, 2, 3)
    ]
    return CaseResult(
        id=cid,
        question=f"How long does reset link {i} last?",
        sources=[f"doc{i % 997}"],
        facts=["30 minutes", "sign-in page", "new one"],
        facts_retrieved=["30 minutes"] if recall else [],
        retrieval_hit=recall > 0,
        retrieval_recall=recall,
        answer_pass=passed,
        answer_runs=1,
        answer_passes=int(passed),
        problems=[] if passed else ['missing "30 minutes"'],
        context_precision=rng.choice((0.0, 1 / 3, 2 / 3, 1.0)),
        context_average_precision=rng.choice((0.0, 1 / 3, 0.5, 0.583333, 1.0)),
        reciprocal_rank=rng.choice((0.0, 1 / 3, 0.5, 1.0)),
        correctness=recall,
        faithfulness=1.0,
        claims=[Claim(text="Reset links expire after 30 minutes", supported=True)],
        articles=ArticleScores(precision_at_k=1 / 3, recall_at_k=1.0, ndcg_at_k=rng.random()),
        cause=None if passed else "retrieval miss",
        trace=Trace(
            case_id=cid,
            retrieved=chunks,
            prompt="Answer from the excerpts.\n\n" + TEXT * 3,
            prompt_tokens=240,
            answer=TEXT,
            latency_ms=rng.uniform(200, 900),
        ),
    )


def build(n: int, seed: int = 7) -> RunResult:
    rng = random.Random(seed)
    cases = [case(i, rng) for i in range(n)]
    with_facts = [c for c in cases if c.retrieval_recall is not None]
    passed = sum(c.answer_passes for c in cases)
    totals = Totals(
        n_cases=n,
        n_retrieval=len(with_facts),
        hit_rate=sum(1 for c in with_facts if c.retrieval_hit) / n,
        recall=sum(c.retrieval_recall or 0.0 for c in with_facts) / n,
        n_answers=n,
        answers_passed=passed,
        answer_pass_rate=passed / n,
        n_errors=0,
        prompt_tokens_mean=240.0,
    )
    config = RunConfig(
        name="bench", chunking="chunks by section", top_k=3, min_score=0.2, retriever="standin",
        answerer="standin", answerer_label="stand-in", n_chunks=997, n_cases=n,
    )  # fmt: skip
    return RunResult(config=config, totals=totals, cases=cases)


def timed(fn, *args, repeat: int = 1, **kwargs):
    """``(result, wall seconds, CPU seconds)`` of a call, the median of ``repeat`` calls
    (a shared machine's noise: one slow call says little)."""
    walls, cpus = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn(*args, **kwargs)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return out, statistics.median(walls), statistics.median(cpus)


def peak_rss_mb() -> float:
    """The process's peak resident memory so far, in MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def reference_us() -> float:
    """Microseconds of ``sum(range(1000))``, best of 5: how fast this machine runs Python now."""
    import timeit

    return min(timeit.repeat("sum(range(1000))", number=2000, repeat=5)) / 2000 * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=100_000)
    args = parser.parse_args()
    run, build_s, _ = timed(build, args.questions)
    built_mb = peak_rss_mb()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "baseline.json"
        saved, save_s, save_cpu = timed(save_baseline, run, path)
        # over an existing file, the usual case
        _, resave_s, resave_cpu = timed(save_baseline, run, path, repeat=REPEAT)
        loaded, load_s, load_cpu = timed(load_baseline, path, repeat=REPEAT)
        size = path.stat().st_size
        whole = len(run.cases[0].model_dump_json(indent=2))
    assert loaded == saved
    compare(run, loaded)  # warm up: scipy's first import is not the comparison
    diff, compare_s, compare_cpu = timed(compare, run, loaded, repeat=REPEAT)
    n = len(run.cases)
    print(f"questions         {n:>9,}   (built in memory in {build_s:.1f} s)")
    print(f"reference loop    {reference_us():>9.1f} us (about 8 us on an idle, current machine)")
    print(f"file size         {size / 1e6:>9.1f} MB ({size / n:.0f} bytes a question; "
          f"a whole saved case is {whole:,})")  # fmt: skip
    print(f"{'':18}{'wall':>9}   {'CPU':>6}   (median of {REPEAT}, but the first save)")
    for label, wall, cpu in (
        ("save, new file", save_s, save_cpu),
        ("save again", resave_s, resave_cpu),
        ("load", load_s, load_cpu),
        (f"compare ({len(diff.changes)} lines)", compare_s, compare_cpu),
        ("load + compare", load_s + compare_s, load_cpu + compare_cpu),
    ):
        print(f"{label:18}{wall:>9.2f} s {cpu:>6.2f} s")
    print(f"peak RSS          {peak_rss_mb():>9.0f} MB (with the run built: {built_mb:.0f} MB)")
    print(f"target            < {TARGET_S:g} s each for save, load and compare")
    sys.exit(0 if max(save_s, resave_s, load_s, compare_s) < TARGET_S else 1)


if __name__ == "__main__":
    main()
