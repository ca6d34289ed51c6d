"""Which project and log database the log commands (``logs ingest``, ``logs score``,
``online``, ``sample``) use: one rule for all, so they always find the same database."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragrail.cli.common import load_project


def logs_project(config: Path | None, example: str | None = None) -> Any:  # -> config.Project
    """The project whose ``[logs]`` settings and state folder the log commands use: the
    given one, else this folder's ragrail.toml, else every default with the state in this
    folder (logs can be studied before any golden set exists). The same rule for
    ``logs ingest``, ``logs score``, ``online`` and ``sample``, so they find one database."""
    from ragrail.app import default_project
    from ragrail.config import CONFIG_NAME

    if config is None and example is None and not (Path.cwd() / CONFIG_NAME).is_file():
        return default_project()
    return load_project(config, example)


def db_path(project: Any, db: Path | None) -> Path:
    """``--db``, else the project's ``.ragrail/logs.sqlite``."""
    from ragrail.online.store import log_path

    if db is None:
        return log_path(project.state_dir)
    from ragrail.outputs import check_log_database

    check_log_database(db, project if project.config_path is not None else None)
    return db


def open_logs(project: Any, db: Path | None) -> Any:  # -> store.LogStore
    """The existing log database (never created here: exit 2 when there is none)."""
    from ragrail.online.store import LogStore

    return LogStore(db_path(project, db), create=False)


def check_versions(asked: list[str], known: list[str]) -> None:
    """Exit 2 naming an asked-for version the log does not have, with the ones it has: an
    unknown version would otherwise select nothing and pass for an empty log."""
    from ragrail.errors import InputError
    from ragrail.text.guard import visible

    for name in asked:
        if name not in known:
            listed = ", ".join(visible(v) for v in known) or "none"
            raise InputError(f"no conversations of version {visible(name)!r} (versions: {listed})")
