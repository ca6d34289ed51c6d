"""What the generated workflow must know of a project: the system under test, where the
project sits in its repository, and what the app needs installed.

Reading the project and its folders happens here, once; rendering the workflow from a
:class:`WorkflowPlan` (``scaffold.workflow``) reads nothing.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ragrail.errors import InputError

if TYPE_CHECKING:
    from ragrail.project import Project

# ${VAR} in system.headers, read from the environment as the http adapter reads it
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
# A folder the workflow can name unquoted in YAML, shell and the actions' expressions.
_SAFE_FOLDER = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_./-]*")


@dataclass(frozen=True)
class WorkflowPlan:
    """The project as the workflow sees it; the default is what ``ragrail init`` writes.

    ``kind`` is ``[system] kind``; ``answerer`` and ``model`` the built-in pipeline's;
    ``target``, ``url`` and ``outputs`` the python, http and outputs systems' settings.
    ``folder`` is the project folder from the repository root (``""``: the root itself).
    ``installs`` are ``pip install`` arguments for the app's dependencies, from the
    repository root; ``secrets`` the environment variables the system reads; ``judge``
    the judge's provider when ``[judge]`` turns it on (its key is a secret every eval job
    needs, whatever the system), ``judge_model`` its model.
    """

    kind: str = "pipeline"
    answerer: str = "standin"
    model: str | None = None
    target: str = ""
    url: str = ""
    outputs: str = ""
    folder: str = ""
    installs: tuple[str, ...] = ()
    secrets: tuple[str, ...] = ()
    judge: str = ""
    judge_model: str | None = None

    @property
    def offline(self) -> bool:
        """The built-in pipeline with the stand-in: the one system that calls no model,
        and the one a separate real-model (``--claude``) job can add to."""
        return self.kind == "pipeline" and self.answerer == "standin"


def repository_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` holding ``.git`` (a folder, or the file a
    worktree or submodule has), or None outside a repository."""
    here = start.resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _is_package(pyproject: Path) -> bool:
    """Whether pip can install the folder of ``pyproject``: it declares a project
    (``[project]``, ``[tool.poetry]``) or a build system. One holding only tools' settings
    (ruff, mypy) is not a package; one that cannot be read is left for pip to judge."""
    import tomllib

    if not pyproject.is_file():
        return False
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return True
    tool = data.get("tool")
    poetry = isinstance(tool, dict) and "poetry" in tool
    return "project" in data or "build-system" in data or poetry


def app_installs(project_dir: Path, repo: Path) -> tuple[str, ...]:
    """``pip install`` arguments for a Python app's dependencies, from the repository root.

    The repository root, then the project folder (when it is another), each gives
    ``-r DIR/requirements.txt`` for a requirements.txt, then ``./DIR`` (``.`` at the root)
    for a pyproject.toml that declares a package (:func:`_is_package`).
    """
    found: list[str] = []
    for folder in dict.fromkeys([repo, project_dir]):
        rel = folder.relative_to(repo).as_posix()
        prefix = "" if rel == "." else f"{rel}/"
        if (folder / "requirements.txt").is_file():
            found.append(f"-r {shlex.quote(prefix + 'requirements.txt')}")
        if _is_package(folder / "pyproject.toml"):
            found.append(shlex.quote(f"./{rel}") if prefix else ".")
    return tuple(found)


def project_folder(root: Path, repo: Path) -> str:
    """The project folder from the repository root, ``""`` at the root. A folder whose
    name the workflow could not write unquoted (a quote, a space) is exit 2."""
    root, repo = root.resolve(), repo.resolve()
    if root == repo:
        return ""
    try:
        folder = root.relative_to(repo).as_posix()
    except ValueError:
        raise InputError(f"the project is not inside the repository {repo}", str(root)) from None
    if not _SAFE_FOLDER.fullmatch(folder):
        raise InputError(
            f"the project folder {folder!r} has characters the workflow cannot name safely "
            "(letters, digits, '_', '.', '-' and '/' only): rename it, or write the "
            "workflow by hand",
            str(root),
        )
    return folder


def plan_for(project: Project, repo: Path | None = None) -> WorkflowPlan:
    """The plan for ``project`` in the repository at ``repo`` (default: the project folder
    is the repository root, as ``init`` and ``example`` write it)."""
    system, answerer = project.config.system, project.config.answerer
    root = project.root.resolve()
    repo = (repo or root).resolve()
    folder = project_folder(root, repo)  # first: the project must be inside the repository
    installs = app_installs(root, repo) if system.kind == "python" else ()
    headers = system.headers.values() if system.kind == "http" else ()
    secrets = tuple(dict.fromkeys(m.group(1) for v in headers for m in _ENV.finditer(v)))
    return WorkflowPlan(
        kind=system.kind,
        answerer=answerer.name,
        model=answerer.model,
        target=system.target or "",
        url=system.url or "",
        outputs=system.path or "",
        folder=folder,
        installs=installs,
        secrets=secrets,
        judge=project.config.judge.provider or "",
        judge_model=project.config.judge.model,
    )
