"""`ragrail init` and `ragrail example`: the files they write, the state folder git never
sees, and what they refuse."""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml

from ragrail import scaffold
from ragrail.scaffold import InstallSource

REACHABLE = InstallSource("ragrail @ git+https://example.org/r.git@abc", "git", True)
LOCAL = InstallSource("ragrail==0.1.0", "an editable install of a local folder", False)


@pytest.fixture
def source(monkeypatch: pytest.MonkeyPatch):
    """Pin where `init` and `example` think ragrail came from."""

    def pin(value: InstallSource) -> None:
        monkeypatch.setattr(scaffold, "installed_source", lambda: value)

    pin(REACHABLE)
    return pin


def tree(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_init_writes_no_placeholder_document(cli, tmp_path, source):
    r = cli("init", cwd=tmp_path)
    assert r.code == 0, r.err
    assert tree(tmp_path) == [
        ".github",
        ".github/workflows",
        ".github/workflows/evals.yml",
        ".ragrail",
        ".ragrail/.gitignore",
        "docs",
        "golden.json",
        "ragrail.toml",
    ]
    assert (tmp_path / ".ragrail" / ".gitignore").read_text() == "*\n"
    assert r.err == ""  # a reachable install source: nothing to warn about
    workflow = yaml.safe_load((tmp_path / ".github" / "workflows" / "evals.yml").read_text())
    assert workflow["env"]["RAGRAIL_SPEC"] == REACHABLE.spec
    # the starter case fits any documents: an off-topic question nothing answers
    (case,) = json.loads((tmp_path / "golden.json").read_text())
    assert case["sources"] == [] and case["facts"] == []


def test_a_new_project_says_it_needs_documents_then_lints_clean(cli, tmp_path, source):
    cli("init", cwd=tmp_path)
    r = cli("lint", cwd=tmp_path)
    assert r.code == 2 and "docs" in r.err and "no documents" in r.err
    (tmp_path / "docs" / "returns.md").write_text("# Returns\n\nReturn any item within 30 days.\n")
    r = cli("add", "--id", "returns", "-q", "How long can I return items?", "-s", "returns",
            "-f", "30 days", cwd=tmp_path)  # fmt: skip
    assert r.code == 0, r.err
    r = cli("lint", cwd=tmp_path)
    assert r.code == 0 and "warning" not in r.out + r.err, r.out + r.err
    r = cli("run", "--save-baseline", cwd=tmp_path)
    assert r.code == 0, r.out + r.err
    assert "off-topic-weather  -          pass" in r.out  # the starter case passes as it is
    assert "(2 of 2)" in r.out


def test_init_keeps_existing_documents_and_state_rules(cli, tmp_path, source):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "mine.md").write_text("# Mine\n\ntext\n")
    (tmp_path / ".ragrail").mkdir()
    (tmp_path / ".ragrail" / ".gitignore").write_text("history.sqlite\n")
    r = cli("init", cwd=tmp_path)
    assert r.code == 0, r.err
    assert [p.name for p in (tmp_path / "docs").iterdir()] == ["mine.md"]
    assert (tmp_path / ".ragrail" / ".gitignore").read_text() == "history.sqlite\n"


@pytest.mark.parametrize("existing", ["ragrail.toml", ".github/workflows/evals.yml"])
def test_init_refuses_to_overwrite_and_writes_nothing(cli, tmp_path, source, existing):
    (tmp_path / existing).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / existing).write_text("mine")
    before = tree(tmp_path)
    r = cli("init", cwd=tmp_path)
    assert r.code == 2 and "would overwrite" in r.err and existing in r.err
    assert len(r.err.strip().splitlines()) == 1
    assert tree(tmp_path) == before and (tmp_path / existing).read_text() == "mine"


def test_init_refuses_a_file_where_its_folder_goes(cli, tmp_path, source):
    (tmp_path / "file").write_text("a file")
    r = cli("init", "file", cwd=tmp_path)
    assert r.code == 2 and "file: is not a folder" in r.err and "Traceback" not in r.err
    assert tree(tmp_path) == ["file"]


def test_init_refuses_a_file_named_docs(cli, tmp_path, source):
    (tmp_path / "docs").write_text("a file")
    r = cli("init", cwd=tmp_path)
    assert r.code == 2 and "docs: is not a folder" in r.err
    assert tree(tmp_path) == ["docs"]


def test_an_unreachable_install_source_is_one_warning(cli, tmp_path, source):
    source(LOCAL)
    r = cli("init", cwd=tmp_path)
    assert r.code == 0
    (line,) = r.err.strip().splitlines()
    assert line.startswith("ragrail: warning:") and "RAGRAIL_SPEC" in line
    assert "not on PyPI" in line
    text = (tmp_path / ".github" / "workflows" / "evals.yml").read_text()
    assert f"#   {LOCAL.origin}\n" in text


def test_example_writes_the_workflow_and_state_rules(cli, tmp_path, source):
    dest = tmp_path / "kb"
    r = cli("example", "kitebase", str(dest), cwd=tmp_path)
    assert r.code == 0, r.err
    assert (dest / ".ragrail" / ".gitignore").read_text() == "*\n"
    assert not (dest / "evals.yml").exists()  # only under .github/workflows
    workflow = yaml.safe_load((dest / ".github" / "workflows" / "evals.yml").read_text())
    assert workflow["env"]["RAGRAIL_SPEC"] == REACHABLE.spec


def test_git_never_sees_the_state_folder(cli, tmp_path, source):
    dest = tmp_path / "kb"
    cli("example", "kitebase", str(dest), cwd=tmp_path)
    subprocess.run(["git", "init", "-q"], cwd=dest, check=True)
    assert cli("run", cwd=dest).code == 0
    assert (dest / ".ragrail" / "history.sqlite").is_file()
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=dest,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert ".github/workflows/evals.yml" in status and "golden.json" in status
    assert ".ragrail" not in status


@pytest.mark.parametrize("existing_empty", [False, True])
def test_a_disk_that_fills_during_example_leaves_no_half_copy(
    cli, tmp_path, source, monkeypatch, existing_empty
):
    import errno
    import os
    import shutil

    # copytree's default copy2 looks copyfile up at call time: patch that
    real_copy = shutil.copyfile
    copied: list[str] = []

    def copy_then_fill(src, dst, *args, **kwargs):
        if len(copied) == 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))
        copied.append(str(dst))
        return real_copy(src, dst, *args, **kwargs)

    monkeypatch.setattr(shutil, "copyfile", copy_then_fill)
    dest = tmp_path / "kb"
    if existing_empty:
        dest.mkdir()
    r = cli("example", "kitebase", str(dest))
    assert r.code == 3, r.err
    assert len(copied) == 3  # the copy really was cut short
    # nothing half-copied: dest is as it was, and no staging folder is left beside it
    assert (list(dest.iterdir()) == []) if existing_empty else not dest.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == (["kb"] if existing_empty else [])


def test_example_copies_whole_with_ordinary_permissions(cli, tmp_path, source):
    dest = tmp_path / "kb"
    assert cli("example", "kitebase", str(dest)).code == 0
    assert (dest / "golden.json").is_file() and (dest / "baseline.json").stat().st_size > 0
    assert dest.stat().st_mode & 0o777 == 0o777 & ~_umask()
    assert [p.name for p in tmp_path.iterdir()] == ["kb"]


def _umask() -> int:
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask
