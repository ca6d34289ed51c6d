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
