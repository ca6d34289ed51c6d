"""CLI conventions: machine output on stdout, -q/-v, colour, RAGRAIL_* variables,
shell completion, and a --help that loads nothing heavy."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ragrail.cli.ui import effective_color
from tests.fake_llm import FakeLLM
from tests.judge.test_judge import KEY, RUBRIC, forty_case_run, late_refund, rubric_judge

ANSI = re.compile(r"\x1b\[[0-9;]*m")
VERDICT = "3 questions got worse (3 WORSE lines): something that passed before fails now."


@pytest.fixture
def two_runs(cli, tmp_path):
    """A copy of Kitebase with two recorded runs: as it is (1), and at top-k 1 (2)."""
    dest = tmp_path / "kb"
    assert cli("example", "kitebase", str(dest)).code == 0
    assert cli("run", cwd=dest).code == 0
    assert cli("run", "--top-k", "1", cwd=dest).code == 1
    return dest


# ---------------------------------------------------------------- --json -


def test_run_json_dash_writes_the_results_to_stdout_and_the_text_to_stderr(cli, tmp_path):
    r = cli("demo", "--top-k", "1", "--no-history", "--json", "-")
    assert r.code == 1
    data = json.loads(r.out)  # stdout is the JSON and nothing else
    assert len(data["cases"]) == 12 and data["config"]["top_k"] == 1
    assert "hit rate@1" in r.err and VERDICT in r.err
    assert not (tmp_path / "-").exists()


def test_history_show_and_diff_read_results_as_json(cli, two_runs, tmp_path):
    r = cli("history", "--json", "-", cwd=two_runs)
    assert r.code == 0
    runs = json.loads(r.out)["runs"]
    assert [run["id"] for run in runs] == [1, 2]
    assert [run["config"]["top_k"] for run in runs] == [3, 1]

    r = cli("show", "1", "--json", "-", cwd=two_runs)
    assert r.code == 0 and json.loads(r.out)["totals"]["n_cases"] == 12

    r = cli("diff", "1", "2", "--json", "-", cwd=two_runs)
    assert r.code == 1
    data = json.loads(r.out)
    assert data["exit_code"] == 1 and data["regressed"] is True
    worse = sorted(c["case_id"] for c in data["changes"] if c["kind"] == "WORSE")
    assert worse == ["change-sign-in-email", "lost-phone", "secure-account"]
    assert "WORSE" in r.err  # the text is still there, on stderr

    out = tmp_path / "diff.json"
    r = cli("diff", "1", "2", "--json", str(out), cwd=two_runs)
    assert r.code == 1 and json.loads(out.read_text())["exit_code"] == 1
    assert "WORSE" in r.out


def test_a_json_path_that_cannot_be_written_is_exit_2_before_any_output(cli, two_runs, tmp_path):
    folder = tmp_path / "a-folder"
    folder.mkdir()
    r = cli("history", "--json", str(folder), cwd=two_runs)
    assert r.code == 2 and r.out == ""
    assert len(r.err.strip().splitlines()) == 1


def test_lint_and_cache_stats_as_json(cli, tmp_path):
    r = cli("lint", "--example", "kitebase", "--json", "-")
    assert r.code == 0
    data = json.loads(r.out)
    assert (data["cases"], data["errors"]) == (12, 0)

    r = cli("cache", "stats", "--json", "-")
    assert r.code == 0
    assert json.loads(r.out) == {
        "cache": str(tmp_path / ".ragrail" / "cache.sqlite"),
        "exists": False,
        "replies": 0,
        "bytes": 0,
        "by_model": [],
        "embeddings": {
            "cache": str(tmp_path / ".ragrail" / "embeddings.sqlite"),
            "exists": False,
            "vectors": 0,
            "bytes": 0,
            "by_model": [],
        },
    }


def test_lint_findings_are_in_the_json_with_exit_1(cli, tmp_path):
    dest = tmp_path / "kb"
    assert cli("example", "kitebase", str(dest)).code == 0
    golden = dest / "golden.json"
    golden.write_text(golden.read_text().replace('"backup codes"', '"backup kodes"', 1))
    r = cli("lint", "--json", "-", cwd=dest)
    assert r.code == 1
    data = json.loads(r.out)
    assert data["errors"] >= 1
    assert any("backup kodes" in p["message"] for p in data["problems"])


def test_judge_validate_as_json(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    dest = late_refund(cli, tmp_path, RUBRIC)
    forty_case_run(tmp_path / "labelled.json")
    human = {i: i < 24 for i in range(40)}
    (tmp_path / "labels.csv").write_text(
        "case_id,criterion,verdict\n"
        + "".join(f"case-{i:02d},polite,{'pass' if human[i] else 'fail'}\n" for i in range(40))
    )

    def verdict(answer: str) -> bool:
        m = re.search(r"Answer number (\d+)", answer)
        return True if m is None else human[int(m.group(1))]

    with FakeLLM(rubric_judge(verdict)) as fake:
        r = cli(
            "judge",
            "validate",
            "--labels",
            str(tmp_path / "labels.csv"),
            "--run",
            str(tmp_path / "labelled.json"),
            "--judge",
            "claude",
            "--judge-base-url",
            fake.url,
            "--json",
            "-",
            cwd=dest,
        )
    assert r.code == 0, r.err
    data = json.loads(r.out)
    (polite,) = data["criteria"]
    assert polite["criterion"] == "polite" and polite["n"] == 40
    assert polite["agreement"] == 1.0 and polite["kappa"] == pytest.approx(1.0)
    assert polite["gates_allowed"] is True and isinstance(polite["stored"], int)


# ---------------------------------------------------------------- -q / -v


@pytest.mark.parametrize("args", [("-q", "demo"), ("demo", "-q"), ("demo", "--quiet")])
def test_quiet_prints_only_the_verdict_line(cli, args):
    r = cli(*args, "--top-k", "1", "--no-history")
    assert r.code == 1
    assert r.out.strip() == VERDICT


def test_quiet_keeps_errors_on_stderr_and_the_exit_code(cli, tmp_path):
    dest = tmp_path / "kb"
    assert cli("example", "kitebase", str(dest)).code == 0
    (dest / "baseline.json").unlink()
    r = cli("run", "-q", "--no-history", cwd=dest)
    assert r.code == 0
    assert r.out.strip().startswith("No baseline at ")
    assert len(r.out.strip().splitlines()) == 1


def test_verbose_shows_the_inputs_and_the_metrics_table(cli, kitebase):
    plain = cli("demo", "--no-history")
    r = cli("demo", "-v", "--no-history")
    assert r.code == plain.code == 0
    assert f"golden    {kitebase / 'golden.json'} (12 questions)" in r.out
    assert "history   not recorded" in r.out
    assert len(r.out.splitlines()) > len(plain.out.splitlines())
    assert "golden    " not in plain.out


# ---------------------------------------------------------------- colour


def test_color_flags_win_over_no_color(cli, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    r = cli("demo", "--top-k", "1", "--no-history", "--color")
    assert ANSI.search(r.out) and "WORSE" in ANSI.sub("", r.out)
    monkeypatch.delenv("NO_COLOR")
    r = cli("demo", "--top-k", "1", "--no-history", "--no-color")
    assert not ANSI.search(r.out)


def test_the_colour_decision():
    environ = dict(os.environ)
    try:
        os.environ.pop("NO_COLOR", None)
        assert effective_color(None) is None  # the terminal decides
        os.environ["NO_COLOR"] = "1"
        assert effective_color(None) is False
        assert effective_color(True) is True
        os.environ["NO_COLOR"] = ""  # empty means unset (no-color.org)
        assert effective_color(None) is None
    finally:
        os.environ.clear()
        os.environ.update(environ)


def _on_a_terminal(args: list[str], env: dict[str, str], cwd: Path) -> str:
    """What `python -m ragrail ARGS` writes to a pseudo-terminal."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragrail", *args],
        stdout=follower,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=120)
    os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace")


def test_no_color_is_honoured_on_a_terminal(tmp_path):
    base = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    args = ["demo", "--top-k", "1", "--no-history"]
    coloured = _on_a_terminal(args, base, tmp_path)
    assert ANSI.search(coloured) and "WORSE" in coloured
    plain = _on_a_terminal(args, {**base, "NO_COLOR": "1"}, tmp_path)
    assert "WORSE" in plain and not ANSI.search(plain)


# ---------------------------------------------------------------- environment, completion, help


def test_options_come_from_ragrail_variables_and_a_flag_wins(cli, monkeypatch):
    monkeypatch.setenv("RAGRAIL_DEMO_TOP_K", "1")
    monkeypatch.setenv("RAGRAIL_DEMO_NO_HISTORY", "1")
    r = cli("demo")
    assert r.code == 1 and VERDICT in r.out
    r = cli("demo", "--top-k", "3")
    assert r.code == 0 and "No regressions." in r.out
    monkeypatch.setenv("RAGRAIL_RUN_TOP_K", "0")
    r = cli("run", "--example", "kitebase")
    assert r.code == 2 and "--top-k" in r.err


def test_shell_completion_comes_from_click(tmp_path):
    env = {**os.environ, "_RAGRAIL_COMPLETE": "bash_source"}
    script = subprocess.run(
        [sys.executable, "-m", "ragrail"], env=env, capture_output=True, text=True, timeout=60
    )
    assert script.returncode == 0 and "_RAGRAIL_COMPLETE=bash_complete" in script.stdout
    env = {
        **os.environ,
        "_RAGRAIL_COMPLETE": "bash_complete",
        "COMP_WORDS": "ragrail de",
        "COMP_CWORD": "1",
    }
    words = subprocess.run(
        [sys.executable, "-m", "ragrail"], env=env, capture_output=True, text=True, timeout=60
    )
    assert words.returncode == 0 and "plain,demo" in words.stdout


def test_help_loads_no_heavy_module():
    """`ragrail --help` stays fast: the commands import their work only when they run."""
    code = (
        "import sys\n"
        "from ragrail.cli import main\n"
        "try:\n    main(['--help'])\n"
        "except SystemExit as exc:\n    assert exc.code == 0\n"
        "heavy = ('pydantic', 'numpy', 'scipy', 'rich', 'httpx', 'anthropic', 'openai', "
        "'yaml', 'torch', 'sqlite3')\n"
        "commands = ('ragrail.cli.run', 'ragrail.cli.judge', 'ragrail.cli.interop')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy or m in commands))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"
    assert "run" in proc.stdout and "history" in proc.stdout


def test_the_help_listing_says_what_each_command_says_of_itself():
    """`ragrail --help` lists the commands without importing them: each summary must be
    the command's own."""
    from importlib import import_module

    import click

    from ragrail.cli.group import COMMANDS

    for name, (module, attribute, summary) in COMMANDS.items():
        command = getattr(import_module(module), attribute)
        assert command.name == name
        for limit in (40, 60, 200):
            listed = click.Command(name, help=summary).get_short_help_str(limit)
            assert listed == command.get_short_help_str(limit)
