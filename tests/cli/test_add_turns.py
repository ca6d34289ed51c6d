"""`ragrail add` writing a conversation: each --question starts a turn and the labels after
it are that turn's; --from-log keeps a logged conversation's turns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragrail.golden import load_golden
from ragrail.online.record import Conversation, Turn
from ragrail.online.store import LogStore

TWO_TURNS = (
    "add", "--id", "pro-plan", "-t", "chat",
    "-q", "How much is Basic?", "-s", "pricing", "-f", "$8",
    "-q", "And on the Pro plan?", "-s", "pricing", "-f", "$12", "--expect", "answer",
)  # fmt: skip


def _golden(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("g.json", '[\n  {"id": "q1", "question": "What is it?"}\n]\n'),
        ("g.jsonl", '{"id": "q1", "question": "What is it?"}\n'),
        ("g.yaml", "- id: q1\n  question: What is it?\n"),
        ("g.csv", "id,question,sources,facts,tags,expect,conversation,turn\nq1,What is it?\n"),
    ],
)
def test_each_question_starts_a_turn_with_its_own_labels(cli, tmp_path, name, text):
    path = _golden(tmp_path, name, text)
    r = cli(*TWO_TURNS, "-g", str(path))
    assert r.code == 0, r.err
    assert "conversation 'pro-plan' (2 turns)" in r.out
    cases = load_golden(path).cases
    got = [(c.id, c.question, c.sources, list(c.facts), c.tags, c.expect) for c in cases[1:]]
    assert got == [
        ("pro-plan turn 1", "How much is Basic?", ["pricing"], ["$8"], ["chat"], None),
        ("pro-plan turn 2", "And on the Pro plan?", ["pricing"], ["$12"], ["chat"], "answer"),
    ]
    if name == "g.json":  # one entry holding the turns, as a person would write it
        entry = json.loads(path.read_text())[-1]
        assert entry["id"] == "pro-plan" and entry["tags"] == ["chat"]
        assert [t["question"] for t in entry["turns"]] == [c.question for c in cases[1:]]


def test_a_second_time_is_refused_and_a_turn_is_named(cli, tmp_path):
    path = _golden(tmp_path, "g.json", '[{"id": "q1", "question": "What is it?"}]')
    assert cli(*TWO_TURNS, "-g", str(path)).code == 0
    before = path.read_bytes()
    r = cli(*TWO_TURNS, "-g", str(path))
    assert r.code == 2 and "a conversation with id 'pro-plan' already exists" in r.err
    r = cli("add", "-g", str(path), "--id", "c", "-q", "a?", "-q", "b?", "-f", "$8")
    assert r.code == 2 and "turn 2: a --fact needs a --source" in r.err
    r = cli("add", "-g", str(path), "--id", "c", "-q", "a?", "--turn", "3", "-s", "pricing")
    assert r.code == 2 and "--turn 3: give a turn whose --question came before it" in r.err
    r = cli("add", "-g", str(path), "--id", "c", "-q", "a?", "-q", "b?", "--expect", "answer")
    assert r.code == 2 and "case 'c turn 2'" in r.err and "needs the sources" in r.err
    assert path.read_bytes() == before


def test_turn_goes_back_to_an_earlier_turn(cli, tmp_path):
    path = _golden(tmp_path, "g.json", '[{"id": "q1", "question": "What is it?"}]')
    r = cli(
        "add", "-g", str(path), "--id", "c", "-q", "a?", "-q", "b?", "-s", "pricing",
        "--turn", "1", "-s", "plans",
    )  # fmt: skip
    assert r.code == 0, r.err
    assert [c.sources for c in load_golden(path).cases[1:]] == [["plans"], ["pricing"]]


def test_from_log_keeps_the_logged_turns(cli, tmp_path):
    path = _golden(tmp_path, "g.json", '[{"id": "q1", "question": "What is it?"}]')
    db = tmp_path / "logs.sqlite"
    logged = Conversation(
        id="C 7", at=1_714_550_400.0, version="v3", question="How much is Basic?",
        answer="$8 a month.", turns=(Turn("And on the Pro plan?"), Turn("Billed yearly?")),
    )  # fmt: skip
    with LogStore(db) as store:
        store.add([logged])
    r = cli(
        "add", "-g", str(path), "--db", str(db), "--from-log", "C 7",
        "-s", "pricing", "-f", "$8", "--turn", "2", "-s", "pricing", "-f", "$12",
        "--turn", "3", "--question", "Is Pro cheaper billed yearly?", "-s", "pricing",
    )  # fmt: skip
    assert r.code == 0, r.err
    cases = load_golden(path).cases[1:]
    assert [(c.id, c.question, list(c.facts)) for c in cases] == [
        ("log-c-7 turn 1", "How much is Basic?", ["$8"]),
        ("log-c-7 turn 2", "And on the Pro plan?", ["$12"]),
        ("log-c-7 turn 3", "Is Pro cheaper billed yearly?", []),
    ]
    assert {c.provenance["conversation"] for c in cases} == {"C 7"}
    with LogStore(db, create=False) as store:
        assert [row[:2] for row in store.golden_from_log()] == [("log-c-7", "C 7")]
    r = cli("add", "-g", str(path), "--db", str(db), "--from-log", "C 7", "--turn", "4")
    assert r.code == 2 and "the logged conversation has turns 1 to 3" in r.err


def test_help_shows_how_to_write_a_conversation(cli):
    r = cli("add", "--help")
    text = " ".join(r.out.split())
    assert '-q "How much is Basic?" -s pricing -f \'$8\' \\ -q "And on the Pro plan?"' in text
    assert "each --question starts the next turn" in text
    assert "--turn K The labels after it are turn K's" in text
