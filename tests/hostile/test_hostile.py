"""Hostile input, table-driven: every case of ``cases.py`` must end with the exit code the
contract promises, without a traceback, with its reason in one ``ragrail:`` line, and an
exit 2 must leave every file of the project exactly as it was."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ragrail.project import example_dir
from tests.helpers import CliResult, tree_state
from tests.hostile.cases import CASES, Hostile

OUTPUTS_TOML = """name = "outputs bot"
docs = "docs"
golden = "golden.json"
baseline = "baseline.json"

[system]
kind = "outputs"
path = "outputs.jsonl"
"""

PYTHON_TOML = """name = "python bot"
docs = "docs"
golden = "golden.json"
baseline = "baseline.json"

[system]
kind = "python"
target = "bot:answer"
"""

HTTP_TOML = """name = "http bot"
docs = "docs"
golden = "golden.json"
baseline = "baseline.json"

[system]
kind = "http"
url = "http://127.0.0.1:9/ask"
max_retries = 0
timeout = 2
"""

BOT = """def answer(question):
    return {"answer": "I don't know.", "contexts": [
        {"id": "faq#1", "source": "faq", "text": "We answer questions.", "score": 0.5}]}
"""


def _outputs_jsonl(golden: Path) -> str:
    import json

    cases = json.loads(golden.read_text(encoding="utf-8"))
    return "\n".join(
        json.dumps({"id": c["id"], "answer": "I don't know.", "contexts": []}) for c in cases
    ) + "\n"


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One pristine project of each kind, with its own saved baseline."""
    from ragrail.cli import main

    root = tmp_path_factory.mktemp("hostile-templates")
    made: dict[str, Path] = {}
    for kind, toml in (
        ("kitebase", None),
        ("outputs", OUTPUTS_TOML),
        ("python", PYTHON_TOML),
        ("http", HTTP_TOML),
    ):
        dest = root / kind
        shutil.copytree(example_dir("kitebase"), dest)
        if toml is not None:
            (dest / "ragrail.toml").write_text(toml, encoding="utf-8")
        if kind == "outputs":
            (dest / "outputs.jsonl").write_text(_outputs_jsonl(dest / "golden.json"))
        if kind == "python":
            (dest / "bot.py").write_text(BOT)
        if kind in ("outputs", "python"):
            old = Path.cwd()
            os.chdir(dest)
            try:
                with pytest.raises(SystemExit) as exit_info:
                    main(["run", "--save-baseline", "--no-history"])
            finally:
                os.chdir(old)
            assert exit_info.value.code == 0, f"could not build the {kind} template"
            shutil.rmtree(dest / ".ragrail", ignore_errors=True)
        made[kind] = dest
    return made


def _run(case: Hostile, project: Path, cli) -> CliResult:
    if not case.subprocess:
        return cli(*case.args, cwd=project)
    env = {**os.environ, "NO_COLOR": "1", **case.env}
    proc = subprocess.run(
        [sys.executable, "-m", "ragrail", *case.args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


def test_the_table_is_big_and_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))
    assert len(ids) >= 150
    assert {0, 2, 3} <= {c.code for c in CASES}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile(case: Hostile, templates: dict[str, Path], tmp_path: Path, cli, monkeypatch) -> None:
    for key, value in case.env.items():
        monkeypatch.setenv(key, value)
    project = tmp_path / "project"
    shutil.copytree(templates[case.project], project, symlinks=True)
    if case.setup is not None:
        case.setup(project)
    before = tree_state(project)
    # Targets and checks of every case share module names: each must import its own.
    for name in ("bot", "mychecks"):
        sys.modules.pop(name, None)

    r = _run(case, project, cli)

    shown = f"exit {r.code}\n--- stdout (tail)\n{r.out[-1500:]}\n--- stderr\n{r.err[-2500:]}"
    assert "Traceback" not in r.out + r.err, shown
    assert r.code == case.code, shown
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    if case.code in (2, 3):
        reasons = [ln for ln in lines if ln.startswith("ragrail:") and "warning" not in ln[:20]]
        assert reasons, shown
    if case.code == 2:
        errors = [ln for ln in lines if ln.startswith("ragrail: error")]
        assert len(errors) == 1, shown
        assert tree_state(project) == before, "an exit 2 changed the project's files"
    if case.says is not None:
        assert case.says.lower() in r.err.lower(), shown
    if case.forbid is not None:
        pattern = re.compile(case.forbid)
        assert not any(pattern.search(ln) for ln in (r.out + r.err).splitlines()), shown
