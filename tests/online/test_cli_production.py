"""From production back to the golden set, through the CLI: `logs score`, `sample`,
`add --from-log` and lint's warning, end to end on the Kitebase example."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from ragrail.golden import load_golden
from ragrail.online.record import Context, Conversation
from ragrail.online.store import LogStore
from tests.fake_llm import FakeLLM, Reply

INVITE = Context(
    "invite-teammates#1",
    "invite-teammates",
    "Open Settings > Members, click Invite and enter their email addresses. "
    "Invitations expire after 7 days.",
)
GOOD = "Invitations expire after 7 days [invite-teammates#1]."
THUMBS_DOWN = Conversation(
    id="conv-42", at=1_714_550_400.0, version="v2", user="u-42",
    question="How long do teammate invitations last before they expire?",
    answer="Invitations expire after 3 days [invite-teammates#1].",
    contexts=(INVITE,), thumbs=-1,
)  # fmt: skip


def others(n: int, version: str = "v2") -> list[Conversation]:
    return [
        Conversation(
            id=f"ok-{version}-{i:02}",
            at=1_714_560_000.0 + i,
            version=version,
            user=f"u{i}",
            question=f"Something else number {i}?",
            answer=GOOD,
            contexts=(INVITE,),
            thumbs=1,
        )
        for i in range(n)
    ]


@pytest.fixture
def project(cli, tmp_path) -> Path:
    """The Kitebase example with a log of one thumbs-down conversation among 20 fine ones."""
    dest = tmp_path / "kb"
    assert cli("example", "kitebase", str(dest)).code == 0
    with LogStore(dest / ".ragrail" / "logs.sqlite") as store:
        store.add([THUMBS_DOWN, *others(20)])
    return dest


def test_a_thumbs_down_conversation_becomes_a_case_scored_like_any_other(cli, project):
    # 1. sample: the thumbs-down conversation is drawn, in its stratum, with its contexts
    r = cli("sample", "-n", "5", "-o", "label.csv", cwd=project)
    assert r.code == 0, r.err
    rows = list(csv.DictReader((project / "label.csv").open(encoding="utf-8", newline="")))
    assert len(rows) == 5
    picked = next(row for row in rows if row["id"] == "conv-42")
    assert picked["stratum"] == "thumbs-down"
    assert (picked["version"], picked["date"]) == ("v2", "2024-05-01T08:00:00Z")
    assert json.loads(picked["contexts"])[0]["id"] == "invite-teammates#1"
    # 2. add --from-log: the logged question, the labeller's labels, the provenance
    r = cli(
        "add", "--from-log", "conv-42", "--fact", "7 days", "--source", "invite-teammates",
        cwd=project,
    )  # fmt: skip
    assert r.code == 0, r.err
    case = load_golden(project / "golden.json").cases[-1]
    assert case.id == "log-conv-42"
    assert case.question == THUMBS_DOWN.question
    assert case.provenance == {
        "from": "production", "conversation": "conv-42",
        "date": "2024-05-01T08:00:00Z", "version": "v2",
    }  # fmt: skip
    with LogStore(project / ".ragrail" / "logs.sqlite", create=False) as store:
        [(case_id, conversation_id, golden, _)] = store.golden_from_log()
    assert (case_id, conversation_id) == ("log-conv-42", "conv-42")
    assert Path(golden) == (project / "golden.json").resolve()
    # 3. the next run scores it like any other case
    r = cli("run", "--json", "results.json", cwd=project)
    assert r.code == 0, r.out + r.err
    results = {c["id"]: c for c in json.loads((project / "results.json").read_text())["cases"]}
    scored = results["log-conv-42"]
    assert scored["answer_pass"] is True and scored["correctness"] == 1.0
    assert scored["retrieval_hit"] is True and scored["faithfulness"] is not None
    assert scored["trace"]["retrieved"][0]["source"] == "invite-teammates"
    # 4. lint passes while it is there, and warns (exit 0) once it is gone
    assert cli("lint", cwd=project).code == 0
    golden = project / "golden.json"
    kept = [c for c in json.loads(golden.read_text()) if c["id"] != "log-conv-42"]
    golden.write_text(json.dumps(kept))
    r = cli("lint", cwd=project)
    assert r.code == 0, r.err
    warning = next(line for line in r.err.splitlines() if "log-conv-42" in line)
    assert "warning" in warning and "'conv-42'" in warning
    assert "no longer in golden.json: production failures are never removed silently" in warning
    assert "1 warning(s)" in r.out


def test_lint_without_a_log_database_creates_none(cli, tmp_path):
    dest = tmp_path / "kb"
    assert cli("example", "kitebase", str(dest)).code == 0
    assert cli("lint", cwd=dest).code == 0
    assert not (dest / ".ragrail" / "logs.sqlite").exists()


def test_add_from_log_defaults_and_refusals(cli, project):
    golden = project / "golden.json"
    before = golden.read_bytes()
    r = cli(
        "add", "--from-log", "no-such-id", "-f", "7 days", "-s", "invite-teammates", cwd=project
    )
    assert r.code == 2 and "no-such-id" in r.err
    r = cli("add", "--from-log", "conv-42", "--db", "missing.sqlite", cwd=project)
    assert r.code == 2 and not (project / "missing.sqlite").exists()
    r = cli("add", "--question", "How?", cwd=project)  # neither --id nor --from-log
    assert r.code == 2 and "--id" in r.err
    r = cli("add", "--from-log", "conv-42", "--fact", "7 days", cwd=project)  # a fact, no source
    assert r.code == 2 and "--source" in r.err
    assert golden.read_bytes() == before
    # --id and --question replace the defaults; the provenance stays
    r = cli(
        "add", "--from-log", "conv-42", "--id", "invite-expiry", "--question",
        "When does an invitation expire?", "-s", "invite-teammates", cwd=project,
    )  # fmt: skip
    assert r.code == 0, r.err
    case = load_golden(golden).cases[-1]
    assert (case.id, case.question) == ("invite-expiry", "When does an invitation expire?")
    assert case.provenance["conversation"] == "conv-42"


def test_sample_refusals_write_nothing(cli, project):
    (project / "golden.jsonl").write_text(
        "".join(json.dumps(c) + "\n" for c in json.loads((project / "golden.json").read_text()))
    )
    config = project / "ragrail.toml"
    config.write_text(config.read_text().replace('"golden.json"', '"golden.jsonl"'))
    before = (project / "golden.jsonl").read_bytes()
    for args in (
        ("-n", "0", "-o", "s.csv"),
        ("-n", "many", "-o", "s.csv"),
        ("-n", "3", "-o", "s.txt"),
        ("-n", "3", "-o", "golden.jsonl"),  # an input of the project
        ("-n", "3", "-o", "s.csv", "--db", "nope.sqlite"),
    ):
        r = cli("sample", *args, cwd=project)
        assert r.code == 2, (args, r.err)
        assert "Traceback" not in r.err
    assert (project / "golden.jsonl").read_bytes() == before
    assert not list(project.glob("s.*")) and not (project / "nope.sqlite").exists()


def test_sample_jsonl_with_a_version_and_no_project_file(cli, tmp_path):
    db = tmp_path / "logs.sqlite"
    with LogStore(db) as store:
        store.add([THUMBS_DOWN, *others(5, "v1"), *others(5, "v2")])
    r = cli("sample", "-n", "50", "-o", "s.jsonl", "--version", "v1", "--db", str(db))
    assert r.code == 0, r.err
    rows = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()]
    assert {row["version"] for row in rows} == {"v1"} and len(rows) == 5
    assert "Wrote 5 conversation(s)" in r.out


def test_logs_score_prints_counts_per_version_and_stores_the_flags(cli, project):
    with LogStore(project / ".ragrail" / "logs.sqlite") as store:
        store.add(others(4, "v3"))
    r = cli("logs", "score", cwd=project)
    assert r.code == 0, r.err
    table = [line.split() for line in r.out.splitlines()]
    assert ["version", "conversations", "unfaithful"] in table
    assert ["v2", "21", "1", "(5%)"] in table and ["v3", "4", "0", "(0%)"] in table
    assert "  unfaithful: conv-42" in r.out
    assert "25 conversation(s) scored, 1 flagged" in r.out
    with LogStore(project / ".ragrail" / "logs.sqlite", create=False) as store:
        assert store.get("conv-42").flags == ("unfaithful",)
    # the flagged stratum of `sample` now holds it too (thumbs-down comes first, though)
    r = cli("logs", "score", "--version", "v3", cwd=project)
    assert "4 conversation(s) scored, 0 flagged" in r.out


def test_logs_score_refusals(cli, tmp_path, project):
    r = cli("logs", "score", "--db", str(tmp_path / "none.sqlite"))
    assert r.code == 2 and not (tmp_path / "none.sqlite").exists()
    r = cli("logs", "score", "--judge-sample", "3", cwd=project)  # no judge configured
    assert r.code == 2 and "judge" in r.err
    r = cli("logs", "score", "--judge-sample", "0", cwd=project)
    assert r.code == 2


def test_logs_score_judge_sample_through_the_fake_server(cli, project, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")

    def judge(req) -> Reply:
        unsupported = "3 days" in req.prompt
        reply = {"claims": [{"claim": "expiry", "supported": not unsupported, "chunk": None}]}
        return Reply(text=json.dumps(reply), input_tokens=50, output_tokens=10)

    with FakeLLM(judge) as fake:
        config = project / "ragrail.toml"
        config.write_text(
            config.read_text() + f'\n[judge]\nprovider = "anthropic"\nbase_url = "{fake.url}"\n'
        )
        r = cli("logs", "score", "--judge-sample", "100", cwd=project)
        assert r.code == 0, r.err
        assert len(fake.received) == 21  # every conversation, each once
    assert "21 judged" in r.out and "judge:unfaithful: conv-42" in r.out
    with LogStore(project / ".ragrail" / "logs.sqlite", create=False) as store:
        assert store.get("conv-42").flags == ("unfaithful", "judge:unfaithful")
        assert store.get("ok-v2-00").flags == ()


def test_logs_score_with_the_judge_unreachable_is_exit_3(cli, project, monkeypatch):
    """Issue 29: every judge call failed, and `logs score` said "0 judged", exit 0."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    config = project / "ragrail.toml"
    config.write_text(
        config.read_text()
        + '\n[judge]\nprovider = "anthropic"\nbase_url = "http://127.0.0.1:9"\nmax_retries = 0\n'
    )
    r = cli("logs", "score", "--judge-sample", "5", cwd=project)
    assert r.code == 3, r.err
    [reason] = [line for line in r.err.splitlines() if line.startswith("ragrail: the judge")]
    assert "failed on 5 conversation(s)" in reason and "connection failed" in reason
    with LogStore(project / ".ragrail" / "logs.sqlite", create=False) as store:
        assert store.get("conv-42").flags == ("unfaithful",)  # the label-free ones, no judge's


@pytest.mark.parametrize(
    "args", [("logs", "score"), ("sample", "-n", "3", "-o", "s.csv"), ("online",)]
)
def test_an_unknown_version_is_exit_2_naming_the_known_ones(cli, project, args):
    """Issue 29: `logs score` and `sample` (a header-only file) exited 0, `online` 2."""
    db = project / ".ragrail" / "logs.sqlite"
    before = db.read_bytes()
    r = cli(*args, "--version", "v9", cwd=project)
    assert r.code == 2, r.err
    assert "no conversations of version 'v9' (versions: v2)" in r.err
    assert db.read_bytes() == before and not (project / "s.csv").exists()


def test_a_cell_with_a_bare_cr_reads_back_as_one_cell(cli, project):
    """Issue 29: `sample -o x.csv` wrote it unquoted; read back, 3 rows became 6, one cell
    opening with an unneutralised formula."""
    from dataclasses import replace

    with LogStore(project / ".ragrail" / "logs.sqlite") as store:
        store.add([replace(c, question=f"ok {c.id}\r=1+2*3") for c in others(3, "cr")])
    r = cli("sample", "-n", "3", "-o", "x.csv", "--version", "cr", cwd=project)
    assert r.code == 0, r.err
    with (project / "x.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 3
    assert sorted(row["question"] for row in rows) == [
        f"ok ok-cr-{i:02}\r=1+2*3" for i in range(3)
    ]
    assert all(row["id"].startswith("ok-cr-") for row in rows)
