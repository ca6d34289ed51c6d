"""Corrected judged totals against hostile input: a damaged history under --no-history,
hand-edited corrections in results files and history rows, names that would break the
terminal, labels that count an answer twice, a validation with nothing to measure, and
shards corrected by different validations. Each is one line and its exit code, never a
traceback, and no state file changed where none should."""

from __future__ import annotations

import copy
import json
import re
import sqlite3
import warnings
from pathlib import Path

import pytest

from ragrail.errors import InputError
from ragrail.judge.core import judge_totals
from ragrail.judge.correct import merge_corrections
from ragrail.judge.validate import load_labels
from ragrail.records.results import RunResult
from ragrail.reports.terminal.scorecard import judged_total_lines
from tests.fake_llm import FakeLLM, Reply
from tests.judge.test_correct import RUN, corrected_run
from tests.judge.test_correct_cli import HUMAN, LABELLED, judge_script, project

JUDGE = ("--judge", "claude", "--judge-base-url")


@pytest.fixture(autouse=True)
def env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-judge-test-key")


def write_labels(path: Path, ids=LABELLED) -> Path:
    path.write_text(
        "case_id,criterion,verdict\n"
        + "".join(f"q{i:02d},polite,{'pass' if HUMAN[i] else 'fail'}\n" for i in ids)
    )
    return path


def validated(cli, tmp_path: Path, url: str) -> Path:
    """A project run once and its judge validated on 20 labels."""
    dest = project(tmp_path / "p")
    assert cli("run", *JUDGE, url, cwd=dest).code == 0
    labels = write_labels(tmp_path / "labels.csv")
    r = cli("judge", "validate", "--labels", str(labels), *JUDGE, url, cwd=dest)
    assert r.code == 0, r.out + r.err
    return dest


def test_no_history_run_reads_a_damaged_history_without_moving_it(cli, tmp_path):
    """Reading the labels is a read: with --no-history a damaged history stays where and
    as it is (recording, which --no-history skips, is what sets one aside)."""
    with FakeLLM(judge_script) as fake:
        dest = validated(cli, tmp_path, fake.url)
        history = dest / ".ragrail" / "history.sqlite"
        history.write_bytes(history.read_bytes()[: history.stat().st_size // 2])
        damaged = history.read_bytes()
        before = sorted(p.name for p in history.parent.iterdir() if "history" in p.name)
        r = cli("run", *JUDGE, fake.url, "--no-history", cwd=dest)
    assert r.code == 0, r.out + r.err
    assert "Traceback" not in r.err
    assert "judged totals are left uncorrected" in r.err
    assert re.search(r"polite\s+75%.*uncorrected", r.out)
    assert history.read_bytes() == damaged
    assert sorted(p.name for p in history.parent.iterdir() if "history" in p.name) == before


def test_an_older_history_is_read_without_being_migrated(cli, tmp_path):
    """A history from before the labelled pairs were stored (schema 3) corrects nothing
    and stays at its version: --no-history writes no history."""
    with FakeLLM(judge_script) as fake:
        dest = validated(cli, tmp_path, fake.url)
        history = dest / ".ragrail" / "history.sqlite"
        db = sqlite3.connect(history)
        db.execute("DROP TABLE judge_validation_pairs")
        db.execute("PRAGMA user_version = 3")
        db.commit()
        db.close()
        r = cli("run", *JUDGE, fake.url, "--no-history", cwd=dest)
    assert r.code == 0, r.out + r.err
    assert re.search(r"polite\s+75%.*uncorrected", r.out)
    db = sqlite3.connect(history)
    try:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 3
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    finally:
        db.close()
    assert "judge_validation_pairs" not in tables


EDITS = {
    "no labels": lambda c: c.update(labels=[]),
    "label count off": lambda c: c.update(n_labelled=3),
    "low above high": lambda c: c.update(low=0.9, high=0.1),
    "estimate far off": lambda c: c.update(estimate=1e308),
    "no judged answer": lambda c: c.update(n_judged=0),
}


def test_hand_edited_corrections_are_exit_2_in_report_show_and_diff(cli, tmp_path):
    with FakeLLM(judge_script) as fake:
        dest = validated(cli, tmp_path, fake.url)
        good = tmp_path / "good.json"
        assert cli("run", *JUDGE, fake.url, "--json", str(good), cwd=dest).code == 0  # run 2
        assert cli("run", *JUDGE, fake.url, cwd=dest).code == 0  # run 3
    history = dest / ".ragrail" / "history.sqlite"
    data = json.loads(good.read_text())
    assert data["judge_corrected"]["judge_polite"]["n_labelled"] == 20
    for name, edit in EDITS.items():
        edited = copy.deepcopy(data)
        edit(edited["judge_corrected"]["judge_polite"])
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(edited))
        out = tmp_path / "report.html"
        r = cli("report", "--from-json", str(bad), "-o", str(out), cwd=dest)
        assert r.code == 2, (name, r.err)
        assert len(r.err.strip().splitlines()) == 1 and "judge_corrected" in r.err, name
        assert not out.exists()
        db = sqlite3.connect(history)
        db.execute("UPDATE runs SET result = ? WHERE id = 3", (json.dumps(edited),))
        db.commit()
        db.close()
        # diff re-corrects from the labels: "no labels" was an internal error (exit 3)
        for args in (("diff", "2", "3"), ("show", "3")):
            r = cli(*args, cwd=dest)
            assert r.code == 2, (name, args, r.err)
            assert len(r.err.strip().splitlines()) == 1 and "run 3 cannot be read" in r.err


def test_validate_with_no_verdict_to_compare_stores_nothing(cli, tmp_path):
    """Every labelled answer made no claim: the agreement over 0 labels was a crash
    (KeyError), and stored it would become the judge's latest validation, hiding the
    labels of an earlier one from every corrected total."""
    dest = project(tmp_path / "p")
    toml = dest / "ragrail.toml"
    toml.write_text(toml.read_text().replace("faithfulness = false", "faithfulness = true"))
    claims = {"mode": "some"}

    def script(req) -> Reply:
        if "standalone claims" not in req.prompt:
            return judge_script(req)
        i = int(re.search(r"Answer (\d+):", req.prompt).group(1))
        found = [] if claims["mode"] == "none" else [{"claim": "c", "supported": i < 30}]
        return Reply(text=json.dumps({"claims": found}))

    labels = tmp_path / "faith.csv"
    labels.write_text(
        "case_id,criterion,verdict\n"
        + "".join(f"q{i:02d},faithfulness,{'pass' if HUMAN[i] else 'fail'}\n" for i in LABELLED)
    )
    validate = ("judge", "validate", "--labels", str(labels), *JUDGE)

    def forget_replies() -> None:  # the judge's replies change: no cached one may answer
        for path in (dest / ".ragrail").glob("cache.sqlite*"):
            path.unlink()

    with FakeLLM(script) as fake:
        assert cli("run", *JUDGE, fake.url, cwd=dest).code == 0
        assert cli(*validate, fake.url, cwd=dest).code == 0  # validation 1: 20 labels
        claims["mode"] = "none"
        forget_replies()
        r = cli(*validate, fake.url, cwd=dest)
        assert r.code == 0, r.out + r.err
        assert "not stored: no labelled case has a judge verdict" in r.out
        claims["mode"] = "some"
        forget_replies()
        r = cli("run", *JUDGE, fake.url, cwd=dest)
    assert r.code == 0, r.out + r.err
    assert "faithful answers  raw 75.0%, corrected" in r.out  # still validation 1's labels
    db = sqlite3.connect(dest / ".ragrail" / "history.sqlite")
    try:
        assert db.execute("SELECT count(*) FROM judge_validations").fetchone()[0] == 1
    finally:
        db.close()


def test_labels_naming_an_answer_twice_are_refused(tmp_path):
    """Two verdicts on one answer (two exports pasted together) would count it twice in
    every interval built on the labels."""
    path = tmp_path / "labels.csv"
    path.write_text(
        "case_id,criterion,verdict\nq01,polite,pass\nq02,polite,fail\nq01,polite,fail\n"
    )
    with pytest.raises(InputError) as err:
        load_labels(path)
    assert err.value.where == f"{path}:4" and "first at line 2" in str(err.value)
    # one answer on two criteria is two labels
    path.write_text("case_id,criterion,verdict\nq01,polite,pass\nq01,tone,fail\n")
    assert len(load_labels(path)) == 2


def test_labels_twice_is_exit_2_before_any_judge_call(cli, tmp_path):
    dest = project(tmp_path / "p")
    assert cli("run", cwd=dest).code == 0
    labels = tmp_path / "labels.jsonl"
    row = {"case_id": "q01", "criterion": "polite", "verdict": "pass"}
    labels.write_text(json.dumps(row) + "\n" + json.dumps(row) + "\n")
    history = dest / ".ragrail" / "history.sqlite"
    before = history.read_bytes()
    with FakeLLM(judge_script) as fake:
        r = cli("judge", "validate", "--labels", str(labels), *JUDGE, fake.url, cwd=dest)
        assert fake.count == 0
    assert r.code == 2 and f"{labels}:2" in r.err and "labelled twice" in r.err
    assert history.read_bytes() == before


def with_detail(name: str, validated_at: str) -> RunResult:
    run = corrected_run(RUN)
    c = run.judge_corrected.pop("judge_polite")
    run.judge_corrected[f"judge_{name}"] = c.model_copy(update={"validated_at": validated_at})
    run.judge_stats = {f"judge_{name}": judge_totals(run)["judge_polite"]}
    return run


def test_the_scorecard_escapes_a_saved_correction_and_spaces_a_long_name():
    run = with_detail("polite", "2026-12-01\x1b]0;pwned\x07\u202e")
    text = "\n".join(judged_total_lines(run))
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "\\x1b" in text  # shown, not obeyed
    long = "Höflichkeit und Ton der Antwort"  # longer than the name column
    (line, _) = judged_total_lines(with_detail(long, "2026-12-01T10:00:00+00:00"))
    assert f"{long} raw 75.0%" in line


def test_a_criterion_named_in_chinese_keeps_the_columns():
    from ragrail.reports.terminal.layout import cell_len

    run, ascii_run = corrected_run(RUN), corrected_run(RUN)
    for r in (run, ascii_run):
        r.judge_corrected = {}  # uncorrected: the raw figure's own line
        r.judge_stats = {"judge_polite": judge_totals(r)["judge_polite"]}
    run.judge_stats = {"judge_礼貌程度": run.judge_stats["judge_polite"]}
    (line, _), (ascii_line, _) = judged_total_lines(run), judged_total_lines(ascii_run)
    # the value ends in the same terminal cell whatever the name's script
    assert cell_len(line[: line.index("75%") + 3]) == cell_len(
        ascii_line[: ascii_line.index("75%") + 3]
    )


def test_merging_shards_corrected_by_different_validations_warns():
    first, second = corrected_run(RUN), corrected_run(RUN, vid=2)
    merged = corrected_run(RUN * 2)
    with pytest.warns(UserWarning, match="polite: left uncorrected, the shards were not all"):
        assert merge_corrections(merged, [first, second]) == {}
    same = merge_corrections(merged, [first, corrected_run(RUN)])
    assert same["judge_polite"].n_judged == 2 * len(RUN)
    # a shard judged before the validation was stored: its verdicts were never corrected
    unvalidated = corrected_run(RUN)
    unvalidated.judge_corrected = {}
    with pytest.warns(UserWarning, match="polite: left uncorrected"):
        assert merge_corrections(merged, [first, unvalidated]) == {}


@pytest.mark.parametrize("where", [0, 1])
def test_a_shard_with_nothing_to_correct_keeps_the_merged_correction(where):
    """An empty shard (more shards than questions), or one where the judge failed on
    every question, has no correction: it was not corrected differently, and the merged
    run is corrected over the other shards' verdicts, as the whole run would be."""
    parts = [corrected_run(RUN), corrected_run([])]
    failed = corrected_run([None, None])  # judged, but no verdict on 'polite'
    if where:
        parts = [parts[0], failed, parts[1]]
    merged = corrected_run([*RUN, None, None])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = merge_corrections(merged, parts if where else parts[::-1])
    assert got == {"judge_polite": merged.judge_corrected["judge_polite"]}


def test_merged_shards_with_an_empty_one_are_corrected_as_the_whole_run(cli, tmp_path):
    """Three questions over four shards: one shard has none, so nothing to correct; the
    merged run is still corrected, with the figure of the unsharded run."""
    dest = project(tmp_path / "p")
    keep = {f"q{i:02d}" for i in range(3)}
    golden = [g for g in json.loads((dest / "golden.json").read_text()) if g["id"] in keep]
    (dest / "golden.json").write_text(json.dumps(golden))
    outputs = (dest / "outputs.jsonl").read_text().splitlines()
    (dest / "outputs.jsonl").write_text("".join(f"{o}\n" for o in outputs[:3]))
    with FakeLLM(judge_script) as fake:
        assert cli("run", *JUDGE, fake.url, cwd=dest).code == 0
        labels = write_labels(tmp_path / "labels.csv", ids=range(3))
        assert (
            cli("judge", "validate", "--labels", str(labels), *JUDGE, fake.url, cwd=dest).code == 0
        )
        whole = tmp_path / "whole.json"
        assert cli("run", *JUDGE, fake.url, "--json", str(whole), cwd=dest).code == 0
        paths = []
        for i in range(4):
            paths.append(str(tmp_path / f"shard-{i}.json"))
            r = cli("run", "--shard", f"{i}/4", *JUDGE, fake.url, "--json", paths[-1], cwd=dest)
            assert r.code == 0, r.err
        sizes = [len(json.loads(Path(p).read_text())["cases"]) for p in paths]
        assert 0 in sizes and sum(sizes) == 3
        merged = tmp_path / "merged.json"
        r = cli("merge", *paths, "--json", str(merged), "--no-history", cwd=dest)
    assert r.code == 0, r.out + r.err
    assert "left uncorrected" not in r.err and "uncorrected" not in r.out
    got = json.loads(merged.read_text())["judge_corrected"]["judge_polite"]
    want = json.loads(whole.read_text())["judge_corrected"]["judge_polite"]
    assert (got["estimate"], got["n_judged"], got["n_labelled"]) == (
        want["estimate"],
        3,
        3,
    )
