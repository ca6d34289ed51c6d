from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from ragrail.cli import main
from ragrail.config import example_dir

HERE = Path(__file__).parent
DATA = HERE / "data"


@dataclass
class CliResult:
    code: int
    out: str
    err: str


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


def run_shell(*args: str, cwd: Path | None = None) -> CliResult:
    """Run `python -m ragrail ARGS...` in a real subprocess."""
    proc = subprocess.run(
        [sys.executable, "-m", "ragrail", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def kitebase() -> Path:
    return example_dir("kitebase")
