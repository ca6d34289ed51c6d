from __future__ import annotations

import os
from pathlib import Path

import pytest

from ragrail.cli import main
from ragrail.project import example_dir
from tests.helpers import CliResult

# the Chromium fixture ``browser``, shared by the browser test modules
pytest_plugins = ["tests.browser"]


@pytest.fixture(autouse=True)
def _isolated_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts in its own empty folder, so runs record their history and cache
    there, never in the repository."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]):
    """Run the CLI in-process, as `ragrail ARGS...`, returning exit code and output."""

    def invoke(*args: str, cwd: Path | None = None) -> CliResult:
        old = Path.cwd()
        if cwd is not None:
            os.chdir(cwd)
        try:
            capsys.readouterr()
            try:
                main(list(args))
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 0
        finally:
            os.chdir(old)
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return invoke


@pytest.fixture
def kitebase() -> Path:
    return example_dir("kitebase")


@pytest.fixture
def project(cli, tmp_path: Path) -> Path:
    """A private copy of the Kitebase example (tmp_path / "kb"), made by `ragrail example`.
    A test file that needs another project defines its own `project`."""
    dest = tmp_path / "kb"
    assert cli("example", "kitebase", str(dest)).code == 0
    return dest
