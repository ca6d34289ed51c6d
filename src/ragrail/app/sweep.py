"""``ragrail sweep`` in the library: every combination of chunking x retriever x k x
minimum score over the project's golden set, tabulated.

:func:`plan_sweep` reads and checks everything before any work (the backend, the
tables' paths, the grid, the golden set, the answerer), so a bad flag or file costs no
evaluation; :func:`sweep` then runs the grid (:mod:`ragrail.sweep`) and writes the
tables. Nothing here prints.

    plan = plan_sweep(project, SweepRequest(top_k=[1, 3, 5], retrievers=["bm25"]))
    swept = sweep(plan)
    swept.rows[0]  # the best configuration
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ragrail.errors import InputError

if TYPE_CHECKING:
    from ragrail.backends import Backend
    from ragrail.project import Project
    from ragrail.records.case import GoldenSet
    from ragrail.scoring.case import ScoringOptions
    from ragrail.sweep import SweepRow
    from ragrail.system.answerers.base import Answerer
    from ragrail.system.pipeline import PipelineSettings

DEFAULT_TOP_KS = (1, 3, 5)
#: The tables' default paths, under the project's state folder.
DEFAULT_JSON, DEFAULT_CSV = "sweep.json", "sweep.csv"


class GridError(InputError):
    """A value of the grid no configuration can take; ``flag`` names the option that
    gave it (``--retriever``, ``--top-k``, ``--min-score``)."""

    def __init__(self, message: str, flag: str) -> None:
        super().__init__(message)
        self.flag = flag


@dataclass(frozen=True)
class SweepRequest:
    """The grid and the tables asked for (None: the project's setting, or the default)."""

    chunk_words: Sequence[int] | None = None  # chunkings to try; 0 is by section
    top_k: Sequence[int] | None = None  # default: DEFAULT_TOP_KS
    retrievers: Sequence[str] | None = None  # standin, bm25, dense, hybrid; NAME+rerank
    min_scores: Sequence[float] | None = None  # each on its retriever's own scale
    json: Path | None = None  # the table as JSON (default: under the state folder; -: none)
    csv: Path | None = None  # the table as CSV (default: under the state folder; -: none)
    backend: str | None = None  # local or ray (default: [run] backend)
    address: str | None = None  # the Ray cluster to join (default: [run] address)


@dataclass
class SweepPlan:
    """A sweep read and checked; nothing has run or been written."""

    project: Project
    request: SweepRequest
    golden: GoldenSet
    base: PipelineSettings  # what every configuration shares
    chunk_words: list[int]
    top_ks: list[int]
    retrievers: list[str]
    min_scores: list[float]
    skipped: list[tuple[str, float, str]]  # (retriever, min score, why): above its scale
    answerer: Answerer
    options: ScoringOptions
    backend: Backend

    @property
    def configurations(self) -> int:
        """How many configurations the sweep evaluates."""
        pairs = len(self.retrievers) * len(self.min_scores) - len(self.skipped)
        return len(self.chunk_words) * len(self.top_ks) * pairs


@dataclass
class Swept:
    """What a sweep found and wrote."""

    rows: list[SweepRow]  # best first
    written: list[Path] = field(default_factory=list)  # the tables' files, JSON first


def plan_sweep(project: Project, request: SweepRequest) -> SweepPlan:
    """Check a sweep before any work: a missing Ray, a table that cannot be written, a
    project whose system is not the built-in pipeline (InputError), a value of the grid
    no configuration can take (GridError)."""
    from ragrail.golden import load_golden
    from ragrail.outputs import guard_outputs
    from ragrail.settings import Overrides, resolve
    from ragrail.sweep import unusable_thresholds
    from ragrail.system.answerers import build_answerer
    from ragrail.system.hybrid import RERANK_SUFFIX, split_name
    from ragrail.system.retrieval import RETRIEVER_NAMES

    r, cfg = request, project.config
    # the project's settings, as a run resolves them: a missing Ray is exit 2 before any work
    settings = resolve(project, Overrides(backend=r.backend, address=r.address))
    guard_outputs(  # before the sweep, not after it
        [(r.json, "--json table"), (r.csv, "--csv table")],
        project,
        defaults=[
            (project.state_dir / name, f"{flag} table")
            for given, name, flag in ((r.json, DEFAULT_JSON, "--json"), (r.csv, DEFAULT_CSV, "--csv"))
            if given is None
        ],
        stdout=lambda what: True,
    )  # fmt: skip
    if cfg.system.kind != "pipeline":
        raise InputError(
            "sweep varies the built-in pipeline; this project's system is "
            f'[system] kind = "{cfg.system.kind}"'
        )
    names = list(r.retrievers) if r.retrievers is not None else _names(cfg.pipeline.retriever)
    if r.retrievers is None and cfg.pipeline.rerank != "none":
        names = [name + RERANK_SUFFIX for name in names]  # the project's own rerank
    unknown = [name for name in names if split_name(name)[0] not in RETRIEVER_NAMES]
    if unknown:
        raise GridError(
            f"unknown retriever {unknown[0]!r}; choose {', '.join(RETRIEVER_NAMES)}, each "
            f"alone or followed by {RERANK_SUFFIX}",
            "--retriever",
        )
    golden = load_golden(project.golden, project.root)
    words = list(r.chunk_words or [cfg.pipeline.chunk_words])
    ks = list(r.top_k or DEFAULT_TOP_KS)
    if any(k < 1 for k in ks):
        raise GridError("k must be at least 1", "--top-k")
    thresholds = list(r.min_scores or [cfg.pipeline.min_score])
    skipped = unusable_thresholds(names, thresholds)
    if len(skipped) == len(names) * len(thresholds):
        raise GridError(
            f"no retriever can use any of these minimum scores: {skipped[0][2]}", "--min-score"
        )
    answerer = build_answerer(settings.answerer)
    # the base's chunking, retriever and k, and the options' k, are each row's
    return SweepPlan(
        project, r, golden, settings.pipeline, words, ks, names, thresholds, skipped, answerer,
        settings.scoring, settings.backend,
    )  # fmt: skip


def _names(retrievers: str) -> list[str]:
    return [name.strip() for name in retrievers.split(",") if name.strip()]


def sweep(plan: SweepPlan, before_writing: Callable[[list[SweepRow]], None] | None = None) -> Swept:
    """Evaluate every configuration of the plan, best first; then write the tables (the
    paths asked for, else a copy under the state folder). ``before_writing(rows)`` is
    called before any table is written (the CLI prints the table there)."""
    from ragrail.sweep import run_sweep

    p = plan
    rows = run_sweep(
        p.project.config.name, p.golden, p.base, p.chunk_words, p.top_ks, p.retrievers,
        p.answerer, p.options, min_scores=p.min_scores, backend=p.backend,
    )  # fmt: skip
    if before_writing is not None:
        before_writing(rows)
    return Swept(rows, write_tables(plan, rows))


def write_tables(plan: SweepPlan, rows: Sequence[SweepRow]) -> list[Path]:
    """The table as JSON and CSV: to the paths asked for (checked before the sweep: a
    failure now is the disk's), none for ``-``, else a copy under the state folder (one
    warning instead when it cannot be written). The files written, JSON first."""
    from ragrail.fileio import atomic_write_text
    from ragrail.reports.machine import to_stdout
    from ragrail.sweep import to_csv, to_json

    state, r = plan.project.state_dir, plan.request
    written = []
    for given, default, what, text in (
        (r.json, DEFAULT_JSON, "--json table", to_json(rows)),
        (r.csv, DEFAULT_CSV, "--csv table", to_csv(rows)),
    ):
        if given is not None and to_stdout(given):
            continue
        if given is not None:
            atomic_write_text(given, text, what)
            written.append(given)
        elif _write_state_copy(state / default, text, what):
            written.append(state / default)
    return written


def _write_state_copy(path: Path, text: str, what: str) -> bool:
    """Keep a copy of a printed table under the state folder; on a read-only checkout
    (or an unwritable state folder) one warning instead: the table was printed, and
    nobody asked for the file (--json/--csv name a path that must be written)."""
    from ragrail.fileio import atomic_write_text

    try:
        atomic_write_text(path, text, what.replace("--json", "sweep").replace("--csv", "sweep"))
    except InputError as exc:
        flag = what.split()[0]
        warnings.warn(f"{exc}; the table was not saved (pass {flag} PATH)", stacklevel=2)
        return False
    return True
