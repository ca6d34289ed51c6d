"""Where a command may write: never over a file the command or the project reads or keeps,
never into the docs folder, never two outputs to one file. Checked before any work, so a bad
path costs nothing.

One function, :func:`guard_outputs`, holds the rule for every command that writes, so a
new flag cannot forget part of it: the project file, golden set, baseline and outputs file
(of the project named and of the one in the current folder, overrides or not); the state
ragrail keeps (run history, reply and embeddings caches, log database, with their journals);
every export a log database has ingested (it may be the only copy of the logs); the files
the command was given to read; and any SQLite database or journal at all.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ragrail.errors import InputError

if TYPE_CHECKING:
    from ragrail.project import Project

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
    """The files a project's runs read, by their real path: no output may replace one. An
    overriding ``golden`` set is protected beside the project's own, never instead of it."""
    cfg = project.config
    found = {real(project.golden): "the golden set", real(project.baseline): "the baseline"}
    if golden is not None:
        found[real(golden)] = "the golden set"
    if cfg.system.kind == "outputs" and cfg.system.path:
        found[real(project.root / cfg.system.path)] = "the system's outputs file"
    if project.config_path is not None:
        found[real(project.config_path)] = "the project file"
    return found


def _database(path: Path, what: str, found: dict[Path, str]) -> None:
    found.setdefault(real(path), what)
    for suffix in SQLITE_SIBLINGS:
        found.setdefault(real(path.with_name(path.name + suffix)), f"{what}'s journal")


def kept_files(state_dir: Path, log_dbs: Iterable[Path] = ()) -> dict[Path, str]:
    """The state ragrail keeps in ``state_dir`` (history, caches, log database) and the log
    databases named elsewhere, with their journals."""
    found: dict[Path, str] = {}
    for name, what in STATE_FILES.items():
        _database(state_dir / name, what, found)
    for db in log_dbs:
        _database(db, "the log database", found)
    return found


def ingested(db: Path, targets: Iterable[Path]) -> set[Path]:
    """Which of ``targets`` (real paths) the log database ``db`` remembers ingesting. Only
    the targets are looked up, so a database of many exports costs no more; read-only, so
    checking a path never creates, migrates or locks a database."""
    import sqlite3

    from ragrail.online.store import ingested_key

    # by key, and as written for a database from before paths were hashed
    by_name = {name: t for t in targets for name in (ingested_key(t), str(t))}
    wanted = list(by_name)
    if not wanted or not db.is_file():
        return set()
    try:
        con = sqlite3.connect(f"{real(db).as_uri()}?mode=ro", uri=True, timeout=2.0)
    except sqlite3.Error:
        return set()
    try:
        marks = ", ".join("?" * len(wanted))
        rows = con.execute(f"SELECT path FROM ingested_files WHERE path IN ({marks})", wanted)
        return {by_name[r[0]] for r in rows}
    except sqlite3.Error:
        return set()  # not a log database, or an older one: its own command says so
    finally:
        con.close()


def _sqlite_kind(target: Path) -> str | None:
    """'a SQLite database' or 'a SQLite journal' for a file that is one (or would be the
    journal of one), else None."""
    if _is_sqlite(target):
        return "a SQLite database"
    for suffix in SQLITE_SIBLINGS:
        if target.name.endswith(suffix) and _is_sqlite(target.with_name(target.name[: -len(suffix)])):
            return "a SQLite database's journal"
    return None


def _is_sqlite(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    except OSError:
        return False


def _is_our_stream(path: Path) -> bool:
    """True when ``path`` is this process's standard output or error (``/dev/stdout``, a
    link to ``/proc/self/fd/1``): an atomic write would replace the file the shell
    redirected into, or fail on a pipe."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    for fd in (1, 2):
        try:
            own = os.fstat(fd)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) == (own.st_dev, own.st_ino) and not stat.S_ISDIR(st.st_mode):
            return True
    return False


def _current_folder_project(project: Project | None) -> Project | None:
    """The project of the current folder when the command names another one (``--example``,
    ``--config elsewhere``): its files are on the line too."""
    from ragrail.project import CONFIG_NAME, load_config

    here = Path.cwd() / CONFIG_NAME
    if not here.is_file():
        return None
    named = project.config_path if project is not None else None
    if named is not None and real(named) == real(here):
        return None
    try:
        return load_config(here)
    except Exception:  # a broken project file here is not this command's business
        return None


def guard_outputs(
    outputs: Sequence[tuple[Path | None, str]],
    project: Project | None = None,
    reads: Sequence[tuple[Path | None, str]] = (),
    *,
    golden: Path | None = None,
    docs: Path | None = None,
    state_dir: Path | None = None,
    log_dbs: Iterable[Path] = (),
    replaces: Iterable[tuple[Path, str]] = (),
    defaults: Sequence[tuple[Path, str]] = (),
    stdout: Callable[[str], bool] = lambda what: what.startswith("--json"),
) -> list[Path | None]:
    """Refuse (InputError, exit 2), before any work, every output that cannot be written or
    would replace something the command or the project reads or keeps.

    ``outputs``: ``(path as given, what)``; None is not asked for, and ``-`` is standard
    output for the outputs ``stdout(what)`` says may go there (a file named ``-`` for the
    others); at most one may go there. ``reads``: the files this command was given to read,
    never replaced. ``replaces``: project files this command is asked to replace (the
    baseline under ``--save-baseline``, a golden set an import makes), each as
    ``(path, what it is)``: let through only where it is that (``"the baseline"``), never the
    state ragrail keeps nor a file being read. ``defaults``: outputs written where possible
    (a warning when they cannot be), refused only when they would replace something kept.
    Returns each output's path, None for standard output or not asked for, in order.
    """
    from ragrail.fileio import check_writable_output

    files: list[Path | None] = []
    targets: list[tuple[Path, Path, str]] = []
    to_stdout = 0
    for path, what in outputs:
        if path is None or (str(path) == STDOUT and stdout(what)):
            to_stdout += path is not None
            files.append(None)
            continue
        if _is_our_stream(path):
            hint = "pass - to print it there" if stdout(what) else "write it to a file"
            raise InputError(f"the {what} path is this command's own output stream; {hint}", str(path))
        targets.append((check_writable_output(path, what, probe=False), path, what))
        files.append(path)
    if to_stdout > 1:
        raise InputError("only one output can go to standard output ('-')")
    checked = targets + [(real(p), p, what) for p, what in defaults]
    if not checked:
        return files

    protected: dict[Path, str] = {}
    here = _current_folder_project(project)
    for owner in (here, project):
        if owner is not None:
            protected.update(project_inputs(owner, golden if owner is project else None))
    for allowed, kind in replaces:  # only as what it is: a baseline path is no golden set
        if protected.get(real(allowed)) == kind:
            del protected[real(allowed)]
    folder = state_dir or (project.state_dir if project is not None else Path.cwd() / ".ragrail")
    dbs = [folder / "logs.sqlite", *log_dbs]
    if here is not None:
        dbs.append(here.state_dir / "logs.sqlite")
        protected.update(kept_files(here.state_dir))
    protected.update(kept_files(folder, dbs))
    for db in dbs:
        for export in ingested(db, [t for t, _, _ in checked]):
            protected.setdefault(export, "an ingested log export")
    for given, what in reads:
        if given is not None and str(given) != STDOUT:
            protected[real(given)] = what
    for target, _, _ in checked:
        if target not in protected and (sqlite := _sqlite_kind(target)) is not None:
            protected[target] = sqlite

    doc_folders = [d for d in (docs, project.docs if project else None, here.docs if here else None) if d]
    refuse_clashes(checked, protected, doc_folders)
    for _, path, what in targets:
        check_writable_output(path, what)  # last: a clash names the file, not a folder
    return files


def refuse_clashes(
    targets: Sequence[tuple[Path, Path, str]], inputs: dict[Path, str], docs: Iterable[Path]
) -> None:
    """InputError when an output (``(real target, path as given, what)``) would replace an
    input, land in a docs folder as a document, or share its file with another output."""
    from ragrail.system.corpus import DOC_SUFFIXES

    doc_dirs = {real(d) for d in docs}
    seen: dict[Path, str] = {}
    for target, path, what in targets:
        clash = inputs.get(target)
        if clash is not None:
            raise InputError(
                f"the {what} would overwrite {clash}; nothing was written: write it elsewhere",
                str(path),
            )
        if target.parent in doc_dirs and target.suffix.lower() in DOC_SUFFIXES:
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
    else:
        reads = [*reads, (baseline_path, "the baseline (use --save-baseline to replace it)")]
    guard_outputs(
        wanted,
        project,
        reads,
        golden=golden,
        docs=docs,
        replaces=[(baseline_path, "the baseline")] if save_baseline else (),
    )


def check_log_database(db: Path, project: Project | None) -> None:
    """Refuse (exit 2) a ``--db`` path that is not a place for a log database: a file the
    project reads or keeps other than a log database, a SQLite journal, a document in the
    docs folder, or an export a log database ingested."""
    if db.name.endswith(SQLITE_SIBLINGS):
        raise InputError("--db names a SQLite journal, not a database", str(db))
    target = real(db)
    state = project.state_dir if project is not None else Path.cwd() / ".ragrail"
    protected = kept_files(state)
    for path in [*protected]:
        if protected[path] == "the log database":
            del protected[path]
    here = _current_folder_project(project)
    for owner in (here, project):
        if owner is not None:
            protected.update(project_inputs(owner))
    if target in ingested(state / "logs.sqlite", [target]):
        protected[target] = "an ingested log export"
    clash = protected.get(target)
    if clash is not None:
        raise InputError(f"--db names {clash}, not a ragrail log database", str(db))
    docs = [p.docs for p in (here, project) if p is not None]
    from ragrail.system.corpus import DOC_SUFFIXES

    if target.suffix.lower() in DOC_SUFFIXES and any(target.parent == real(d) for d in docs):
        raise InputError(
            "--db would put the log database into the docs folder, where runs read documents",
            str(db),
        )
