"""Flaky questions across recorded runs (store/flaky.py): the flaky app, in git, answered
once per run with its history kept, is marked flaky where its verdict changed between
earlier runs of the same configuration and commit, in the scorecard, the results, the
diff, JUnit and pytest; a regression after steady runs is never called flaky."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ragrail.store.flaky import mark_flaky, recorded_verdicts
from tests.factories import run_result
from tests.test_noise_gate import APP, ragrail

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]


def commit(folder: Path) -> None:
    subprocess.run([*GIT, "add", "-A"], cwd=folder, check=True)
    subprocess.run([*GIT, "commit", "-qm", "app"], cwd=folder, check=True)


@pytest.fixture
def app(tmp_path: Path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    folder = tmp_path / "app"
    shutil.copytree(APP, folder, ignore=shutil.ignore_patterns("__pycache__", "baseline.json"))
    (folder / ".gitignore").write_text(".ragrail/\n*.json\n*.xml\n")
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    commit(folder)
    return folder


def results(folder: Path, seed: int, *args: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    out = folder / f"r{seed}.json"
    r = ragrail(folder, "run", "--json", str(out), *args, seed=seed)
    return r, json.loads(out.read_text())


def marked(data: dict) -> dict[str, list[int]]:
    return {c["id"]: c["recorded"] for c in data["cases"] if "recorded" in c}


def test_a_question_whose_verdict_changed_between_earlier_runs_is_flaky(app: Path) -> None:
    for seed in (0, 1):
        _, data = results(app, seed, "--save-baseline" if seed == 0 else "--no-history")
        assert not marked(data)  # no earlier runs that disagree
    results(app, 1)  # recorded
    r, third = results(app, 2, "--junit", str(app / "junit.xml"))
    flaky = marked(third)
    # the 60% questions whose verdict differed between the two recorded runs, and only them
    assert flaky and all(int(i.split("-")[1]) >= 160 for i in flaky)
    assert set(map(tuple, flaky.values())) == {(1, 2)}
    assert third["totals"]["n_flaky"] == len(flaky)
    assert "flaky: passed in 1 of 2 earlier runs of this configuration" in r.stdout
    worse = [line for line in r.stdout.splitlines() if line.startswith("  WORSE:")]
    named = [w for w in worse if "[flaky:" in w]
    # a flaky question that fails now is still WORSE (one answer each: the exact rule)
    assert all(w.split(":")[1].strip() in flaky for w in named)
    if named:
        assert "flaky: passed in 1 of 2 earlier runs" in (app / "junit.xml").read_text()


def test_a_regression_after_steady_runs_is_not_flaky(app: Path) -> None:
    results(app, 0, "--save-baseline")
    results(app, 0)  # the same seed: every verdict as before
    # what git cannot see (here an environment variable; a redeployed service, a new
    # model) breaks ten questions on the same commit: they passed in every earlier run
    out = app / "worse.json"
    r = ragrail(app, "run", "--json", str(out), seed=0, mode="worse")
    flaky = marked(json.loads(out.read_text()))
    assert not any(int(i.split("-")[1]) < 10 for i in flaky)
    assert "WORSE:  item-0" in r.stdout and "[flaky" not in r.stdout.split("WORSE:  item-0")[1][:200]


def test_another_configuration_is_another_system(app: Path) -> None:
    results(app, 0)
    results(app, 1)
    toml = app / "ragrail.toml"
    toml.write_text(toml.read_text().replace("Flaky catalogue bot", "Another bot"))
    commit(app)
    _, data = results(app, 2)
    assert not marked(data)


def test_uncommitted_changes_mark_nothing(app: Path) -> None:
    results(app, 0)
    results(app, 1)
    (app / "app.py").write_text((app / "app.py").read_text() + "\n# edited\n")
    _, data = results(app, 2)
    assert not marked(data)


def test_pytest_names_a_flaky_question(app: Path) -> None:
    results(app, 0, "--save-baseline")
    results(app, 1)
    env = {**os.environ, "FLAKY_SEED": "2"}
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "--ragrail", ".", "-q", "-p", "no:cacheprovider",
         "--tb=line"],
        cwd=app, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert "[flaky: passed in 1 of 2 earlier runs of this configuration]" in r.stdout


def test_outside_git_or_unreadable_history_marks_nothing(tmp_path: Path) -> None:
    (tmp_path / "h.sqlite").write_text("not a database")
    result = run_result([])
    assert recorded_verdicts(tmp_path / "h.sqlite", result, tmp_path) == {}
    assert mark_flaky(result, tmp_path / "missing.sqlite", None) == 0
    folder = tmp_path / "nogit"
    shutil.copytree(APP, folder, ignore=shutil.ignore_patterns("__pycache__", "baseline.json"))
    for seed in (0, 1, 2):
        _, data = results(folder, seed)
    assert not marked(data)
