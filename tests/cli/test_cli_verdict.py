"""End to end: a run with errors exits 3, says so everywhere, and saves no baseline."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fake_llm import FakeLLM, Reply


def late_refund_with_an_error(cli, tmp_path: Path, reason: str = "HTTP 500") -> Path:
    """The late-refund example, its passing question (right-answer) now an error."""
    dest = tmp_path / "lr"
    assert cli("example", "late-refund", str(dest)).code == 0
    outputs = dest / "outputs.jsonl"
    records = [json.loads(line) for line in outputs.read_text().splitlines()]
    records = [
        {"id": r["id"], "error": reason} if r["id"] == "right-answer" else r for r in records
    ]
    outputs.write_text("".join(json.dumps(r) + "\n" for r in records))
    return dest


def test_a_baseline_passing_question_that_errors_is_named_and_exits_3(cli, tmp_path):
    dest = late_refund_with_an_error(cli, tmp_path)
    summary = tmp_path / "s.md"
    r = cli("run", "--no-history", "--markdown", str(summary), cwd=dest)
    assert r.code == 3
    assert "  ERROR:  right-answer: passed in the baseline, now errors: HTTP 500" in r.out
    assert "No regressions" not in r.out
    assert "1 question passed in the baseline and now errors: a run with errors" in r.out
    assert "ragrail: 1 question passed in the baseline and now errors" in r.err
    assert summary.read_text().startswith(
        "## ragrail: Late-refund bot: 1 question passed in the baseline and now errors\n"
    )
    # the baseline's 25% against 0 of 4 now: the error counts as not passing
    assert "answers pass   25% -> 0% (1 error)" in r.out


def test_no_baseline_is_saved_from_a_run_with_errors(cli, tmp_path):
    dest = late_refund_with_an_error(cli, tmp_path)
    before = (dest / "baseline.json").read_bytes()
    r = cli("run", "--no-history", "--save-baseline", cwd=dest)
    assert r.code == 3
    assert (dest / "baseline.json").read_bytes() == before
    assert "not saving a baseline" in r.err and "failed calls" in r.err


def test_history_shows_errors_and_counts_them_as_not_passing(cli, tmp_path):
    dest = late_refund_with_an_error(cli, tmp_path)
    assert cli("run", cwd=dest).code == 3
    r = cli("history", cwd=dest)
    header, row = r.out.splitlines()[0], r.out.splitlines()[1]
    assert header.split()[6:9] == ["answers", "errors", "cost"]
    cols = row.split()
    # run, date, time, commit, hit, recall, answers, errors
    assert cols[6] == "0%" and cols[7] == "1"


def test_no_baseline_is_saved_when_the_judge_failed(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-judge-test-key")
    dest = tmp_path / "lr"
    assert cli("example", "late-refund", str(dest)).code == 0
    before = (dest / "baseline.json").read_bytes()
    with FakeLLM(lambda req: Reply(text="Looks faithful to me.")) as fake:
        r = cli(
            "run",
            "--no-history",
            "--save-baseline",
            "--judge",
            "claude",
            "--judge-base-url",
            fake.url,
            cwd=dest,
        )
    assert r.code == 3
    assert (dest / "baseline.json").read_bytes() == before
    assert "the judge failed on 4 questions" in r.err and "not saving a baseline" in r.err


def test_run_json_carries_the_verdict_as_the_exit_code_says_it(cli, project, tmp_path):
    out = tmp_path / "r.json"
    r = cli("run", "--no-history", "--top-k", "1", "--json", str(out), cwd=project)
    assert r.code == 1
    v = json.loads(out.read_text())["verdict"]
    assert v["exit_code"] == 1 and v["summary"] == "3 questions got worse"
    assert v["baseline"] == "baseline.json"  # relative to the project folder
    regressed = {c["id"]: c["changes"] for c in v["regressed"]}
    # what the terminal shows as WORSE lines, per question
    worse = [line.strip() for line in r.out.splitlines() if line.strip().startswith("WORSE:")]
    assert sorted(f"WORSE:  {k}: {d}" for k, ds in regressed.items() for d in ds) == sorted(worse)
    assert regressed["lost-phone"][0] == "retrieval 100% -> 0%"
    assert (v["fixed"], v["errored"], v["new_cases"], v["removed_cases"]) == ([], [], [], [])
    # the same through standard output
    r2 = cli("run", "--no-history", "--top-k", "1", "--json", "-", cwd=project)
    assert json.loads(r2.out[r2.out.index("{") :])["verdict"] == v


def test_an_unchanged_run_and_a_saved_baseline_say_so_in_the_json(cli, project, tmp_path):
    out = tmp_path / "r.json"
    assert cli("run", "--no-history", "--json", str(out), cwd=project).code == 0
    v = json.loads(out.read_text())["verdict"]
    assert (v["exit_code"], v["summary"], v["regressed"], v["baseline_saved"]) == (
        0, "no regressions", [], False,
    )  # fmt: skip
    (project / "baseline.json").unlink()
    assert cli("run", "--no-history", "--json", str(out), cwd=project).code == 0
    v = json.loads(out.read_text())["verdict"]
    assert (v["baseline"], v["summary"]) == (None, "no baseline to compare with")
    assert cli("run", "--no-history", "--save-baseline", "--json", str(out), cwd=project).code == 0
    assert json.loads(out.read_text())["verdict"]["baseline_saved"] is True
