"""Exit codes are a contract: 1 only from a verdict, 2 for usage and input, 3 for failures
(the system under test, the disk, ragrail itself), 130 for Ctrl-C; always one line."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import click
import pytest

import ragrail.golden
from ragrail import crash


@pytest.fixture
def reports(tmp_path, monkeypatch) -> Path:
    """Crash reports go to a folder of this test's own (via tempfile's own setting)."""
    folder = tmp_path / "reports"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.delenv("RAGRAIL_DEBUG", raising=False)
    return folder


def fail_with(monkeypatch, exc: BaseException) -> None:
    """Make loading the golden set, early in every run, raise ``exc``."""

    def boom(*args, **kwargs):
        raise exc

    monkeypatch.setattr(ragrail.golden, "load_golden", boom)


def only_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_an_unexpected_exception_is_one_line_exit_3_and_a_full_report(
    cli, project, reports, monkeypatch
):
    fail_with(monkeypatch, ValueError("boom\nwith a second line"))
    before = (project / "baseline.json").read_bytes()
    r = cli("run", "--save-baseline", cwd=project)
    assert r.code == 3
    line = only_line(r.err)
    assert line.startswith(
        "ragrail: internal error: ValueError: boom with a second line (full report: "
    )
    path = Path(line.split("(full report: ")[1].rstrip(")"))
    assert path.parent == reports and path.name.startswith("ragrail-crash-")
    report = path.read_text()
    assert "Traceback (most recent call last)" in report and "in boom" in report
    assert "ValueError: boom" in report and "command: ragrail run --save-baseline" in report
    assert path.stat().st_mode & 0o077 == 0  # tracebacks are for the user, not other accounts
    assert (project / "baseline.json").read_bytes() == before


def test_ragrail_debug_prints_the_traceback_instead(cli, project, reports, monkeypatch):
    fail_with(monkeypatch, KeyError("missing"))
    monkeypatch.setenv("RAGRAIL_DEBUG", "1")
    r = cli("run", cwd=project)
    assert r.code == 3
    assert "Traceback (most recent call last)" in r.err and "in boom" in r.err
    assert r.err.strip().splitlines()[-1] == "ragrail: internal error: KeyError: 'missing'"
    assert list(reports.iterdir()) == []


def test_with_nowhere_to_write_a_report_it_is_still_one_line(cli, project, monkeypatch):
    fail_with(monkeypatch, RuntimeError("boom"))
    monkeypatch.delenv("RAGRAIL_DEBUG", raising=False)
    nowhere = project / "golden.json" / "not-a-folder"  # under a file: mkdir always fails
    monkeypatch.setattr(crash, "report_dirs", lambda: [nowhere])
    r = cli("run", cwd=project)
    assert r.code == 3
    assert only_line(r.err) == (
        "ragrail: internal error: RuntimeError: boom "
        "(no report could be written; RAGRAIL_DEBUG=1 prints the traceback)"
    )


@pytest.mark.parametrize("code", [0, 1, 2, None, "text"])
def test_a_stray_sys_exit_is_never_a_verdict(cli, project, reports, monkeypatch, code):
    def exits(*args, **kwargs):
        sys.exit(code)

    monkeypatch.setattr(ragrail.golden, "load_golden", exits)
    r = cli("run", cwd=project)
    assert r.code == 3
    line = only_line(r.err)
    assert line.startswith(f"ragrail: internal error: sys.exit({code!r}) was called at ")
    assert "test_exit_contract.py:" in line and "no verdict was reached" in line


def test_exit_1_still_comes_from_a_regression(cli, project):
    r = cli("run", "--top-k", "1", cwd=project)
    assert r.code == 1, r.out + r.err


def test_keyboard_interrupt_anywhere_is_130(cli, project, monkeypatch):
    fail_with(monkeypatch, KeyboardInterrupt())
    r = cli("run", cwd=project)
    assert r.code == 130
    assert only_line(r.err) == "ragrail: interrupted"


def test_ctrl_c_during_a_hung_target_is_130(cli, project):
    (project / "hangs_forever.py").write_text("import time\ndef answer(q):\n    time.sleep(60)\n")
    cfg = project / "ragrail.toml"
    table = '[system]\nkind = "python"\ntarget = "hangs_forever:answer"\n'
    cfg.write_text(cfg.read_text().replace("[pipeline]", table + "\n[pipeline]"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragrail", "run"],
        cwd=project,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(3)  # started, and waiting on the first question
    proc.send_signal(signal.SIGINT)
    err = proc.communicate(timeout=20)[1]
    assert proc.returncode == 130
    assert only_line(err) == "ragrail: interrupted"


def test_sigterm_during_a_hung_target_is_130_in_one_line(project):
    """A cancelled CI job sends SIGTERM: the run ends as on Ctrl-C, saying so, and
    writes nothing (no --json, no temp file beside it)."""
    (project / "hangs_too.py").write_text("import time\ndef answer(q):\n    time.sleep(60)\n")
    cfg = project / "ragrail.toml"
    table = '[system]\nkind = "python"\ntarget = "hangs_too:answer"\n'
    cfg.write_text(cfg.read_text().replace("[pipeline]", table + "\n[pipeline]"))
    before = sorted(p.name for p in project.iterdir())
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragrail", "run", "--no-history", "--json", "out.json"],
        cwd=project,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(3)  # started, and waiting on the first question
    proc.send_signal(signal.SIGTERM)
    err = proc.communicate(timeout=20)[1]
    assert proc.returncode == 130
    assert only_line(err) == "ragrail: terminated (SIGTERM)"
    assert sorted(p.name for p in project.iterdir()) == before


def test_sigterm_in_the_middle_of_saving_a_baseline_leaves_no_temp_file(cli, project, monkeypatch):
    """The signal lands after the temp file is written and before the rename: the old
    baseline stays, the temp file goes, the exit code is 130."""
    import ragrail.fileio

    before = (project / "baseline.json").read_bytes()
    handler = signal.getsignal(signal.SIGTERM)
    real_fsync = os.fsync

    def fsync_then_sigterm(fd: int) -> None:
        real_fsync(fd)
        os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(ragrail.fileio.os, "fsync", fsync_then_sigterm)
    r = cli("run", "--top-k", "1", "--save-baseline", "--no-history", cwd=project)
    assert r.code == 130, r.err
    assert "ragrail: terminated (SIGTERM)" in r.err
    assert (project / "baseline.json").read_bytes() == before
    assert not list(project.glob(".baseline.json.*"))
    assert signal.getsignal(signal.SIGTERM) == handler  # put back as it was


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO, errno.EROFS, errno.EDQUOT])
def test_a_failing_disk_is_exit_3_in_one_line(cli, project, reports, monkeypatch, code):
    fail_with(monkeypatch, OSError(code, os.strerror(code), "results.json"))
    r = cli("run", cwd=project)
    assert r.code == 3
    assert (
        only_line(r.err)
        == f"ragrail: error: cannot write to disk: results.json: {os.strerror(code)}"
    )
    assert list(reports.iterdir()) == []  # not a bug: no report


def test_a_folder_copy_that_fills_the_disk_is_exit_3_in_one_line(cli, project, reports, monkeypatch):
    """shutil.copytree gathers its failures in one shutil.Error: on a full disk that is
    the disk failing, named by its first file, not an internal error listing them all."""
    import shutil

    failures = [
        (f"src/{n}.md", f"dst/{n}.md", f"[Errno 28] No space left on device: 'src/{n}.md'")
        for n in ("a", "b", "c")
    ]
    fail_with(monkeypatch, shutil.Error(failures))
    r = cli("run", cwd=project)
    assert r.code == 3
    assert only_line(r.err) == (
        "ragrail: error: cannot write to disk: dst/a.md: No space left on device (and 2 more)"
    )
    assert list(reports.iterdir()) == []  # not a bug: no report


@pytest.mark.parametrize("code", [errno.EACCES, errno.EISDIR, errno.ENOTDIR])
def test_an_unusable_path_is_exit_2_naming_it(cli, project, reports, monkeypatch, code):
    fail_with(monkeypatch, OSError(code, os.strerror(code), "out/x.json"))
    r = cli("run", cwd=project)
    assert r.code == 2
    assert only_line(r.err) == f"ragrail: error: out/x.json: {os.strerror(code)}"


@pytest.mark.parametrize(
    ("exc", "message"),
    [
        (RecursionError("maximum recursion depth exceeded"), "input nested too deeply"),
        (MemoryError(), "out of memory"),
    ],
)
def test_recursion_and_memory_errors_are_exit_3_in_one_line(
    cli, project, reports, monkeypatch, exc, message
):
    fail_with(monkeypatch, exc)
    r = cli("run", cwd=project)
    assert r.code == 3
    assert only_line(r.err).startswith(f"ragrail: error: {message}")


def test_a_deleted_current_folder_is_exit_2_in_one_line(tmp_path, capsys):
    from ragrail.cli import main

    gone = tmp_path / "gone"
    gone.mkdir()
    os.chdir(gone)
    gone.rmdir()
    try:
        with pytest.raises(SystemExit) as exc:
            main(["run"])
    finally:
        os.chdir(tmp_path)
    assert exc.value.code == 2
    assert only_line(capsys.readouterr().err) == (
        "ragrail: error: the current folder was deleted while ragrail ran; "
        "cd to a folder that exists"
    )


def test_a_closed_stdout_is_exit_3_not_a_regression(project):
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragrail", "run", "--no-history"],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    proc.stdout.close()  # the reader is gone before the first line is written
    err = proc.communicate(timeout=60)[1]
    assert proc.returncode == 3
    assert only_line(err) == (
        "ragrail: error: the output was closed before ragrail finished (broken pipe)"
    )


def test_usage_errors_stay_2(cli, project, monkeypatch):
    r = cli("run", "--no-such-flag")
    assert r.code == 2 and "'--no-such-flag'" in only_line(r.err)
    fail_with(monkeypatch, click.FileError("golden.json", "locked"))  # click's own exit code is 1
    r = cli("run", cwd=project)
    assert r.code == 2
    assert only_line(r.err) == "ragrail: error: Could not open file 'golden.json': locked"


def test_end_of_input_is_a_crash_not_an_interrupt(cli, project, reports, monkeypatch):
    fail_with(monkeypatch, EOFError("stdin closed"))  # click turns EOFError into Abort too
    r = cli("run", cwd=project)
    assert r.code == 3
    assert only_line(r.err).startswith("ragrail: internal error: EOFError: stdin closed")


# ------------------------------------------------------------- non-finite numbers


@pytest.mark.parametrize(
    ("flag", "value", "needle"),
    [
        ("--min-score", "nan", "'nan' is not a finite number"),
        ("--min-score", "inf", "--min-score"),
        ("--timeout", "nan", "'nan' is not a finite number"),
        ("--timeout", "inf", "'inf' is not a finite number"),
        ("--timeout", "Infinity", "'Infinity' is not a finite number"),
        ("--timeout", "-inf", "--timeout"),
    ],
)
def test_non_finite_float_flags_are_usage_errors(cli, project, flag, value, needle):
    before = (project / "baseline.json").read_bytes()
    r = cli("run", "--save-baseline", f"{flag}={value}", cwd=project)
    assert r.code == 2
    line = only_line(r.err)
    assert line.startswith("ragrail: error: Invalid value for") and needle in line
    assert (project / "baseline.json").read_bytes() == before
    # no state: only the .gitignore that `ragrail example` wrote
    assert [p.name for p in (project / ".ragrail").iterdir()] == [".gitignore"]


@pytest.mark.parametrize(
    ("old", "new", "key"),
    [
        ("min_score = 0.2", "min_score = nan", "pipeline.min_score"),
        ('name = "standin"', 'name = "standin"\ntimeout = inf', "answerer.timeout"),
        ('name = "standin"', 'name = "standin"\ntemperature = -nan', "answerer.temperature"),
        (
            'retriever = "standin"',
            'retriever = "standin"\n\n[prices.m]\ninput = 1.0\noutput = +inf',
            "prices.m.output",
        ),
        (
            'retriever = "standin"',
            'retriever = "standin"\n\n[system]\nbody = {weights = [1.0, nan]}',
            "system.body.weights.1",
        ),
    ],
)
def test_non_finite_numbers_in_the_config_are_refused_naming_the_key(cli, project, old, new, key):
    cfg = project / "ragrail.toml"
    assert old in cfg.read_text()
    cfg.write_text(cfg.read_text().replace(old, new, 1))
    before = (project / "baseline.json").read_bytes()
    r = cli("run", "--save-baseline", cwd=project)
    assert r.code == 2, r.out + r.err
    line = only_line(r.err)
    assert "ragrail.toml: key " + repr(key) + ":" in line and "is not a finite number" in line
    assert (project / "baseline.json").read_bytes() == before


def test_describe_keeps_messages_on_one_short_line():
    long = crash.describe(RuntimeError("a\x1b[31m\n" + "x" * 1000))
    assert long.code == 3 and long.internal
    assert "\n" not in long.message and "\x1b" not in long.message and "\\x1b" in long.message
    assert len(long.message) <= crash.MESSAGE_LIMIT + len("RuntimeError: ")
