"""The production-log commands, as library functions: ``logs ingest``
(:func:`ingest_logs`), ``logs score`` (:func:`flag_logs`), ``sample``
(:func:`draw_sample`) and ``online`` (:func:`online_signals`).

Each takes plain arguments (paths, names, numbers), does the work and returns what it
found; nothing here prints (warnings go through :func:`warnings.warn`). All four find
their project and log database by one rule (:func:`logs_project`, :func:`log_database`),
so they always read and write the same database. Output paths are checked by
:func:`ragrail.outputs.guard_outputs` before any work.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ragrail.errors import InputError

if TYPE_CHECKING:
    from ragrail.online.ab import ABResult
    from ragrail.online.ingest import IngestReport
    from ragrail.online.ingest import Progress as IngestProgress
    from ragrail.online.sample import Drawn
    from ragrail.online.score import ScoreReport
    from ragrail.online.signals import PeriodSignals
    from ragrail.online.store import LogStore
    from ragrail.project import LogsConfig, Project
    from ragrail.reports.online import Flagged

#: ``progress(total_bytes)``: a context manager yielding ingest's per-batch callback
#: ``(bytes read, bytes in all files)``, or None. The CLI passes a progress bar.
IngestBar = Callable[[int], AbstractContextManager["IngestProgress | None"]]


# ---------------------------------------------------------------- which project, which database


def logs_project(config: Path | None = None, example: str | None = None) -> Project:
    """The project whose ``[logs]`` settings and state folder the log commands use: the
    given one, else this folder's ragrail.toml, else every default with the state in this
    folder (logs can be studied before any golden set exists). The same rule for
    ``logs ingest``, ``logs score``, ``online`` and ``sample``, so they find one database."""
    from ragrail.app import default_project, load_project
    from ragrail.project import CONFIG_NAME

    if config is None and example is None and not (Path.cwd() / CONFIG_NAME).is_file():
        return default_project()
    return load_project(config, example)


def log_database(project: Project, db: Path | None) -> Path:
    """``db`` (checked: never a file the project needs), else the project's
    ``.ragrail/logs.sqlite``."""
    from ragrail.online.store import log_path

    if db is None:
        return log_path(project.state_dir)
    from ragrail.outputs import check_log_database

    check_log_database(db, _own(project))
    return db


def open_logs(project: Project, db: Path | None) -> LogStore:
    """The existing log database (never created here: exit 2 when there is none)."""
    from ragrail.online.store import LogStore

    return LogStore(log_database(project, db), create=False)


def check_versions(asked: Sequence[str], known: Sequence[str]) -> None:
    """Exit 2 naming an asked-for version the log does not have, with the ones it has: an
    unknown version would otherwise select nothing and pass for an empty log."""
    from ragrail.text.guard import visible

    for name in asked:
        if name not in known:
            listed = ", ".join(visible(v) for v in known) or "none"
            raise InputError(f"no conversations of version {visible(name)!r} (versions: {listed})")


def _own(project: Project) -> Project | None:
    """The project whose files an output must not replace: None for the defaults."""
    return project if project.config_path is not None else None


def _guard(outputs: list[tuple[Path | None, str]], project: Project, database: Path) -> None:
    from ragrail.outputs import guard_outputs

    guard_outputs(outputs, _own(project), state_dir=project.state_dir, log_dbs=[database])


# ---------------------------------------------------------------- logs ingest


@dataclass
class Ingested:
    """What ``logs ingest`` did: the counts of :class:`~ragrail.online.ingest.IngestReport`,
    and the database the conversations went into."""

    report: IngestReport
    database: Path

    def bad_rows_warning(self) -> str | None:
        """The warning an ingest with bad rows ends with (None: every row was read)."""
        from ragrail.text.guard import visible

        if not self.report.bad:
            return None
        first = visible(str(self.report.first_bad[0]))
        return f"{self.report.bad:,} bad rows skipped (first: {first})"


def ingest_logs(
    files: Sequence[Path],
    config: Path | None = None,
    example: str | None = None,
    db: Path | None = None,
    progress: IngestBar | None = None,
) -> Ingested:
    """Read conversation logs (JSON Lines or CSV) into the log database, redacted. Every
    file is checked before the database is created, so an unusable file writes nothing.
    Bad rows are skipped, counted and warned about once."""
    from ragrail.online.ingest import check_inputs, ingest
    from ragrail.online.store import LogStore

    project = logs_project(config, example)
    cfg = project.config.logs
    database = log_database(project, db)
    check_inputs(files, cfg)  # before the database exists: exit 2 writes nothing
    store = LogStore(database)
    try:
        bar = progress or (lambda _total: nullcontext(None))
        with bar(sum(f.stat().st_size for f in files)) as tick:
            report = ingest(files, cfg, store, tick)
    finally:
        store.close()
    if report.unseen:
        import warnings

        from ragrail.text.guard import visible

        for name, path in report.unseen:  # the project's own text, never the log's
            warnings.warn(
                f"[logs] {name} = {visible(path)!r}: no row read has this field, so it is "
                "left empty (a typo in ragrail.toml?)",
                stacklevel=2,
            )
    return Ingested(report, database)


# ---------------------------------------------------------------- logs score


@dataclass
class LogFlags:
    """What ``logs score`` did: the flag counts per version, and whether a judge checked
    a sample (``report.judge_failed`` counts the conversations it failed on)."""

    report: ScoreReport
    judged: bool


def flag_logs(
    config: Path | None = None,
    db: Path | None = None,
    version: str | None = None,
    judge_sample: int | None = None,
    seed: int = 0,
    backend: str | None = None,
    address: str | None = None,
) -> LogFlags:
    """Flag risky answers in the stored logs (without labels) and store the flags; with
    ``judge_sample``, the configured judge also checks that many random conversations.
    A missing Ray, a stray ``address`` or a missing judge is an input error before the
    database is opened."""
    from ragrail.backends import choose, log_flagger
    from ragrail.flags import Overrides
    from ragrail.online.score import judge_sample as run_judge
    from ragrail.online.score import score_logs
    from ragrail.settings import build_judge, judge_config, scoring_options

    project = logs_project(config)
    flagger = log_flagger(choose(project, Overrides(backend=backend, address=address)))
    judge = None
    if judge_sample:
        cfg = judge_config(project)
        if cfg is None:
            raise InputError(
                "--judge-sample needs a judge: add [judge] provider = ... to the project file"
            )
        judge = build_judge(project, cfg)
    with open_logs(project, db) as store:
        if version is not None:
            check_versions([version], store.versions())
        report = score_logs(store, scoring_options(project), version, flagger=flagger)
        if judge is not None:
            run_judge(store, judge, judge_sample or 0, seed, version, report)
    return LogFlags(report, judge is not None)


# ---------------------------------------------------------------- sample


@dataclass
class Sample:
    """What ``sample`` drew (each with its stratum) and the labelling file it wrote."""

    drawn: list[Drawn]
    output: Path

    def by_stratum(self) -> dict[str, int]:
        """How many were drawn from each stratum, in the order first drawn."""
        counts: dict[str, int] = {}
        for d in self.drawn:
            counts[d.stratum] = counts.get(d.stratum, 0) + 1
        return counts


def draw_sample(
    output: Path,
    count: int,
    seed: int = 0,
    version: str | None = None,
    db: Path | None = None,
    config: Path | None = None,
) -> Sample:
    """Draw a stratified sample of ``count`` logged conversations (of one ``version``)
    into ``output`` (.csv or .jsonl) to label."""
    from ragrail.fileio import atomic_write_text
    from ragrail.online.reask import reasked_ids
    from ragrail.online.sample import SUFFIXES, draw, render

    if count < 1:
        raise InputError(f"invalid value for -n: {count} (a sample has at least 1 conversation)")
    project = logs_project(config)
    _guard([(output, "labelling file")], project, log_database(project, db))
    suffix = output.suffix.lower()
    if suffix not in SUFFIXES:
        raise InputError(
            f"unknown labelling-file format {output.suffix or '(no extension)'!r}; "
            f"use one of {', '.join(SUFFIXES)}",
            str(output),
        )
    logs = project.config.logs
    with open_logs(project, db) as store:
        if version is not None:  # else an empty labelling file, as if the log were empty
            check_versions([version], store.versions())
        reasked = reasked_ids(
            store.conversations(version), logs.reask_minutes, logs.reask_similarity
        )
        drawn = draw(store.conversations(version), count, seed, reasked)
    atomic_write_text(output, render(drawn, suffix), "labelling file")
    return Sample(drawn, output)


# ---------------------------------------------------------------- online


@dataclass
class OnlineReadout:
    """What ``online`` read from the logs: the signals per version and period, the A/B
    readout (when two versions were compared) and the flagged conversations."""

    periods: list[PeriodSignals]
    ab: ABResult | None
    flagged: Flagged
    database: str
    by: str  # week, day or all
    logs: LogsConfig

    def json_data(self) -> dict[str, object]:
        """The ``--json`` document."""
        from ragrail.reports.online import online_json

        return online_json(
            self.periods,
            self.ab,
            self.flagged,
            database=self.database,
            by=self.by,
            reask_minutes=self.logs.reask_minutes,
            reask_similarity=self.logs.reask_similarity,
        )

    def write_page(self, path: Path) -> None:
        """Write the online page (HTML) to ``path``."""
        from ragrail.fileio import atomic_write_text
        from ragrail.reports.online_html import online_html

        page = online_html(self.periods, self.ab, self.flagged, database=self.database, by=self.by)
        atomic_write_text(path, page, "--html")


def online_signals(
    config: Path | None = None,
    example: str | None = None,
    db: Path | None = None,
    by: str | None = None,
    versions: Sequence[str] = (),
    compare: tuple[str, str] | None = None,
    mde: float | None = None,
    json_path: Path | None = None,
    html_path: Path | None = None,
) -> OnlineReadout:
    """The online signals per version and period (``by``: week, day or all; default
    ``[logs] period``), of ``versions`` (default: all), and the A/B readout of
    ``compare`` = (A, B). ``json_path`` and ``html_path`` are only checked here (before
    any work); the readout writes them (:meth:`OnlineReadout.json_data`,
    :meth:`OnlineReadout.write_page`)."""
    from ragrail.online.ab import compare as ab_compare
    from ragrail.online.reask import reasked_ids
    from ragrail.online.signals import compute_signals
    from ragrail.online.store import LogStore
    from ragrail.reports.online import collect_flagged

    project = logs_project(config, example)
    logs = project.config.logs
    period = by or logs.period
    if compare and compare[0] == compare[1]:
        from ragrail.text.guard import visible

        raise InputError(
            f"--compare needs two different versions (got {visible(compare[0])!r} twice)"
        )
    database = log_database(project, db)
    _guard([(json_path, "--json signals"), (html_path, "--html page")], project, database)
    store = LogStore(database, create=False)
    try:
        check_versions([*versions, *(compare or ())], store.versions())
        reasked = reasked_ids(store.conversations(), logs.reask_minutes, logs.reask_similarity)
        periods = compute_signals(
            store.conversations(),
            reasked,
            None if period == "all" else period,  # type: ignore[arg-type]
            versions or None,
        )
        ab = None
        if compare:
            ab = ab_compare(store.conversations(), reasked, compare[0], compare[1], mde)
        flagged = collect_flagged(store.conversations(), versions or None)
        return OnlineReadout(periods, ab, flagged, str(store.path), period, logs)
    finally:
        store.close()
