"""How often the gate cries wolf, and how often it catches a real regression (issue 24).

    python benchmarks/bench_gate.py [--trials 1000] [--cli-trials 20]

Seeded simulations of systems whose answers vary, each trial a baseline and a run
compared question by question (``ragrail.diff.compare``, the gate ``ragrail run`` uses):

- **false alarms**: the run is the same system as the baseline; the share of trials that
  exit 1 (the gate's promise: at most 5%);
- **power**: ten questions that were always right now pass 10% of the time; the share of
  trials that exit 1 (acceptance: at least 90%).

Beside each figure, the rule before issue 24 ("before"): each question's own one-sided
Fisher test at 0.05 with no correction across questions, a question that always passed
and never passes now, and with one answer each, any pass -> fail.

``--cli-trials``: the acceptance scenario through the real CLI too (tests/data/flaky_app,
a python target, ``ragrail run --repeats 5`` against a baseline at --repeats 5), one
subprocess per trial. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ragrail.diff import compare
from ragrail.records.results import CaseResult, RunConfig, RunResult, Trace
from ragrail.run import compute_totals

ROOT = Path(__file__).resolve().parents[1]
_SHAPES: dict[tuple[int, int], CaseResult] = {}


def case(cid: str, passes: int, runs: int) -> CaseResult:
    """A question with ``passes`` of ``runs`` answers passing (its fact and claims held in
    exactly those, as scoring counts them)."""
    shape = (passes, runs)
    if shape not in _SHAPES:
        _SHAPES[shape] = CaseResult(
            id="shape",
            question="question?",
            sources=["doc"],
            facts=["fact"],
            facts_retrieved=["fact"],
            retrieval_hit=True,
            retrieval_recall=1.0,
            answer_pass=passes == runs,
            answer_runs=runs,
            answer_passes=passes,
            problems=[] if passes == runs else ['missing "fact"'],
            checks={"behaviour": runs, "fact: fact": passes, "claims supported": passes},
            trace=Trace(case_id="shape", answer="answer"),
        )
    return _SHAPES[shape].model_copy(update={"id": cid})


def result(cases: list[CaseResult], repeats: int) -> RunResult:
    config = RunConfig(
        name="sim", chunking="python", top_k=1, min_score=0.0, retriever="python",
        answerer="python", answerer_label="python", model=None, repeats=repeats,
        n_chunks=len(cases), n_cases=len(cases),
    )  # fmt: skip
    return RunResult(config=config, totals=compute_totals(cases), cases=cases)


def draw(rng: random.Random, chances: Sequence[float], repeats: int) -> RunResult:
    cases = []
    for i, p in enumerate(chances):
        passes = sum(rng.random() < p for _ in range(repeats))
        cases.append(case(f"q{i}", passes, repeats))
    return result(cases, repeats)


def old_rule(run: RunResult, base: RunResult) -> bool:
    """The gate before issue 24 (answers only): with one answer each, any pass -> fail;
    with repeats, one-sided Fisher at 0.05 per question, or always -> never."""
    from ragrail.diff.noise import fisher_greater

    old = {c.id: c for c in base.cases}
    for new in run.cases:
        was = old[new.id]
        a, n, b, m = was.answer_passes, was.answer_runs, new.answer_passes, new.answer_runs
        if n == 1 and m == 1:
            if a == 1 and b == 0:
                return True
            continue
        if b * n < a * m and (fisher_greater(a, n, b, m) < 0.05 or (a == n and b == 0)):
            return True
    return False


def rates(
    trials: int,
    seed: int,
    base_chances: Sequence[float],
    run_chances: Callable[[random.Random], Sequence[float]] | Sequence[float],
    base_repeats: int,
    run_repeats: int,
) -> tuple[float, float]:
    """(share of trials exiting 1 now, before)."""
    rng = random.Random(seed)
    now = before = 0
    for _ in range(trials):
        chances = run_chances(rng) if callable(run_chances) else run_chances
        base = draw(rng, base_chances, base_repeats)
        run = draw(rng, chances, run_repeats)
        now += compare(run, base).regressed
        before += old_rule(run, base)
    return now / trials, before / trials


ACCEPTANCE = [1.0] * 150 + [0.0] * 10 + [0.6] * 40
DROPPED = [0.1] * 10 + [1.0] * 140 + [0.0] * 10 + [0.6] * 40


def issue_system(seed: int) -> list[float]:
    """The issue's first measurement: 200 questions, 20% flaky (right 30-90% of the
    time), the rest always right."""
    rng = random.Random(seed)
    return [rng.uniform(0.3, 0.9) if i < 40 else 1.0 for i in range(200)]


def cli_trials(n: int) -> None:
    """The acceptance scenario through ``ragrail run`` (a subprocess per trial)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "app"
        shutil.copytree(ROOT / "tests" / "data" / "flaky_app", folder)
        (folder / "baseline.json").unlink(missing_ok=True)

        def run(*args: str, seed: int, mode: str = "same") -> int:
            env = {**os.environ, "FLAKY_SEED": str(seed), "FLAKY_MODE": mode}
            cmd = [sys.executable, "-m", "ragrail", "run", "--no-history", *args]
            return subprocess.run(cmd, cwd=folder, env=env, capture_output=True).returncode

        assert run("--repeats", "5", "--save-baseline", seed=10_000) == 0
        started = time.perf_counter()
        same = [run("--repeats", "5", seed=s) for s in range(n)]
        worse = [run("--repeats", "5", seed=s, mode="worse") for s in range(n)]
        took = time.perf_counter() - started
    print(
        f"CLI, python target, --repeats 5 vs 5 ({n} trials each, {took / (2 * n):.2f} s per run):"
    )
    print(f"  same system    exit 1 in {same.count(1) / n:6.1%}   (exit codes {sorted(set(same))})")
    print(f"  10 dropped     exit 1 in {worse.count(1) / n:6.1%}   (exit codes {sorted(set(worse))})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--cli-trials", type=int, default=20)
    args = parser.parse_args()
    t = args.trials
    print(f"{'scenario':<58} {'now':>7} {'before':>7}")
    rows = [
        ("acceptance: same system, repeats 5 vs 5", 1, ACCEPTANCE, ACCEPTANCE, 5, 5),
        ("acceptance: 10 always-right drop to 10%, 5 vs 5", 2, ACCEPTANCE, DROPPED, 5, 5),
        ("acceptance: same system, baseline 5, run answers once", 3, ACCEPTANCE, ACCEPTANCE, 5, 1),
        ("acceptance: 10 drop to 10%, baseline 5, run answers once", 4, ACCEPTANCE, DROPPED, 5, 1),
        ("issue: 20% flaky (30-90%), same system, 1 answer each", 5, None, None, 1, 1),
        ("issue: 20% flaky (30-90%), same system, repeats 5", 6, None, None, 5, 5),
        ("issue: 20% flaky (30-90%), same system, repeats 10", 7, None, None, 10, 10),
    ]
    for label, seed, base, run, nb, nr in rows:
        started = time.perf_counter()
        if base is None:
            chances = issue_system(seed)
            now, before = rates(t, seed, chances, chances, nb, nr)
        else:
            now, before = rates(t, seed, base, run, nb, nr)
        took = (time.perf_counter() - started) / t * 1000
        print(f"{label:<58} {now:7.1%} {before:7.1%}   ({took:.1f} ms per trial)")
    print(f"({t} seeded trials per row; 'now' and 'before' judge the same draws)")
    if args.cli_trials:
        print()
        cli_trials(args.cli_trials)


if __name__ == "__main__":
    main()
