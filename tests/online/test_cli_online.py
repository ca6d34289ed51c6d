"""`ragrail online` end to end: a LogStore filled with synthetic conversations."""

from __future__ import annotations

import json
from dataclasses import replace

from ragrail.online.store import LogStore
from tests.online.synth import Truth, synth


def make_db(path, flagged: bool = True):
    log = synth({"v1": (600, Truth()), "v2": (600, Truth(escalation=0.3))}, seed=7)
    if flagged:
        log[0] = replace(log[0], flags=("unfaithful",), question="<script>x</script>\x1b[31m")
    with LogStore(path) as store:
        store.add(log)
    return log


def test_signals_json_html_and_compare(cli, tmp_path):
    db = tmp_path / "logs.sqlite"
    make_db(db)
    r = cli("online", "--db", str(db), "--compare", "v1", "v2", "--json", "-",
            "--html", str(tmp_path / "o.html"))  # fmt: skip
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert data["schema"] == 1 and data["by"] == "week"
    assert {p["version"] for p in data["periods"]} == {"v1", "v2"}
    first = data["periods"][0]["signals"]
    assert set(first) >= {"escalation", "thumbs_down", "reask", "latency_p95"}
    assert all({"value", "n", "low", "high"} <= set(f) for f in first.values())
    esc = data["compare"]["rows"][0]
    assert esc["signal"] == "escalation" and esc["significant"] is True
    assert esc["low"] < esc["difference"] < esc["high"]
    assert data["flagged"]["total"] == 1
    assert "A/B: v2" in r.err and "SIGNIFICANT" in r.err  # text on stderr with --json -
    page = (tmp_path / "o.html").read_text()
    assert "<script>x" not in page and "&lt;script&gt;x" in page and "\x1b" not in page


def test_by_day_version_filter_and_json_file(cli, tmp_path):
    db = tmp_path / "logs.sqlite"
    make_db(db, flagged=False)
    out = tmp_path / "s.json"
    r = cli("online", "--db", str(db), "--by", "day", "--version", "v2", "--json", str(out))
    assert r.code == 0, r.err
    data = json.loads(out.read_text())
    assert {p["version"] for p in data["periods"]} == {"v2"}
    assert all(len(p["period"]) == 10 for p in data["periods"])  # 2026-11-27
    assert data["compare"] is None and "escalation" in r.out


def test_missing_database_and_unknown_versions_exit_2(cli, tmp_path):
    r = cli("online", "--db", str(tmp_path / "none.sqlite"))
    assert r.code == 2 and "ragrail logs ingest" in r.err
    assert not (tmp_path / "none.sqlite").exists()
    db = tmp_path / "logs.sqlite"
    make_db(db, flagged=False)
    before = db.read_bytes()
    out = tmp_path / "s.json"
    r = cli("online", "--db", str(db), "--compare", "v1", "v9", "--json", str(out))
    assert r.code == 2 and "v9" in r.err and "v1, v2" in r.err
    assert not out.exists() and db.read_bytes() == before
    r = cli("online", "--db", str(db), "--version", "nope")
    assert r.code == 2 and "nope" in r.err


def test_outputs_onto_inputs_or_one_version_twice_exit_2_and_write_nothing(cli, tmp_path):
    """--json/--html may not replace the log database, the golden set or the project file
    (they did, silently: the database was lost); --compare needs two versions."""
    (tmp_path / "ragrail.toml").write_text('golden = "golden.json"\n', encoding="utf-8")
    (tmp_path / "golden.json").write_text("[]", encoding="utf-8")
    db = tmp_path / ".ragrail" / "logs.sqlite"
    make_db(db, flagged=False)
    files = [db, tmp_path / "golden.json", tmp_path / "ragrail.toml"]
    before = [f.read_bytes() for f in files]
    for args, says in [
        (("--json", ".ragrail/logs.sqlite"), "the log database"),
        (("--html", ".ragrail/logs.sqlite"), "the log database"),
        (("--html", "golden.json"), "the golden set"),
        (("--json", "ragrail.toml"), "the project file"),
        (("--json", "o.json", "--html", "o.json"), "same file"),
        (("--compare", "v1", "v1", "--json", "o.json"), "two different versions"),
    ]:
        r = cli("online", *args, cwd=tmp_path)
        assert r.code == 2, (args, r.err)
        assert says in r.err and r.err.count("\n") == 1, (args, r.err)
        assert [f.read_bytes() for f in files] == before, args
        assert not (tmp_path / "o.json").exists()


def test_a_database_path_that_is_a_folder_exits_2(cli, tmp_path):
    folder = tmp_path / "logs.sqlite"
    folder.mkdir()
    for args in (("online", "--db", str(folder)), ("sample", "-n", "1", "-o",
                 str(tmp_path / "s.csv"), "--db", str(folder))):  # fmt: skip
        r = cli(*args)
        assert r.code == 2 and "directory" in r.err, r.err
    assert list(folder.iterdir()) == [] and not (tmp_path / "s.csv").exists()
