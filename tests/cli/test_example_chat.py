"""The bundled multi-turn example: conversations whose follow-ups need their history,
listed by `ragrail example`, passing lint and its own baseline with the stand-in."""

from __future__ import annotations

import json

from ragrail.golden import load_golden
from ragrail.golden.turns import conversations
from ragrail.project import example_dir, example_names


def test_the_example_is_conversations_of_two_to_four_turns():
    assert "kitebase-chat" in example_names()
    golden = load_golden(example_dir("kitebase-chat") / "golden.json")
    chats = conversations(golden.cases)
    assert len(chats) >= 5
    assert all(2 <= len(turns) <= 4 for turns in chats.values())
    # its documents are Kitebase's, unchanged
    for doc in (example_dir("kitebase") / "docs").iterdir():
        chat_doc = example_dir("kitebase-chat") / "docs" / doc.name
        assert chat_doc.read_bytes() == doc.read_bytes()


def test_example_runs_clean_against_its_baseline(cli, tmp_path):
    dest = tmp_path / "chat"
    assert cli("example", "kitebase-chat", str(dest)).code == 0
    assert cli("lint", cwd=dest).code == 0
    r = cli("run", "--json", "results.json", cwd=dest)
    assert r.code == 0, r.out + r.err
    assert "conversations 4 of 7 pass" in r.out
    saved = json.loads((dest / "results.json").read_text(encoding="utf-8"))
    assert (saved["totals"]["n_conversations"], saved["totals"]["conversations_passed"]) == (7, 4)
    turn = next(c for c in saved["cases"] if c["id"] == "invite-expiry turn 2")
    assert (turn["conversation"], turn["turn"]) == ("invite-expiry", 2)
    # the follow-up "How long does it last?" finds the invitations article only through
    # the turn before it
    assert turn["trace"]["retrieved"][0]["source"] == "invite-teammates"
