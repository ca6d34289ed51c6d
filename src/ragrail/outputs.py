"""Where a command may write: never over a file the command or the project reads or keeps,
never into the docs folder, never two outputs to one file. Checked before any work, so a bad
path costs nothing.

One function, :func:`guard_outputs`, holds the rule for every command that writes, so a
new flag cannot forget part of it: the project file, golden set, baseline and outputs file;
the state ragrail keeps (run history, reply and embeddings caches, log database, with their
journals); every export a log database has ingested (it may be the only copy of the logs);
the files the command was given to read; and any SQLite database at all.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ragrail.errors import InputError

if TYPE_CHECKING:
    from ragrail.config import Project

STDOUT = "-"
# The state ragrail keeps in .ragrail/: none of it may be replaced by an output. The reply
# and embeddings caches could be rebuilt, but only by paying for every call again.
STATE_FILES = {
    "history.sqlite": "the run history",
    "cache.sqlite": "the reply cache",
    "embeddings.sqlite": "the embeddings cache",
    "logs.sqlite": "the log database",
}
# SQLite keeps a database's unsaved pages beside it: replacing one of these damages the base.
SQLITE_SIBLINGS = ("-wal", "-shm", "-journal")
_SQLITE_MAGIC = b"SQLite format 3\x00"


def real(path: Path) -> Path:
    """The path with every link resolved, as the file system will see it."""
    return Path(os.path.realpath(path))


def project_inputs(
    project: Project, golden: Path | None = None, docs: Path | None = None
) -> dict[Path, str]:
    """The files a project's runs read, by their real path: no output may replace one."""
    cfg = project.config
    found = {
        real(golden or project.golden): "the golden set",
        real(project.baseline): "the baseline",
    }
    if cfg.system.kind == "outputs" and cfg.system.path:
        found[real(project.root / cfg.system.path)] = "the system's outputs file"
    if project.config_path is not None:
        found[real(project.config_path)] = "the project file"
    return found


def _database(path: Path, what: str, found: dict[Path, str]) -> None:
    found.setdefault(real(path), what)
    for suffix in SQLITE_SIBLINGS:
        found.setdefault(real(path.with_name(path.name + suffix)), f"{what}'s journal")


def kept_files(
    project: Project | None,
    state_dir: Path | None = None,
    log_dbs: Iterable[Path] = (),
) -> dict[Path, str]:
    """What the project keeps: its state files (history, caches, log database) and every
    export a log database remembers ingesting, read without writing anything."""
    found: dict[Path, str] = {}
    folder = state_dir or (project.state_dir if project is not None else Path.cwd() / ".ragrail")
    for name, what in STATE_FILES.items():
        _database(folder / name, what, found)
    databases = [folder / "logs.sqlite", *log_dbs]
    for db in databases:
        _database(db, "the log database", found)
        for export in _ingested_exports(db):
            found.setdefault(real(export), "an ingested log export")
    return found


def _ingested_exports(db: Path) -> list[Path]:
    """The exports a log database ingested; nothing when there is no readable one (a
    read-only open: checking a path must never create, migrate or lock a database)."""
    import sqlite3

    if not db.is_file():
        return []
    try:
        con = sqlite3.connect(f"{real(db).as_uri()}?mode=ro", uri=True, timeout=2.0)
    except sqlite3.Error:
        return []
    try:
        rows = con.execute("SELECT path FROM ingested_files").fetchall()
    except sqlite3.Error:
        return []  # not a log database, or an older one: its own command says so
    finally:
        con.close()
    return [Path(r[0]) for r in rows if isinstance(r[0], str)]


def _is_sqlite(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    except OSError:
        return False


def guard_outputs(
    outputs: Sequence[tuple[Path | None, str]],
    project: Project | None = None,
    reads: Sequence[tuple[Path | None, str]] = (),
    *,
    golden: Path | None = None,
    docs: Path | None = None,
    state_dir: Path | None = None,
    log_dbs: Iterable[Path] = (),
    replaces: Iterable[Path] = (),
) -> list[Path | None]:
    """Refuse (InputError, exit 2), before any work, every output that cannot be written or
    would replace something the command or the project reads or keeps.

    ``outputs``: ``(path as given, what)``; None (not asked for) and ``-`` (standard
    output) are passed over, and at most one may be ``-``. ``reads``: the files this command
    was given to read. ``replaces``: files this command is asked to replace (a baseline
    under ``--save-baseline``), let through. Returns each output's path, None for
    standard output or not asked for, in order.
    """
    from ragrail.fileio import check_writable_output

    if sum(1 for path, _ in outputs if path is not None and str(path) == STDOUT) > 1:
        raise InputError("only one output can go to standard output ('-')")
    files: list[Path | None] = []
    targets: list[tuple[Path, Path, str]] = []
    for path, what in outputs:
        if path is None or str(path) == STDOUT:
            files.append(None)
            continue
        targets.append((check_writable_output(path, what, probe=False), path, what))
        files.append(path)
    if not targets:
        return files
    protected = kept_files(project, state_dir, log_dbs)
    if project is not None:
        protected.update(project_inputs(project, golden))
    for given, what in reads:
        if given is not None and str(given) != STDOUT:
            protected[real(given)] = what
    for allowed in replaces:
        protected.pop(real(allowed), None)
    for target, _, _ in targets:
        if target not in protected and _is_sqlite(target):
            protected[target] = "a SQLite database"
    if docs is None and project is not None:
        docs = project.docs
    refuse_clashes(targets, protected, docs)
    for _, path, what in targets:
        check_writable_output(path, what)  # last: a clash names the file, not a folder
    return files


def refuse_clashes(
    targets: Sequence[tuple[Path, Path, str]], inputs: dict[Path, str], docs: Path | None
) -> None:
    """InputError when an output (``(real target, path as given, what)``) would replace an
    input, land in the docs folder as a document, or share its file with another output."""
    from ragrail.system.corpus import DOC_SUFFIXES

    docs_dir = real(docs) if docs is not None else None
    seen: dict[Path, str] = {}
    for target, path, what in targets:
        clash = inputs.get(target)
        if clash is not None:
            raise InputError(
                f"the {what} would overwrite {clash}; nothing was written: write it elsewhere",
                str(path),
            )
        if target.parent == docs_dir and target.suffix.lower() in DOC_SUFFIXES:
            raise InputError(
                f"the {what} would be written into the docs folder, where the next run would "
                "read it as a document; write it elsewhere",
                str(path),
            )
        if target in seen:
            raise InputError(
                f"the {what} and the {seen[target]} are the same file; give each its own path",
                str(path),
            )
        seen[target] = what


def check_run_outputs(
    project: Project,
    outputs: Sequence[tuple[Path | None, str]],
    baseline_path: Path,
    save_baseline: bool,
    golden: Path | None = None,
    docs: Path | None = None,
    reads: Sequence[tuple[Path | None, str]] = (),
) -> None:
    """A run's outputs under :func:`guard_outputs`, with the baseline as the run sees it:
    written only when ``save_baseline`` asks for it, an input otherwise."""
    wanted = list(outputs)
    if save_baseline:
        wanted.append((baseline_path, "baseline"))
        reads = list(reads)
    else:
        reads = [*reads, (baseline_path, "the baseline (use --save-baseline to replace it)")]
    guard_outputs(
        wanted,
        project,
        reads,
        golden=golden,
        docs=docs,
        replaces=[baseline_path] if save_baseline else (),
    )
