"""Shared pieces of the import and export tests: the fixtures' folder, a project to
score imported files in, and the scores of its run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).parents[1] / "data" / "interop"
DOCS = DATA / "docs"

OUTPUTS_TOML = """name = "imported"
docs = "docs"
golden = "golden.json"

[system]
kind = "outputs"
path = "outputs.jsonl"
"""
PIPELINE_TOML = """name = "imported"
docs = "docs"
golden = "golden.json"
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project folder holding a copy of the fixture documents."""
    folder = tmp_path / "project"
    shutil.copytree(DOCS, folder / "docs")
    return folder


def scores(
    cli: Any, folder: Path, outputs: bool = True, *flags: str, code: int = 0
) -> dict[str, Any]:
    """Run ``ragrail run`` on the project (its outputs file, or the built-in pipeline),
    check its exit code and return the saved results, with the cases by id in ``by_id``."""
    (folder / "ragrail.toml").write_text(OUTPUTS_TOML if outputs else PIPELINE_TOML)
    r = cli("run", "--no-history", "--json", "results.json", *flags, cwd=folder)
    assert r.code == code, r.out + r.err
    result = json.loads((folder / "results.json").read_text())
    result["by_id"] = {c["id"]: c for c in result["cases"]}
    return result


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
