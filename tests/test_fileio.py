from __future__ import annotations

import errno
import json
import os
import stat
import time
from contextlib import suppress
from pathlib import Path

import pytest

from ragrail.errors import InputError, SystemFailure
from ragrail.fileio import atomic_write_text, check_writable_output
from tests.helpers import tree_state


class Boom(Exception):
    pass


def test_atomic_write_replaces_whole_file(tmp_path):
    path = tmp_path / "sub" / "baseline.json"
    atomic_write_text(path, "one")
    atomic_write_text(path, "two")
    assert path.read_text() == "two"
    assert [p.name for p in path.parent.iterdir()] == ["baseline.json"]


def test_failed_write_leaves_old_file_and_no_temp(tmp_path, monkeypatch):
    path = tmp_path / "baseline.json"
    path.write_text("old")

    def broken_replace(src, dst):
        raise Boom

    monkeypatch.setattr("ragrail.fileio.os.replace", broken_replace)
    with pytest.raises(Boom):
        atomic_write_text(path, "new")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["baseline.json"]


# ---------------------------------------------------------------- where a write lands


def test_write_through_a_symlink_updates_its_target_and_keeps_the_link(tmp_path):
    real = tmp_path / "kept" / "base.json"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "baseline.json"
    link.symlink_to("kept/base.json")
    atomic_write_text(link, "new")
    assert link.is_symlink() and os.readlink(link) == "kept/base.json"
    assert real.read_text() == "new"
    assert sorted(p.name for p in real.parent.iterdir()) == ["base.json"]  # no temp left


def test_write_through_a_chain_of_links_and_a_dangling_one(tmp_path):
    real = tmp_path / "real.json"
    (tmp_path / "b.json").symlink_to("real.json")
    (tmp_path / "a.json").symlink_to("b.json")
    atomic_write_text(tmp_path / "a.json", "via a chain")
    assert real.read_text() == "via a chain"  # the dangling chain's target is created
    assert (tmp_path / "a.json").is_symlink() and (tmp_path / "b.json").is_symlink()


def test_a_write_keeps_the_mode_of_the_file_it_replaces(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("old")
    path.chmod(0o640)
    atomic_write_text(path, "new")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def _device(tmp_path: Path) -> Path:
    """A character device like /dev/null, made where replacing it by mistake harms nothing."""
    node = tmp_path / "null"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, AttributeError):
        pytest.skip("making a device node needs root")
    return node


@pytest.mark.parametrize("kind", ["folder", "fifo", "device", "loop", "under-a-file"])
def test_outputs_that_are_not_files_are_refused_before_writing(tmp_path, kind):
    path = tmp_path / "out"
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path = _device(tmp_path)
    elif kind == "loop":
        path.symlink_to("out2")
        (tmp_path / "out2").symlink_to("out")
    else:
        (tmp_path / "file").write_text("x")
        path = tmp_path / "file" / "out.json"
    before = sorted(os.listdir(tmp_path))
    for call in (check_writable_output, lambda p, w: atomic_write_text(p, "text", w)):
        with pytest.raises(InputError) as info:
            call(path, "report")
        assert info.value.where == str(path)
        assert "report" in str(info.value)
    assert sorted(os.listdir(tmp_path)) == before  # nothing replaced, no temp left
    if kind == "fifo":
        assert stat.S_ISFIFO(path.lstat().st_mode)
    if kind == "device":
        assert stat.S_ISCHR(path.lstat().st_mode)


def test_the_refusal_names_what_the_path_is(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "link").symlink_to("pipe")
    with pytest.raises(InputError, match="named pipe") as info:
        check_writable_output(tmp_path / "link", "report")
    assert "a link to" in str(info.value)
    with pytest.raises(InputError, match="is a folder"):
        check_writable_output(tmp_path, "report")
    with pytest.raises(InputError, match="is a device"):
        check_writable_output(_device(tmp_path), "report")


def test_an_unwritable_folder_is_refused_up_front(tmp_path, monkeypatch):
    # tests run as root, which ignores permission bits: stand in for a read-only folder
    monkeypatch.setattr("ragrail.fileio.os.access", lambda path, mode: False)
    with pytest.raises(InputError, match="cannot write the baseline: folder"):
        check_writable_output(tmp_path / "new" / "baseline.json", "baseline")


def test_a_new_file_in_new_folders_is_fine(tmp_path):
    path = tmp_path / "deep" / "er" / "out.json"
    assert check_writable_output(path) == path
    atomic_write_text(path, "ok")
    assert path.read_text() == "ok"


# ---------------------------------------------------------------- failures while writing


def _fail_with(code: int):
    def fail(*args: object, **kwargs: object) -> None:
        raise OSError(code, os.strerror(code))

    return fail


@pytest.mark.parametrize(
    ("code", "error", "exit_code"),
    [
        (errno.ENOSPC, SystemFailure, 3),
        (errno.EIO, SystemFailure, 3),
        (errno.EDQUOT, SystemFailure, 3),
        (errno.EACCES, InputError, 2),
        (errno.EROFS, InputError, 2),
    ],
)
def test_a_failed_write_keeps_the_old_file_and_no_temp(
    tmp_path, monkeypatch, code, error, exit_code
):
    path = tmp_path / "baseline.json"
    path.write_bytes(b"old bytes")
    monkeypatch.setattr("ragrail.fileio.os.fsync", _fail_with(code))
    with pytest.raises(error) as info:
        atomic_write_text(path, "new", "baseline")
    assert info.value.exit_code == exit_code
    assert str(path) in str(info.value) and os.strerror(code) in str(info.value)
    assert "\n" not in str(info.value)
    assert path.read_bytes() == b"old bytes"
    assert os.listdir(tmp_path) == ["baseline.json"]


def test_a_temp_file_that_cannot_be_made_is_an_error_naming_the_path(tmp_path, monkeypatch):
    monkeypatch.setattr("ragrail.fileio.tempfile.mkstemp", _fail_with(errno.ENOSPC))
    with pytest.raises(SystemFailure, match="No space left") as info:
        atomic_write_text(tmp_path / "out.json", "x", "--json results")
    assert str(tmp_path / "out.json") in str(info.value)
    assert os.listdir(tmp_path) == []


def test_an_interrupted_write_leaves_no_temp(tmp_path, monkeypatch):
    path = tmp_path / "out.json"

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("ragrail.fileio.os.replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_text(path, "x")
    assert os.listdir(tmp_path) == []


def test_stale_temp_files_are_removed_on_the_next_write(tmp_path):
    old = tmp_path / ".baseline.json.k1ll3d.tmp"
    young = tmp_path / ".baseline.json.wr1t1ng.tmp"  # may be another process's write
    other = tmp_path / ".golden.json.k1ll3d.tmp"
    for p in (old, young, other):
        p.write_text("partial")
    hours_ago = time.time() - 2 * 3600
    os.utime(old, (hours_ago, hours_ago))
    os.utime(other, (hours_ago, hours_ago))
    atomic_write_text(tmp_path / "baseline.json", "new")
    assert sorted(os.listdir(tmp_path)) == sorted([young.name, other.name, "baseline.json"])


# ---------------------------------------------------------------- through the CLI


def test_save_baseline_through_a_symlink_updates_the_target(cli, project):
    kept = project / "kept"
    kept.mkdir()
    (project / "baseline.json").rename(kept / "base.json")
    (project / "baseline.json").symlink_to("kept/base.json")
    old = (kept / "base.json").read_bytes()
    # another top_k, so the accepted run differs (an unchanged one rewrites the same bytes)
    r = cli("run", "--top-k", "2", "--save-baseline", cwd=project)
    assert r.code == 0, r.err
    assert (project / "baseline.json").is_symlink()
    assert os.readlink(project / "baseline.json") == "kept/base.json"
    new = (kept / "base.json").read_bytes()
    assert new != old and json.loads(new)["config"]["top_k"] == 2
    assert sorted(os.listdir(kept)) == ["base.json"]


@pytest.mark.parametrize("kind", ["folder", "fifo", "device"])
@pytest.mark.parametrize(
    "args",
    [
        ("report", "-o"),
        ("run", "--json"),
        ("run", "--junit"),
        ("run", "--markdown"),
        ("run", "--save-baseline", "--baseline"),
    ],
)
def test_cli_refuses_outputs_that_are_not_files_before_any_work(cli, project, kind, args):
    out = project / "out"
    if kind == "folder":
        out.mkdir()
    elif kind == "fifo":
        os.mkfifo(out)
    else:
        out = _device(project)
    reader = os.open(out, os.O_RDONLY | os.O_NONBLOCK) if kind == "fifo" else None
    before = tree_state(project)
    try:
        r = cli(*args, str(out), cwd=project)
        if reader is not None:
            # EOF, or "would block" (a writer still open): either way the reader got nothing
            with suppress(BlockingIOError):
                assert os.read(reader, 100) == b""
    finally:
        if reader is not None:
            os.close(reader)
    assert r.code == 2, r.out + r.err
    [line] = [ln for ln in r.err.splitlines() if ln.strip()]
    assert line.startswith("ragrail: error: ") and str(out) in line
    assert "Traceback" not in r.err and "recorded as run" not in r.err
    assert tree_state(project) == before  # no run recorded, no file replaced


def test_cli_full_disk_while_saving_the_baseline_exits_3_and_keeps_it(cli, project, monkeypatch):
    before = (project / "baseline.json").read_bytes()
    monkeypatch.setattr("ragrail.fileio.os.fsync", _fail_with(errno.ENOSPC))
    r = cli("run", "--save-baseline", cwd=project)
    assert r.code == 3, r.out + r.err
    [line] = [ln for ln in r.err.splitlines() if ln.startswith("ragrail: error")]
    assert "baseline.json" in line and "No space left on device" in line
    assert "Traceback" not in r.err
    assert (project / "baseline.json").read_bytes() == before
    assert not list(project.glob(".baseline.json.*"))


def test_cli_report_through_a_symlink(cli, project):
    assert cli("run", cwd=project).code == 0
    (project / "reports").mkdir()
    (project / "report.html").symlink_to("reports/latest.html")
    r = cli("report", "-o", "report.html", cwd=project)
    assert r.code == 0, r.err
    assert (project / "report.html").is_symlink()
    assert (project / "reports" / "latest.html").read_text().startswith("<!")
