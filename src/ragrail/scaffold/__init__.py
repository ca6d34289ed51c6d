"""The files `ragrail init`, `ragrail example` and `ragrail workflow` write.

A project gets its configuration, a golden set, a GitHub Actions workflow
(``.github/workflows/evals.yml``) and a ``.ragrail/.gitignore`` so the local state
(run history, model-reply cache) is never committed. The workflow fits the project's
system under test (``scaffold.plan``, ``scaffold.steps``, ``scaffold.workflow``) and
installs ragrail from a pinned source (``scaffold.source``): ragrail is not on PyPI, so the
source is taken from how the running ragrail was installed and the file says how to change
it. Nothing here prints; the CLI reports what was written.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from ragrail.errors import InputError
from ragrail.scaffold.plan import WorkflowPlan, plan_for, repository_root
from ragrail.scaffold.source import InstallSource, install_source_from, installed_source
from ragrail.scaffold.workflow import workflow_text

if TYPE_CHECKING:
    from ragrail.project import Project

__all__ = [
    "InstallSource",
    "WorkflowPlan",
    "copy_example",
    "init_project",
    "install_source_from",
    "installed_source",
    "project_workflow",
    "workflow_home",
    "workflow_text",
]

TEMPLATES = Path(__file__).parent.parent / "templates"
WORKFLOW = Path(".github") / "workflows" / "evals.yml"
STATE_DIR = ".ragrail"
# Everything in .ragrail/ (history, cache, the .gitignore itself) is machine-local state.
STATE_GITIGNORE = "*\n"


def _unreachable_warning(source: InstallSource, workflow: Path | str) -> None:
    if not source.reachable:
        warnings.warn(
            f"this ragrail came from {source.origin}: {workflow} installs "
            f"{source.spec!r}, which is not on PyPI; set RAGRAIL_SPEC there to a git URL "
            "or a wheel (the file says how)",
            stacklevel=3,
        )


def ensure_state_gitignore(folder: Path) -> Path | None:
    """Write ``folder/.ragrail/.gitignore`` (``*``) unless one is there; the path, or None."""
    from ragrail.fileio import atomic_write_text

    path = folder / STATE_DIR / ".gitignore"
    if path.exists() or path.is_symlink():
        return None  # the user's own rules win
    atomic_write_text(path, STATE_GITIGNORE, "state .gitignore")
    return path


def init_project(folder: Path, source: InstallSource | None = None) -> list[Path]:
    """Start a project in ``folder``: ragrail.toml, golden.json, an empty docs/, the
    workflow and ``.ragrail/.gitignore``. Returns the paths written (and docs/).

    No placeholder document goes into docs/: it would sit among the user's own as
    a distractor and a lint warning. The starter golden set holds one case that
    fits any support bot (an off-topic question it should not answer). Refuses
    (InputError, nothing written) when any of the files exists.
    """
    from ragrail.fileio import atomic_write_text, check_writable_output

    if folder.exists() and not folder.is_dir():
        raise InputError("is not a folder", str(folder))
    files = {
        folder / "ragrail.toml": (TEMPLATES / "ragrail.toml").read_text(encoding="utf-8"),
        folder / "golden.json": (TEMPLATES / "golden.json").read_text(encoding="utf-8"),
        folder / WORKFLOW: "",
    }
    existing = [str(p) for p in files if p.exists() or p.is_symlink()]
    if existing:
        raise InputError(f"would overwrite {', '.join(existing)}; nothing was written")
    docs = folder / "docs"
    if docs.exists() and not docs.is_dir():
        raise InputError("is not a folder; the documents go in a docs/ folder", str(docs))
    for path in files:
        check_writable_output(path, "project file")
    source = source or installed_source()
    files[folder / WORKFLOW] = workflow_text(source)
    written = []
    for path, text in files.items():
        atomic_write_text(path, text, "project file")
        written.append(path)
    docs.mkdir(parents=True, exist_ok=True)
    written.append(docs)
    gitignore = ensure_state_gitignore(folder)
    if gitignore is not None:
        written.append(gitignore)
    _unreachable_warning(source, folder / WORKFLOW)
    return written


def copy_example(name: str, dest: Path, source: InstallSource | None = None) -> list[Path]:
    """Copy the bundled example ``name`` into ``dest`` (new or empty), with the workflow
    and ``.ragrail/.gitignore``. Returns the files and folders at the top of ``dest``."""
    from ragrail.fileio import atomic_write_text
    from ragrail.project import example_dir, load_config

    example = example_dir(name)
    plan = plan_for(load_config(example / "ragrail.toml"))  # late-refund's is an outputs file
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise InputError("already exists and is not an empty folder; choose a new one", str(dest))
    # a bundled example's own state (a demo run inside the package) is not part of it
    ignore = shutil.ignore_patterns("__pycache__", STATE_DIR)
    source = source or installed_source()
    # Built beside dest and renamed into place, so a full disk or Ctrl-C leaves no half copy.
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent))
    try:
        umask = os.umask(0)
        os.umask(umask)
        staging.chmod(0o777 & ~umask)  # mkdtemp makes it private; a copied project is not
        shutil.copytree(example, staging, dirs_exist_ok=True, ignore=ignore)
        atomic_write_text(staging / WORKFLOW, workflow_text(source, plan), "workflow")
        ensure_state_gitignore(staging)
        if dest.exists():
            dest.rmdir()  # checked empty above
        staging.rename(dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _unreachable_warning(source, dest / WORKFLOW)
    return sorted(dest.iterdir())


def workflow_home(project: Project) -> Path:
    """Where the workflow of ``project`` belongs: ``.github/workflows/evals.yml`` in the
    repository root (the nearest folder at or above the project holding ``.git``), the
    only place GitHub reads it; outside a repository, in the project folder."""
    return (repository_root(project.root) or project.root.resolve()) / WORKFLOW


def project_workflow(
    project: Project, dest: str, source: InstallSource | None = None
) -> tuple[str, WorkflowPlan]:
    """The workflow that fits ``project`` as configured, with the paths as seen from its
    repository root, and the plan it was made from. Warns when ``source`` cannot be reached
    from CI, naming ``dest`` (where the text goes)."""
    repo = workflow_home(project).parents[2]
    plan = plan_for(project, repo)
    source = source or installed_source()
    _unreachable_warning(source, dest)
    return workflow_text(source, plan), plan
