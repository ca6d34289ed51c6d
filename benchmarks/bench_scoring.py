"""The scoring loop alone: ``score_case`` + ``assign_cause`` for every anchor question.

    python benchmarks/bench_scoring.py [--sizes 2000 20000] [--large] [--projects DIR]
                                       [--src OTHER/src]

Builds (or reuses, in ``--projects``) the anchor outputs projects of
``benchmarks/anchor_data.py``, loads each through the library as ``ragrail run``
does (project, golden set, outputs file), then times only the loop that
``ragrail.run.score_run`` runs over the traces: no loading, no totals or intervals,
no report. ``--large`` adds N = 100,000.

Each timing is one run's loop, as in a fresh process: the options get a new per-run
scoring cache and the module-level memos (normalised texts, slugs, the analyzers'
token memos) are emptied first. Tables a process builds once on first use (the
Unicode word pattern, the digit table, the stop words) are not rebuilt; the time
they took is printed once as "set-up". Wall time (median of ``--repeats``) and the
process's CPU time are printed, since on a busy machine the wall clock also counts
other people's work; the digest of the scored results lets two trees be compared:
``--src /path/to/old/src`` times another checkout of ragrail with this same script.

Targets (this 2-core machine): 2,000 questions in at most 0.12 s, 100,000 in at
most 4 s.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import hashlib
import inspect
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TARGETS_S = {2_000: 0.12, 100_000: 4.0}


def project_toml(n: int, root: Path) -> Path:
    """The anchor project for ``n`` questions under ``root``, built when missing."""
    import anchor_data

    toml = root / f"p{n}" / "ragrail.toml"
    if toml.is_file():
        return toml
    print(f"building the {n:,}-question anchor project in {toml.parent} ...", flush=True)
    return anchor_data.write_project(n, toml.parent)


def load(toml: Path) -> tuple[list[Any], list[Any], Any]:
    """(cases, traces, scoring options) of a project, read as ``ragrail run`` reads them."""
    from ragrail.app import load_project, prepare
    from ragrail.system.adapters import make_system

    project = load_project(toml)
    prepared = prepare(project)
    system = make_system(prepared.settings.system, project.root, prepared.system)
    cases = list(prepared.golden.cases)
    return cases, list(system.traces(cases)), prepared.settings.scoring


def set_up(options: Any) -> float:
    """Seconds to build the tables a process builds once, on first use."""
    from ragrail.scoring import claims
    from ragrail.text import tokens

    start = time.perf_counter()
    tokens._word()
    tokens.ascii_digits("०")
    claims._small_talk(options.language)
    return time.perf_counter() - start


def _empty_memos(language: str) -> None:
    """Forget what earlier timings remembered of the texts they scored."""
    from ragrail.scoring import answers
    from ragrail.text import matching, tokens

    for module, name in ((matching, "normalise"), (matching, "slug"), (answers, "citation_key")):
        clear = getattr(getattr(module, name), "cache_clear", None)
        if clear is not None:
            clear()
    for retriever in ("standin", "bm25"):
        memo = getattr(tokens.analyzer(language, retriever), "_memo", None)
        if memo is not None:
            memo.clear()


def fresh(options: Any) -> Any:
    """The options with an empty per-run scoring cache (where the options carry one)."""
    if any(f.name == "cache" for f in dataclasses.fields(options)):
        return dataclasses.replace(options, cache=type(options.cache)())
    return options


def score_all(cases: list[Any], traces: list[Any], options: Any) -> tuple[float, float, list]:
    """(wall seconds, CPU seconds, results) of one run's scoring loop over every case."""
    from ragrail.diagnose import assign_cause
    from ragrail.scoring.case import score_case

    _empty_memos(options.language)
    opts = fresh(options)
    args: tuple[Any, ...] = (0.0,)
    if hasattr(opts, "cache") and "normalised" in inspect.signature(assign_cause).parameters:
        from ragrail.text.matching import normalise

        args = (0.0, opts.cache.memoised(normalise))  # as score_run should call it
    gc.collect()
    results = []
    cpu, start = time.process_time(), time.perf_counter()
    for case, trace in zip(cases, traces, strict=True):
        result = score_case(case, trace, opts)
        assign_cause(result, *args)
        results.append(result)
    return time.perf_counter() - start, time.process_time() - cpu, results


def digest(results: list[Any]) -> str:
    """A short hash of every scored value (traces left out)."""
    h = hashlib.sha256()
    for r in results:
        h.update(r.model_dump_json(exclude={"trace"}).encode())
    return h.hexdigest()[:12]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2_000, 20_000])
    parser.add_argument("--large", action="store_true", help="also N = 100,000")
    parser.add_argument("--projects", type=Path, help="where anchor projects are (or go)")
    parser.add_argument("--repeats", type=int, default=3, help="timings per size (median)")
    parser.add_argument("--src", type=Path, default=HERE.parent / "src", help="ragrail to time")
    args = parser.parse_args(argv)
    sys.path[:0] = [str(args.src.resolve()), str(HERE)]
    import ragrail

    print(f"ragrail from {Path(ragrail.__file__).parent}")
    sizes = sorted({*args.sizes, *([100_000] if args.large else [])})
    tmp = None
    if args.projects is None:
        tmp = tempfile.TemporaryDirectory(prefix="ragrail-bench-scoring-")
        args.projects = Path(tmp.name)
    header = f"{'N':>8}  {'wall s':>7}  {'min s':>7}  {'CPU s':>7}  {'cases/s':>9}  {'digest':>12}"
    first = True
    for n in sizes:
        cases, traces, options = load(project_toml(n, args.projects))
        if first:
            print(f"set-up (once per process, first use): {set_up(options):.3f} s")
            print(header + "  target")
            first = False
        repeats = 1 if n >= 100_000 else max(1, args.repeats)
        runs = [score_all(cases, traces, options) for _ in range(repeats)]
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        target = TARGETS_S.get(n)
        verdict = (
            "" if target is None else f"<= {target:g} s: {'ok' if wall <= target else 'MISSED'}"
        )
        print(
            f"{n:>8,}  {wall:>7.3f}  {min(r[0] for r in runs):>7.3f}  {cpu:>7.3f}  "
            f"{n / wall:>9,.0f}  {digest(runs[-1][2]):>12}  {verdict}",
            flush=True,
        )
        del cases, traces, runs
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
