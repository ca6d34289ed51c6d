from __future__ import annotations

import pytest

from ragrail.fileio import atomic_write_text


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
