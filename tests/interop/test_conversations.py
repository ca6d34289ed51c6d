"""Conversations to and from DeepEval and RAGAS, with files those libraries wrote
themselves (tests/data/interop/conversations: write_fixtures.py says how, with DeepEval
4.3.1 and RAGAS 0.4.3).

The fixtures' two logged conversations, on the four help-center articles of
tests/data/interop/docs: "return-then-refund" (turn 1 retrieved the return-window passage
and a stale "Premium members" passage found in no document; turn 2 the refund passage)
and "express-then-tracking" (a greeting before the first question; one passage a turn). A
third DeepEval golden has a scenario and no turns (one to simulate).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ragrail.golden import load_golden
from tests.interop.conftest import DATA, read_jsonl, scores

HERE = DATA / "conversations"
DEEPEVAL_FILES = ["deepeval_conversations.json", "deepeval_conversations.jsonl", "deepeval_conversations.csv"]  # fmt: skip
RAGAS_FILES = ["ragas_multi_turn.jsonl", "ragas_multi_turn.csv"]

# What the turns hold, by hand from the fixtures: each user message a question, the
# assistant's reply the answer, its retrieval_context (or the tool messages) the passages.
LOGGED = [
    ("Can I still return a jacket I got last week?",
     "Yes: within 30 days of delivery, if it is unused.",
     [("returns#2", "returns"), ("unplaced#2", None)]),
    ("And when do I get my money?",
     "Within 5 business days after we receive the return.", [("returns#3", "returns")]),
    ("How fast is express delivery?",
     "The next business day if you order before 2 pm.", [("shipping#2", "shipping")]),
    ("Where can I follow my parcel?", "Open Orders > Track.", [("shipping#3", "shipping")]),
]  # fmt: skip


def _ok(r) -> str:
    assert r.code == 0, r.out + r.err
    return r.out


@pytest.mark.parametrize("name", DEEPEVAL_FILES)
def test_deepeval_conversational_goldens_import_as_conversations(cli, project, name):
    out = _ok(cli("import", "deepeval", str(HERE / name), "--golden", "golden.json",
                  "--outputs", "outputs.jsonl", cwd=project))  # fmt: skip
    assert "read 2 conversations (4 turns)" in out
    assert "golden set: 2 conversations (4 turns) written to golden.json" in out
    # the context of each conversation is in returns, resp. shipping: every turn's source;
    # expected_outcome "5 business days" is the last turn's fact, the sentence is none
    assert json.loads((project / "golden.json").read_text()) == [
        {"id": "return-then-refund", "turns": [
            {"question": LOGGED[0][0], "sources": ["returns"], "facts": []},
            {"question": LOGGED[1][0], "sources": ["returns"], "facts": ["5 business days"]}]},
        {"id": "express-then-tracking", "turns": [
            {"question": LOGGED[2][0], "sources": ["shipping"], "facts": []},
            {"question": LOGGED[3][0], "sources": ["shipping"], "facts": []}]},
    ]  # fmt: skip
    records = read_jsonl(project / "outputs.jsonl")
    ids = ["return-then-refund turn 1", "return-then-refund turn 2",
           "express-then-tracking turn 1", "express-then-tracking turn 2"]  # fmt: skip
    assert [r["id"] for r in records] == ids
    for record, (question, answer, contexts) in zip(records, LOGGED, strict=True):
        assert (record["question"], record["answer"]) == (question, answer)
        assert [(c["id"], c.get("source")) for c in record["contexts"]] == contexts
    # one line says what was read and left: the scenarios, the tool call, the greeting,
    # the golden with no turns
    notes = [ln for ln in out.splitlines() if ln.startswith("note: ")]
    assert notes == [
        "note: not imported, ragrail has no place for them: scenario (3 conversations), "
        "tools_called (1 turn), replies before the first question (1 conversation), "
        "conversations with no question, a scenario to simulate (1)"
    ]
    # and scored: the outputs under the golden set, turn by turn
    run = scores(cli, project)
    assert run["totals"]["n_conversations"] == 2
    assert run["by_id"]["return-then-refund turn 2"]["answer_pass"] is True


@pytest.mark.parametrize("name", RAGAS_FILES)
def test_ragas_multi_turn_samples_import_their_turns(cli, project, name):
    out = _ok(cli("import", "ragas", str(HERE / name), "--outputs", "outputs.jsonl", cwd=project))
    assert "read 2 conversations (4 turns)" in out
    records = read_jsonl(project / "outputs.jsonl")
    # no name in a MultiTurnSample: each conversation is named by its first question
    assert [r["id"] for r in records] == [
        "can-i-still-return-a-jacket turn 1", "can-i-still-return-a-jacket turn 2",
        "how-fast-is-express-delivery turn 1", "how-fast-is-express-delivery turn 2",
    ]  # fmt: skip
    for record, (question, answer, contexts) in zip(records, LOGGED, strict=True):
        assert (record["question"], record["answer"]) == (question, answer)
        # the tool messages are the passages; the second conversation called no tool
        want = contexts if record["id"].startswith("can-") else []
        assert [(c["id"], c.get("source")) for c in record["contexts"]] == want
    assert "note: not imported, ragrail has no place for them: reference_topics (1 sample)" in out


def test_a_conversation_is_labelled_whole_or_left_out_whole(cli, project):
    # RAGAS labels a conversation, not its turns: the reference labels the last turn
    # only, so turn 1 has nothing and neither conversation can be a golden entry
    r = cli("import", "ragas", str(HERE / "ragas_multi_turn.jsonl"), "--golden", "golden.json",
            cwd=project)  # fmt: skip
    assert r.code == 2
    assert (
        "can-i-still-return-a-jacket (2 turns) left out whole: turn 1: it has no reference" in r.err
    )
    assert not (project / "golden.json").exists()


GOLDEN = HERE / "golden.json"


def _conversations(path: Path) -> list:
    return [c for c in load_golden(path).cases if c.conversation is not None]


@pytest.mark.parametrize("tool", ["deepeval", "ragas"])
def test_a_golden_set_exported_and_imported_back_is_the_same(cli, project, tool):
    shutil.copy(GOLDEN, project / "golden.json")
    source = "talks.json" if tool == "deepeval" else "talks.jsonl"
    _ok(cli("export", tool, "--golden", "golden.json", "-o", "single.out",
            "--conversations", source, cwd=project))  # fmt: skip
    _ok(cli("import", tool, source, "--golden", "back.json", cwd=project))
    # graded sources, alternatives, checks, expect and tags all come back
    assert _conversations(project / "back.json") == _conversations(GOLDEN)


@pytest.mark.parametrize("name", ["deepeval_resaved.json", "ragas_resaved.jsonl"])
def test_the_export_loaded_and_saved_by_the_library_imports_back_the_same(cli, project, name):
    tool = name.split("_")[0]
    _ok(cli("import", tool, str(HERE / name), "--golden", "back.json", cwd=project))
    assert _conversations(project / "back.json") == _conversations(GOLDEN)


def test_exported_records_have_the_libraries_fields_in_their_order(cli, project):
    shutil.copy(GOLDEN, project / "golden.json")
    _ok(cli("export", "deepeval", "--golden", "golden.json", "-o", "single.json",
            "--conversations", "talks.json", cwd=project))  # fmt: skip
    ours = json.loads((project / "talks.json").read_text())
    theirs = json.loads((HERE / "deepeval_resaved.json").read_text())
    # DeepEval 4.3.1's save_as adds its own "expectations" field; the rest is as it writes
    assert [k for k in theirs[0] if k != "expectations"] == list(ours[0])
    assert list(theirs[0]["turns"][0]) == list(ours[0]["turns"][0])
    assert ours[0]["turns"][0]["metadata"] == theirs[0]["turns"][0]["metadata"]
    single = json.loads((project / "single.json").read_text())
    saved = json.loads((DATA / "deepeval" / "20250101_120000.json").read_text())
    assert list(single[0]) == list(saved[0])
    _ok(cli("export", "ragas", "--golden", "golden.json", "-o", "single.jsonl",
            "--conversations", "talks.jsonl", cwd=project))  # fmt: skip
    assert (project / "talks.jsonl").read_text() == (HERE / "ragas_resaved.jsonl").read_text()


def test_a_run_exported_with_its_conversations_scores_the_same_imported_back(cli, project):
    shutil.copy(GOLDEN, project / "golden.json")
    first = scores(cli, project, False)
    for tool, talks in (("deepeval", "talks.json"), ("ragas", "talks.jsonl")):
        _ok(cli("export", tool, "--run", "results.json", "-o", f"single-{tool}",
                "--conversations", talks, cwd=project))  # fmt: skip
        back = project / f"back-{tool}"
        back.mkdir()
        shutil.copytree(project / "docs", back / "docs")
        _ok(cli("import", tool, f"../{talks}", "--golden", "golden.json",
                "--outputs", "outputs.jsonl", cwd=back))  # fmt: skip
        again = scores(cli, back)
        for case_id, case in again["by_id"].items():
            before = first["by_id"][case_id]
            assert case["answer_pass"] == before["answer_pass"], (tool, case_id)
            assert case["retrieval_hit"] == before["retrieval_hit"], (tool, case_id)
            assert case["trace"]["answer"] == before["trace"]["answer"]
        assert len(again["by_id"]) == 5  # the five turns; the single question is in single-*
        chunks = {
            c["id"] for c in again["by_id"]["return-then-refund turn 1"]["trace"]["retrieved"]
        }
        assert chunks == {
            c["id"] for c in first["by_id"]["return-then-refund turn 1"]["trace"]["retrieved"]
        }


def test_a_run_of_both_kinds_needs_a_file_for_the_conversations(cli, project):
    shutil.copy(GOLDEN, project / "golden.json")
    r = cli("export", "ragas", "--golden", "golden.json", "-o", "out.jsonl", cwd=project)
    assert r.code == 2
    assert "2 conversations and 1 single questions" in r.err and "--conversations FILE" in r.err
    assert not (project / "out.jsonl").exists()


def test_a_deepeval_test_run_gives_its_single_questions_and_its_conversations(cli, project):
    out = _ok(cli("import", "deepeval", str(HERE / "deepeval_test_run.json"),
                  "--outputs", "outputs.jsonl", cwd=project))  # fmt: skip
    assert "read 2 conversations (4 turns) and 1 case" in out
    records = read_jsonl(project / "outputs.jsonl")
    assert [r["id"] for r in records][:2] == ["invoice-pdf", "return-then-refund turn 1"]
    for record, (question, answer, contexts) in zip(records[1:], LOGGED, strict=True):
        assert (record["question"], record["answer"]) == (question, answer)
        assert [(c["id"], c.get("source")) for c in record["contexts"]] == contexts
