"""Helpers shared by tests in several folders, in one place (the fixtures are in
tests/conftest.py; the scripted model server is tests/fake_llm.py, saved-run builders
tests/factories.py, the headless browser tests/browser.py)."""
from __future__ import annotations

import hashlib
import os
import re
import socket
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

TESTS = Path(__file__).parent
DATA = TESTS / "data"
# A whole Kitebase run saved by ragrail 1's baseline writer.
KITEBASE_V1 = DATA / "baselines" / "kitebase-v1.json"


@dataclass
class CliResult:
    code: int
    out: str
    err: str


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


def one_error_line(err: str) -> str:
    """The one line an input error prints: no traceback, nothing else on stderr."""
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err, err
    assert lines[0].startswith("ragrail: error: "), err
    return lines[0]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree_state(folder: Path) -> dict[str, str]:
    """Every entry under the folder: a hash for regular files, the kind for the rest."""
    state: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(folder))
            mode = path.lstat().st_mode
            if stat.S_ISREG(mode):
                state[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
            elif stat.S_ISLNK(mode):
                state[rel] = "link:" + os.readlink(path)
            else:
                state[rel] = f"mode:{stat.S_IFMT(mode)}"
    return state


def asides(folder: Path) -> list[str]:
    """The damaged state files moved aside in the folder."""
    return sorted(p.name for p in folder.iterdir() if ".corrupt-" in p.name)


def between(prompt: str, tag: str) -> str:
    """The text of a prompt's <tag>...</tag> block ('' when it has none)."""
    m = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", prompt, re.S)
    return m.group(1) if m else ""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
