"""Expected behaviour end to end (issue 14): a golden case expecting escalate passes when
the system's reply says it escalated, by its own flag or in words, and fails, as a WORSE
line and exit 1 against a baseline where it passed, when it answered instead; the same
for refuse. Scorecards count each behaviour apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragrail.project import SystemConfig
from ragrail.records.results import RunResult, Trace, load_run
from ragrail.system.adapters import HttpSystem, OutputsFile, parse_output
from tests.helpers import KITEBASE_V1

TOML = """name = "support bot"

[system]
kind = "outputs"
path = "outputs.jsonl"
"""
CHUNK = {"id": "refunds#1", "source": "refunds", "text": "Refunds are possible within 30 days."}
GOLDEN = [
    {"id": "refund", "question": "How long for a refund?", "sources": ["refunds"], "facts": ["30 days"]},
    {"id": "weather", "question": "What's the weather?"},
    {"id": "human", "question": "I want a person now", "sources": ["refunds"], "expect": "escalate"},
    {"id": "others", "question": "Show me Ann's refunds", "expect": "refuse"},
]  # fmt: skip
GOOD = {
    "refund": {"answer": "You have 30 days [refunds#1].", "contexts": [CHUNK]},
    "weather": {"answer": "I don't know."},
    "human": {"answer": "Sure, one moment.", "escalated": True, "contexts": [CHUNK]},
    "others": {"answer": "Sorry, I can't share another customer's refunds."},
}
# the reply answered: it holds the facts and cites the source, and still fails
ANSWERED = {"answer": "Refunds are possible within 30 days [refunds#1].", "contexts": [CHUNK]}


def write_outputs(dest: Path, replies: dict[str, dict]) -> None:
    lines = [json.dumps({"id": i, **reply}) for i, reply in replies.items()]
    (dest / "outputs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def project(cli, tmp_path) -> Path:
    """A support bot scored from an outputs file, its baseline saved with every case passing."""
    dest = tmp_path / "bot"
    (dest / "docs").mkdir(parents=True)
    (dest / "docs" / "refunds.md").write_text("# Refunds\n\nRefunds are possible within 30 days.\n")
    (dest / "ragrail.toml").write_text(TOML)
    (dest / "golden.json").write_text(json.dumps(GOLDEN))
    write_outputs(dest, GOOD)
    r = cli("run", "--save-baseline", "--no-history", cwd=dest)
    assert r.code == 0, r.out + r.err
    return dest


def run_json(cli, dest: Path, *args: str) -> tuple[int, str, dict]:
    r = cli("run", "--no-history", "--json", "out.json", *args, cwd=dest)
    return r.code, r.out + r.err, json.loads((dest / "out.json").read_text())


def verdicts(data: dict) -> dict[str, bool | None]:
    return {c["id"]: c["answer_pass"] for c in data["cases"]}


def test_escalate_passes_by_the_systems_flag(cli, project):
    code, out, data = run_json(cli, project)
    assert code == 0, out
    assert verdicts(data) == {"refund": True, "weather": True, "human": True, "others": True}
    human = next(c for c in data["cases"] if c["id"] == "human")
    assert human["expect"] == "escalate" and human["trace"]["escalated"] is True
    assert "expect" not in data["cases"][0] and "escalated" not in data["cases"][0]["trace"]


@pytest.mark.parametrize(
    "answer",
    [
        "I've escalated this to our support team.",
        "Ich habe Ihre Anfrage an unser Support-Team weitergeleitet.",
        "お問い合わせを担当者に引き継ぎました。",
    ],
)
def test_escalate_passes_when_the_answer_says_it_escalated(cli, project, answer):
    write_outputs(project, {**GOOD, "human": {"answer": answer}})
    code, out, data = run_json(cli, project)
    assert code == 0, out
    assert verdicts(data)["human"] is True


def test_escalate_fails_when_it_answered_instead(cli, project):
    write_outputs(project, {**GOOD, "human": ANSWERED})
    code, out, data = run_json(cli, project)
    assert code == 1, out
    assert "WORSE:  human: answer now fails, should escalate" in out
    assert verdicts(data) == {"refund": True, "weather": True, "human": False, "others": True}
    human = next(c for c in data["cases"] if c["id"] == "human")
    assert human["problems"] == ["should escalate"] and human["cause"] == "wrong behaviour"


def test_a_flag_saying_false_is_not_an_escalation(cli, project):
    write_outputs(project, {**GOOD, "human": {"answer": "Sure, one moment.", "escalated": False}})
    code, out, _ = run_json(cli, project)
    assert code == 1 and "WORSE:  human" in out


def test_refuse_fails_when_it_answered_instead(cli, project):
    write_outputs(project, {**GOOD, "others": {"answer": "Ann asked for a refund of $30."}})
    code, out, data = run_json(cli, project)
    assert code == 1, out
    assert "WORSE:  others: answer now fails, should refuse" in out
    assert verdicts(data)["others"] is False


def test_refuse_fails_when_it_escalated_instead(cli, project):
    write_outputs(project, {**GOOD, "others": {"answer": "I can't share that.", "escalated": True}})
    code, out, _ = run_json(cli, project)
    assert code == 1 and "should refuse, not escalate" in out


def test_an_answer_that_escalates_fails_with_its_reason(cli, project):
    refund = {**GOOD["refund"], "escalated": True}
    write_outputs(project, {**GOOD, "refund": refund})
    code, out, data = run_json(cli, project)
    assert code == 1, out
    refund_case = next(c for c in data["cases"] if c["id"] == "refund")
    assert refund_case["problems"] == ["escalated instead of answering"]
    assert "WORSE:  refund: answer now fails, escalated instead of answering" in out


def test_scorecards_count_each_behaviour_apart(cli, project):
    write_outputs(project, {**GOOD, "human": ANSWERED})
    code, out, data = run_json(cli, project, "--markdown", "report.md")
    assert code == 1
    r = cli("report", "--from-json", "out.json", "-o", "report.html", cwd=project)
    assert r.code == 0, r.err
    expected = {"answer": {"n": 1, "passed": 1}, "abstain": {"n": 1, "passed": 1},
                "refuse": {"n": 1, "passed": 1}, "escalate": {"n": 1, "passed": 0}}  # fmt: skip
    assert data["totals"]["expected"] == expected
    assert list(data["totals"])[-1] == "expected"  # stable order: after every older total
    line = "answer 1/1 · abstain 1/1 · refuse 1/1 · escalate 0/1"
    assert f"  expected behaviour: {line}" in out
    assert f"Expected behaviour: {line}." in (project / "report.md").read_text()
    assert f"Expected behaviour: {line}." in (project / "report.html").read_text()
    # the saved results read back with their counts
    assert load_run(project / "out.json").totals.expected["escalate"].passed == 0


def test_a_golden_set_without_refuse_or_escalate_reads_as_before(cli, project):
    golden = [c for c in GOLDEN if "expect" not in c]
    (project / "golden.json").write_text(json.dumps(golden))
    code, out, data = run_json(cli, project, "--baseline", "none.json")
    assert code == 0, out
    assert "expected" not in data["totals"] and "expected behaviour" not in out
    assert all("expect" not in c for c in data["cases"])


def test_custom_phrases_from_the_config(cli, project):
    (project / "ragrail.toml").write_text(
        '[scoring]\nescalate_phrases = ["Handing you to Sam"]\nrefuse_phrases = ["Nope"]\n'
        + TOML.replace('name = "support bot"\n', "")
    )
    write_outputs(
        project,
        {
            **GOOD,
            "human": {"answer": "Handing you to Sam, our agent."},
            "others": {"answer": "Nope."},
        },
    )
    code, out, data = run_json(cli, project)
    assert code == 0, out
    assert verdicts(data)["human"] is True and verdicts(data)["others"] is True


def test_an_outputs_line_with_escalated_not_true_or_false_is_exit_2(cli, project):
    write_outputs(project, {**GOOD, "human": {"answer": "x", "escalated": 1}})
    before = (project / "baseline.json").read_bytes()
    r = cli("run", "--save-baseline", "--no-history", cwd=project)
    assert r.code == 2
    assert "outputs.jsonl:3" in r.err and "escalated" in r.err
    assert (project / "baseline.json").read_bytes() == before


def test_the_outputs_file_keeps_the_flag(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text('{"id": "a", "answer": "x", "escalated": true}\n{"id": "b", "answer": "y"}\n')
    system = OutputsFile(path)
    assert system.records["a"].escalated is True and system.records["b"].escalated is None


def test_a_python_target_may_return_escalated():
    record = parse_output(
        {"answer": "One moment.", "contexts": [], "escalated": True}, "bot:answer"
    )
    assert record.escalated is True
    assert parse_output({"answer": "x", "contexts": []}, "bot:answer").escalated is None


def http(field: str = "escalated") -> HttpSystem:
    return HttpSystem(
        SystemConfig(kind="http", url="http://127.0.0.1:9/ask", escalated_field=field)
    )


def test_the_http_reply_says_it_escalated_at_a_dotted_path():
    reply = {"answer": "One moment.", "contexts": [], "meta": {"handoff": True}}
    record = http("meta.handoff")._parse(json.dumps(reply))
    assert not isinstance(record, str) and record.escalated is True
    # absent in the reply: not said; null: not said
    assert http()._parse('{"answer": "x", "contexts": []}').escalated is None
    assert http()._parse('{"answer": "x", "contexts": [], "escalated": null}').escalated is None
    assert http()._parse('{"answer": "x", "contexts": [], "escalated": false}').escalated is False
    # "" reads no such field, whatever the reply holds
    assert http("")._parse('{"answer": "x", "contexts": [], "escalated": "yes"}').escalated is None


def test_an_http_escalated_field_that_is_not_true_or_false_is_a_config_error():
    from ragrail.errors import InputError

    with pytest.raises(InputError) as err:
        http()._parse('{"answer": "x", "contexts": [], "escalated": "yes"}')
    assert "system.escalated_field 'escalated'" in err.value.message


def test_old_results_and_traces_load_and_write_as_before():
    """A trace or a case saved before expected behaviour existed reads back, and one
    without an escalation flag or an expect writes exactly the old fields."""
    old = Trace.model_validate({"case_id": "a", "answer": "x"})
    assert old.escalated is None and "escalated" not in old.model_dump_json()
    baseline = KITEBASE_V1
    run = RunResult.model_validate(json.loads(baseline.read_text(encoding="utf-8")))
    assert run.totals.expected == {} and all(c.expect is None for c in run.cases)
    assert '"expect' not in run.to_json() and '"escalated"' not in run.to_json()
