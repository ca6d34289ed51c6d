"""Bad input: one clear line on stderr, exit 2, no traceback, nothing half-written."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from tests.helpers import one_error_line, run_shell


def test_malformed_golden_names_file_line_and_column(cli, project):
    golden = project / "golden.json"
    text = golden.read_text().splitlines()
    text[3] = text[3].replace('"question":', '"question"')  # drop a colon on line 4
    golden.write_text("\n".join(text))
    before = (project / "baseline.json").read_bytes()
    r = cli("run", "--save-baseline", cwd=project)
    assert r.code == 2
    line = one_error_line(r.err)
    assert "golden.json:4:" in line and "invalid JSON" in line
    assert (project / "baseline.json").read_bytes() == before


def test_missing_golden_file(cli, project):
    (project / "golden.json").unlink()
    r = cli("run", cwd=project)
    assert r.code == 2
    assert "golden.json: golden set not found" in one_error_line(r.err)


def test_case_without_question_names_case_and_line(cli, project):
    cases = json.loads((project / "golden.json").read_text())
    del cases[2]["question"]
    (project / "golden.json").write_text(json.dumps(cases, indent=1))
    r = cli("run", cwd=project)
    assert r.code == 2
    line = one_error_line(r.err)
    assert "case 'lost-phone'" in line and "missing field 'question'" in line
    assert re.search(r"golden\.json:\d+:", line)


def test_empty_question_and_duplicate_id(cli, project):
    cases = json.loads((project / "golden.json").read_text())
    cases[0]["question"] = "   "
    (project / "golden.json").write_text(json.dumps(cases))
    r = cli("run", cwd=project)
    assert r.code == 2 and "field 'question': must not be empty" in one_error_line(r.err)

    cases[0]["question"] = "ok?"
    cases[1]["id"] = cases[0]["id"]
    (project / "golden.json").write_text(json.dumps(cases))
    r = cli("run", cwd=project)
    assert r.code == 2 and "duplicate case id 'no-recovery-email'" in one_error_line(r.err)


def test_malformed_baseline_is_reported_and_left_untouched(cli, project):
    baseline = project / "baseline.json"
    baseline.write_text('{"schema_version": 1,\n  "config": [\n')
    before = baseline.read_bytes()
    r = cli("run", "--save-baseline", cwd=project)
    assert r.code == 2
    line = one_error_line(r.err)
    assert "baseline.json:3:" in line
    assert baseline.read_bytes() == before


def test_baseline_with_wrong_schema(cli, project):
    (project / "baseline.json").write_text('{"schema_version": 99}')
    r = cli("run", cwd=project)
    assert r.code == 2
    assert "schema_version 99" in one_error_line(r.err)


@pytest.mark.parametrize(
    ("flag", "value", "needle"),
    [
        ("--top-k", "0", "--top-k"),
        ("--chunk-words", "-3", "--chunk-words"),
        ("--min-score", "2", "--min-score"),
    ],
)
def test_out_of_range_flags(cli, project, flag, value, needle):
    before = (project / "baseline.json").read_bytes()
    r = cli("run", flag, value, "--save-baseline", cwd=project)
    assert r.code == 2
    assert needle in one_error_line(r.err)
    assert (project / "baseline.json").read_bytes() == before


def test_no_project_here(cli, tmp_path):
    r = cli("run", cwd=tmp_path)
    assert r.code == 2
    assert "no ragrail.toml in this folder" in one_error_line(r.err)


def test_unknown_config_key(cli, project):
    cfg = project / "ragrail.toml"
    cfg.write_text(cfg.read_text().replace("top_k = 3", "topk = 3"))
    r = cli("run", cwd=project)
    assert r.code == 2
    assert "unknown key 'pipeline.topk'" in one_error_line(r.err)


def test_missing_docs_folder(cli, project):
    shutil.rmtree(project / "docs")
    r = cli("run", cwd=project)
    assert r.code == 2
    assert "documents folder not found" in one_error_line(r.err)


def test_errors_in_a_real_shell_have_no_traceback(project):
    r = run_shell("run", "--top-k", "0", cwd=project)
    assert r.code == 2
    one_error_line(r.err)
    r = run_shell("run", "--golden", "nope.json", cwd=project)
    assert r.code == 2
    assert "nope.json: golden set not found" in one_error_line(r.err)


@pytest.mark.parametrize(
    ("flag", "what"),
    [("--json", "--json results"), ("--junit", "--junit report"), ("--markdown", "--markdown summary")],
)
def test_a_failed_output_write_names_the_output_it_was(cli, project, monkeypatch, flag, what):
    """A full disk while writing an output: exit 3, naming which output (not "the output"),
    and no temp file left beside it."""
    import errno
    import os

    import ragrail.fileio

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(ragrail.fileio.os, "fsync", full)
    r = cli("run", "--no-history", flag, "out.file", cwd=project)
    assert r.code == 3, r.err
    line = one_error_line(r.err)
    assert f"cannot write the {what}: No space left on device" in line
    assert not (project / "out.file").exists()
    assert not list(project.glob(".out.file.*"))


def test_batch_on_a_run_that_calls_no_model_is_exit_2(cli, project):
    before = sorted(p.name for p in project.rglob("*"))
    r = cli("run", "--batch", cwd=project)  # the stand-in answers and no judge is set
    assert r.code == 2
    line = one_error_line(r.err)
    assert "--batch" in line and "makes none" in line
    assert sorted(p.name for p in project.rglob("*")) == before


def test_a_results_file_that_does_not_exist_is_named(cli, project):
    r = cli("label", "--run", "nope.json", "--labels", "l.csv", "--labeller", "me", cwd=project)
    assert r.code == 2
    assert "nope.json: no such results file" in one_error_line(r.err)
    assert not (project / "l.csv").exists()
