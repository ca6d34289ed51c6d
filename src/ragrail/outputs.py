"""Where a command may write: never over one of its inputs, never into the docs folder,
never two outputs to one file. Checked before any work, so a bad path costs nothing."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ragrail.errors import InputError

if TYPE_CHECKING:
    from ragrail.config import Project


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
            raise InputError(f"the {what} would overwrite {clash}; write it elsewhere", str(path))
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
) -> None:
    """Refuse (InputError) an output path that is a folder, FIFO or device, or cannot be
    written, that would overwrite one of the run's inputs (the golden set, the baseline,
    the project file, a document), or that two outputs share (the second would replace
    the first). ``outputs``: ``(path or None, what)``."""
    from ragrail.fileio import check_writable_output

    wanted = [(path, what) for path, what in outputs if path is not None]
    if save_baseline:
        wanted.append((baseline_path, "baseline"))
    targets = [(check_writable_output(path, what), path, what) for path, what in wanted]
    inputs = project_inputs(project, golden, docs)
    if save_baseline:  # saving it is asked for; any other write over it is not
        inputs.pop(real(baseline_path), None)
    else:
        inputs[real(baseline_path)] = "the baseline (use --save-baseline to replace it)"
    refuse_clashes(targets, inputs, docs or project.docs)
