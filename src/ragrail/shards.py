"""Shards: one golden set evaluated as ``n`` slices (a CI matrix), merged into one run.

A case belongs to shard ``int(sha256(case id as UTF-8).hexdigest()[:16], 16) % n``: the
slice depends on the case's id alone, so adding a case moves no other case, and every
machine agrees without sharing anything. ``ragrail run --shard i/n`` evaluates slice ``i``
and writes its results marked with a :class:`ShardInfo` (the top-level ``"shard"`` field
of an otherwise ordinary results file); it compares nothing, saves no baseline and records
no history: a shard alone is not a verdict. :func:`merge` checks that the shards are one
complete run (every ``i`` of ``n`` once, the same golden set, the same configuration) of
the golden set the project has now (:mod:`ragrail.shard_golden`), puts the
questions back in golden-set order and recomputes the totals with the code an
unsharded run uses, so the merged run is the unsharded one apart from its timing
(``created_at``, each trace's ``latency_ms``). :func:`prepare_merge` then gives the
application layer what it needs to compare, record and decide, as after ``app.run``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ragrail.errors import InputError
from ragrail.shard_golden import ShardInfo, ShardRun, golden_fingerprint, shard_key, shard_of

if TYPE_CHECKING:
    from ragrail.jobs import Prepared
    from ragrail.project import Project
    from ragrail.records.case import GoldenSet
    from ragrail.records.results import RunResult, Usage
    from ragrail.scoring.case import ScoringOptions
    from ragrail.settings import Overrides
    from ragrail.store.baseline import Baseline

_SPEC = re.compile(r"(\d{1,9})/(\d{1,9})", re.ASCII)
# RunConfig fields an evaluation of the user's own system derives from its traces (the
# most chunks a question got, the distinct chunks seen): a shard sees only its own
_DERIVED = ("top_k", "n_chunks")


@dataclass(frozen=True)
class Shard:
    """Slice ``index`` of ``count`` (``--shard index/count``)."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """``"i/n"`` as a :class:`Shard`; anything else (n < 1, i >= n) is an InputError."""
    found = _SPEC.fullmatch(text.strip())
    if found is None:
        raise InputError(f"{text!r} is not I/N, such as 0/3 (shard I of N, counting from 0)")
    index, count = int(found[1]), int(found[2])
    if count < 1 or index >= count:
        raise InputError(f"{text!r}: N must be at least 1 and I from 0 to N-1")
    return Shard(index, count)


def settings_fingerprint(options: ScoringOptions) -> str:
    """SHA-256 of the scoring options a run's config does not show (checks, phrases)."""
    values = {
        "k": options.k,
        "checks": [_plain(c) for c in options.checks],
        "require_faithful": options.require_faithful,
        "abstain": list(options.abstain_phrases),
        "refuse": list(options.refuse_phrases),
        "escalate": list(options.escalate_phrases),
        "language": options.language,
    }
    return hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()


def models_fingerprint(prepared: Prepared) -> str:
    """SHA-256 of what changes a model's replies beyond the run's config: the answerer's
    base URL and call parameters (max_tokens, temperature), and the judge's settings and
    prompts. Concurrency, timeouts, retries and rate limits change no reply: left out."""
    spec, judge = prepared.settings.answerer, prepared.settings.judge
    values: dict[str, Any] = {
        "answerer": [spec.name, spec.model, spec.base_url, spec.calls.params()],
        "judge": None,
    }
    if judge is not None:
        from ragrail.judge.config import Prompts

        root = prepared.project.root
        folder = root / judge.prompts_dir if judge.prompts_dir else None
        prompts = Prompts.load(folder)
        values["judge"] = {
            **judge.model_dump(
                mode="json", exclude={"concurrency", "timeout", "max_retries", "rpm", "tpm", "batch"}
            ),
            "prompts": [prompts.claims, prompts.rubric],
        }
    return hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()


def _plain(check: Any) -> Any:
    dump = getattr(check, "model_dump", None)
    return dump(mode="json") if dump is not None else str(check)


# ---------------------------------------------------------------- a shard's run


def slice_prepared(prepared: Prepared, shard: Shard) -> ShardInfo:
    """Narrow a prepared evaluation to ``shard``'s questions, in golden-set order, and turn
    off its history (a shard records nothing); the info its results will carry."""
    from ragrail.shard_golden import case_digest

    golden = prepared.golden
    positions = [
        i
        for i, c in enumerate(golden.cases)
        if shard_of(shard_key(c), shard.count) == shard.index
    ]
    info = ShardInfo(
        index=shard.index,
        count=shard.count,
        n_cases=len(golden.cases),
        golden=golden_fingerprint(c.id for c in golden.cases),
        settings=settings_fingerprint(prepared.settings.scoring),
        models=models_fingerprint(prepared),
        own_system=prepared.system is not None or prepared.project.config.system.kind != "pipeline",
        positions=positions,
        digests=[case_digest(golden.cases[i]) for i in positions],
    )
    prepared.golden = _subset(golden, positions)
    prepared.history = None
    return info


def _subset(golden: GoldenSet, positions: Sequence[int]) -> GoldenSet:
    cases = [golden.cases[i] for i in positions]
    ids = {c.id for c in cases}
    lines = {k: v for k, v in golden.lines.items() if k in ids}
    return replace(golden, cases=cases, lines=lines)


def shard_pieces(result: RunResult, info: ShardInfo) -> Iterator[bytes]:
    """The shard's results file: the run's JSON (:meth:`RunResult.json_pieces`) with
    ``"shard"`` as its first field."""
    head = info.model_dump_json(indent=2).replace("\n", "\n  ")
    pieces = result.json_pieces()
    first = next(pieces)  # always opens with "{\n"
    yield b'{\n  "shard": ' + head.encode() + b",\n" + first[2:]
    yield from pieces


def save_shard(result: RunResult, info: ShardInfo, path: Path) -> None:
    """Write the shard's results atomically, read back with :func:`load_shard` first."""
    from ragrail.fileio import atomic_write_text
    from ragrail.records.results import READ_BACK_UP_TO

    def read_back(written: Path) -> None:
        from ragrail.errors import SystemFailure

        try:
            load_shard(written, shown=path)
        except InputError as exc:
            raise SystemFailure(
                f"{path}: not saved: the shard's results do not read back ({exc.message}); "
                "the old file is unchanged"
            ) from None

    check = read_back if len(result.cases) <= READ_BACK_UP_TO else None
    atomic_write_text(path, shard_pieces(result, info), "--json shard results", validate=check)


def load_shard(path: Path, shown: Path | None = None) -> ShardRun:
    """A shard's results file, checked on its own: a run with a valid ``"shard"`` field
    whose every case belongs to that shard. Each problem is an InputError naming the file."""
    from ragrail.jsonio import load_json
    from ragrail.records.results import parse_run

    where = str(shown or path)
    data = load_json(path, "shard results")
    if not isinstance(data, dict) or "shard" not in data:
        raise InputError(
            "is not a shard's results (no 'shard' field): write them with "
            "`ragrail run --shard I/N --json PATH`",
            where,
        )
    try:
        info = ShardInfo.model_validate(data.pop("shard"))
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in ("shard", *err["loc"]))
        raise InputError(f"field {field!r}: {err['msg']}", where) from None
    run = parse_run(data, where, "shard results")
    _check_own(info, run, where)
    return ShardRun(shown or path, info, run)


def _check_own(info: ShardInfo, run: RunResult, where: str) -> None:
    if info.index >= info.count:
        raise InputError(f"is shard {info.index}/{info.count}: the index must be below N", where)
    if len(info.positions) != len(run.cases):
        raise InputError(
            f"has {len(run.cases)} cases but {len(info.positions)} positions in 'shard'", where
        )
    if info.digests and len(info.digests) != len(info.positions):
        raise InputError(
            f"has {len(info.positions)} positions but {len(info.digests)} digests in 'shard'",
            where,
        )
    for position, case in zip(info.positions, run.cases, strict=True):
        if shard_of(shard_key(case), info.count) != info.index:
            raise InputError(
                f"case {case.id!r} belongs to shard {shard_of(shard_key(case), info.count)}/"
                f"{info.count}, not {info.index}/{info.count}: a hand-edited file?",
                where,
            )
        if not 0 <= position < info.n_cases:
            raise InputError(f"case {case.id!r} has position {position} out of range", where)


# ---------------------------------------------------------------- merging


def merge(paths: Sequence[Path], golden: GoldenSet) -> RunResult:
    """Read every shard, check they make one complete run of ``golden`` (the project's
    golden set now), and combine them (see the module docstring). An incomplete or mixed
    set, or a golden set changed since the shards ran, is an InputError naming the file."""
    shards = [load_shard(p) for p in paths]
    if not shards:
        raise InputError("give the results of every shard to merge")
    first = shards[0]
    from ragrail._version import __version__

    if first.run.ragrail_version != __version__:
        # the merged run says which ragrail scored it: the one that ran the shards
        raise InputError(
            f"was written by ragrail {first.run.ragrail_version}, and this is {__version__}: "
            "merge with the ragrail that ran the shards",
            str(first.path),
        )
    seen: dict[int, ShardRun] = {}
    for shard in shards:
        _check_same(first, shard)
        if shard.info.index in seen:
            other = seen[shard.info.index].path
            raise InputError(
                f"is shard {shard.info.index}/{shard.info.count} again (so is {other})",
                str(shard.path),
            )
        seen[shard.info.index] = shard
    count = first.info.count
    missing = [f"{i}/{count}" for i in range(count) if i not in seen]
    if missing:
        raise InputError(
            f"shard {', '.join(missing)} missing: merge needs the results of every shard "
            f"(0/{count} to {count - 1}/{count})"
        )
    from ragrail.shard_golden import check_golden

    check_golden(shards, golden)
    return _combine(shards)


def _check_same(first: ShardRun, shard: ShardRun) -> None:
    """The same n, golden set, ragrail and configuration as the first shard."""
    a, b, where = first.info, shard.info, str(shard.path)
    if b.count != a.count:
        raise InputError(
            f"is shard {b.index}/{b.count} but {first.path} is {a.index}/{a.count}: "
            "every shard must split the golden set the same way",
            where,
        )
    if (b.golden, b.n_cases) != (a.golden, a.n_cases):
        raise InputError(
            f"ran another golden set ({b.n_cases} questions) than {first.path} "
            f"({a.n_cases} questions, or the same number with other ids): run every shard "
            "on the same commit",
            where,
        )
    skip = {"n_cases", *(_DERIVED if a.own_system else ())}
    ca = first.run.config.model_dump(exclude=skip)
    cb = shard.run.config.model_dump(exclude=skip)
    pairs = {
        **{f"config.{k}": (ca[k], cb.get(k)) for k in ca},
        "ragrail_version": (first.run.ragrail_version, shard.run.ragrail_version),
        "judge": (first.run.judge, shard.run.judge),
        "scoring settings": (a.settings, b.settings),
        "model settings (answerer or judge)": (a.models, b.models),
        "system": (a.own_system, b.own_system),
    }
    for name, (va, vb) in pairs.items():
        if va != vb:
            raise InputError(
                f"ran with {name} {vb!r} but {first.path} with {va!r}: every shard must run "
                "the same configuration",
                where,
            )


def _combine(shards: Sequence[ShardRun]) -> RunResult:
    from ragrail.records.results import RunResult
    from ragrail.run import compute_totals

    first = shards[0]
    placed = sorted(
        (pos, case) for s in shards for pos, case in zip(s.info.positions, s.run.cases, strict=True)
    )
    cases = [case for _, case in placed]  # check_golden made them the golden set's
    update: dict[str, Any] = {"n_cases": len(cases)}
    if first.info.own_system:  # as ragrail.run.evaluate_system derives them from the traces
        top_k = max((len(c.trace.retrieved) for c in cases), default=1) or 1
        chunks = {chunk.id for c in cases for chunk in c.trace.retrieved}
        update |= {"top_k": top_k, "n_chunks": len(chunks)}
    run = RunResult(
        ragrail_version=first.run.ragrail_version,
        config=first.run.config.model_copy(update=update),
        totals=compute_totals(cases),
        usage=_sum_usage([s.run.usage for s in shards]),
        judge=first.run.judge,
        judge_usage=_sum_usage([s.run.judge_usage for s in shards]),
        cases=cases,
    )
    if run.judge is not None:
        from ragrail.judge.core import judge_totals
        from ragrail.judge.correct import merge_corrections

        run.judge_stats = judge_totals(run)
        run.judge_corrected = merge_corrections(run, [s.run for s in shards])
    return run


def _sum_usage(usages: Sequence[Usage | None]) -> Usage | None:
    """The shards' call totals added up; an unknown count or cost stays unknown (None)."""
    from ragrail.records.results import Usage

    known = [u for u in usages if u is not None]
    if not known:
        return None
    total: dict[str, Any] = {}
    for name in Usage.model_fields:
        values = [getattr(u, name) for u in known]
        total[name] = None if any(v is None for v in values) else sum(values)
    return Usage(**total)


# ---------------------------------------------------------------- after the merge


def _golden(project: Project, overrides: Overrides) -> GoldenSet:
    """The golden set the shards must have run: --golden, else the project's, as now."""
    from ragrail.golden import load_golden

    return load_golden(Path(overrides.golden or project.golden), project.root)


@dataclass
class Merged:
    """A merged run and what comparing and recording it need (as ``app.Prepared``)."""

    result: RunResult
    baseline_path: Path
    baseline: Baseline | None
    history: Path | None


def prepare_merge(
    project: Project,
    overrides: Overrides,
    paths: Sequence[Path],
    outputs: Sequence[tuple[Path | None, str]] = (),
) -> Merged:
    """Merge the shards' results and read the project's baseline; ``outputs`` are refused
    here, before anything is written, when they cannot be written, would replace an input
    or one of the shards' results."""
    from ragrail.outputs import check_run_outputs
    from ragrail.settings import history_path
    from ragrail.store.baseline import load_baseline

    baseline_path = overrides.baseline or project.baseline
    shards = [(p, "the shard results") for p in paths]
    check_run_outputs(
        project, outputs, baseline_path, False, overrides.golden, overrides.docs, shards
    )
    result = merge(paths, _golden(project, overrides))
    baseline = load_baseline(baseline_path) if baseline_path.exists() else None
    history = None if overrides.no_history else history_path(project)
    return Merged(result, baseline_path, baseline, history)
