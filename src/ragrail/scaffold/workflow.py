"""The GitHub Actions workflow, fitted to the project's system under test.

``templates/evals.yml`` is the built-in pipeline's workflow. What differs by system lies in
its blocks, a ``# @@ NAME`` line to a ``# @@ end`` line: :func:`blocks_for` says which to
replace and with what, :func:`fill_blocks` does it. The rest (lint, run, the summary, the
pull-request comment, the reports, the cache) is the same for every kind. Nothing here reads
a project: a :class:`~ragrail.scaffold.plan.WorkflowPlan` says all it needs.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ragrail.scaffold.plan import WorkflowPlan
from ragrail.scaffold.steps import system_blocks

if TYPE_CHECKING:
    from ragrail.scaffold.source import InstallSource

TEMPLATE = Path(__file__).parent.parent / "templates" / "evals.yml"
_MARK = re.compile(r"(?P<indent> *)# @@ (?P<name>[\w-]+)")
_SPEC_MARK = '"@RAGRAIL_SPEC@"'  # quoted, so the template itself is valid YAML
_ORIGIN_MARK = "@RAGRAIL_SPEC_ORIGIN@"
_VERSION_MARK = "@RAGRAIL_VERSION@"
# The report files the upload steps list, one a line
_UPLOADED = re.compile(
    r"(?m)^(?P<indent> {12})(?P<name>(?:report|junit|summary|results)(?:-claude)?"
    r"\.(?:html|xml|md|json))$"
)


def fill_blocks(template: str, blocks: Mapping[str, Sequence[str]]) -> str:
    """``template`` with each block named in ``blocks`` replaced by its lines, indented as
    the block's ``# @@ NAME`` line (an empty line stays empty), every other block kept as
    written, and the marker lines dropped. A block inside a replaced one goes with it."""
    out: list[str] = []
    open_blocks: list[str] = []
    for line in template.splitlines(keepends=True):
        mark = _MARK.fullmatch(line.rstrip("\n"))
        replaced = any(name in blocks for name in open_blocks)
        if mark is None:
            if not replaced:
                out.append(line)
        elif mark["name"] == "end":
            open_blocks.pop()
        else:
            name = mark["name"]
            open_blocks.append(name)
            if name in blocks and not replaced:
                indent = mark["indent"]
                out.extend(f"{indent}{piece}\n" if piece else "\n" for piece in blocks[name])
    return "".join(out)


def in_folder(text: str, folder: str) -> str:
    """``text`` for a project in ``folder`` of the repository: the paths the actions read
    from the repository root (the cache's folder and key files, the summary the comment
    reads, the uploaded reports) start with ``folder/``; the run steps run in it."""
    if not folder:
        return text
    text = text.replace("path: .ragrail", f"path: {folder}/.ragrail")
    text = text.replace(
        "hashFiles('ragrail.toml', 'golden.*')",
        f"hashFiles('{folder}/ragrail.toml', '{folder}/golden.*')",
    )
    text = text.replace("'summary.md'", f"'{folder}/summary.md'")
    return _UPLOADED.sub(lambda m: f"{m['indent']}{folder}/{m['name']}", text)


def _own_system(text: str) -> str:
    """Names for a workflow whose one job runs the configured system: it is not offline."""
    text = text.replace("\n  offline:\n", "\n  eval:\n")
    text = text.replace("ragrail-offline-", "ragrail-eval-")
    return text.replace("offline job", "eval job")


def folder_blocks(plan: WorkflowPlan) -> dict[str, list[str]]:
    """The blocks that put the jobs' run steps in the project's folder, when it is not the
    repository root; none at the root."""
    if not plan.folder:
        return {}
    paragraph = (
        f"The project (ragrail.toml) is in {plan.folder}/ of this repository: each job runs "
        "its steps there (defaults: working-directory), and the paths the actions read from "
        f"the repository root (.ragrail, the cache keys' files, the reports) start with "
        f"{plan.folder}/."
    )
    defaults = ["defaults:", "  run:", f"    working-directory: {json.dumps(plan.folder)}"]
    return {
        "folder": [f"# {line}" for line in textwrap.wrap(paragraph, 90)],
        "real-model-settings": defaults,
        "job-settings": defaults,
    }


def blocks_for(plan: WorkflowPlan) -> dict[str, list[str]]:
    """Every block to replace for ``plan``: none for the built-in pipeline with the
    stand-in at the repository root (the template as written)."""
    blocks = folder_blocks(plan)
    for name, lines in system_blocks(plan).items():
        # a system's settings (its keys) come first, the folder's defaults after them
        blocks[name] = [*lines, *blocks.get(name, [])] if name == "job-settings" else lines
    return blocks


def workflow_text(source: InstallSource | None = None, plan: WorkflowPlan | None = None) -> str:
    """The GitHub Actions workflow for ``plan`` (default: the built-in pipeline with the
    stand-in, as ``init`` writes it), installing ragrail from ``source`` (default: this
    one's)."""
    from ragrail._version import __version__
    from ragrail.scaffold.source import installed_source
    from ragrail.text.guard import visible

    plan = plan or WorkflowPlan()
    source = source or installed_source()
    text = fill_blocks(TEMPLATE.read_text(encoding="utf-8"), blocks_for(plan))
    if not plan.offline:
        text = _own_system(text)
    text = in_folder(text, plan.folder)
    # a JSON string is a YAML double-quoted scalar: any URL stays one value
    text = text.replace(_SPEC_MARK, json.dumps(source.spec))
    text = text.replace(_ORIGIN_MARK, visible(source.origin))  # one comment line, whatever it says
    return text.replace(_VERSION_MARK, __version__)
