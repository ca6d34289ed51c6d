"""Conversations in a golden set: an entry's ``turns`` read as one case per turn, in every
format, and the mistakes a hand-written conversation can hold, each named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragrail.errors import InputError
from ragrail.golden import parse_golden
from ragrail.records.case import Case

ENTRY = {
    "id": "pro-plan-followup",
    "tags": ["chat"],
    "turns": [
        {"question": "How much is Basic?", "facts": ["$8"], "sources": ["pricing"]},
        {
            "question": "And on the Pro plan?",
            "facts": ["$12"],
            "sources": ["pricing"],
            "expect": "answer",
            "tags": ["followup"],
        },
    ],
}
SINGLE = {"id": "q1", "question": "What is Kitebase?", "sources": ["intro"], "facts": ["wiki"]}

EXPECTED = [
    {"id": "q1", "question": "What is Kitebase?", "sources": ["intro"], "facts": ["wiki"]},
    {
        "id": "pro-plan-followup turn 1",
        "question": "How much is Basic?",
        "sources": ["pricing"],
        "facts": ["$8"],
        "tags": ["chat"],
        "conversation": "pro-plan-followup",
        "turn": 1,
    },
    {
        "id": "pro-plan-followup turn 2",
        "question": "And on the Pro plan?",
        "sources": ["pricing"],
        "facts": ["$12"],
        "tags": ["chat", "followup"],
        "expect": "answer",
        "conversation": "pro-plan-followup",
        "turn": 2,
    },
]


def _read(text: str, name: str) -> list[dict[str, object]]:
    golden = parse_golden(text, Path(name))
    return [c.model_dump(mode="json", exclude_defaults=True) for c in golden.cases]


def test_json_entry_becomes_one_case_per_turn() -> None:
    assert _read(json.dumps([SINGLE, ENTRY]), "g.json") == EXPECTED


def test_jsonl_and_yaml_read_the_same() -> None:
    import yaml

    jsonl = "\n".join(json.dumps(item) for item in (SINGLE, ENTRY)) + "\n"
    assert _read(jsonl, "g.jsonl") == EXPECTED
    assert _read(yaml.safe_dump({"cases": [SINGLE, ENTRY]}), "g.yaml") == EXPECTED


def test_csv_rows_with_conversation_and_turn_columns() -> None:
    text = (
        "id,question,sources,facts,tags,expect,conversation,turn\n"
        "q1,What is Kitebase?,intro,wiki,,,,\n"
        ",How much is Basic?,pricing,$8,chat,,pro-plan-followup,1\n"
        ",And on the Pro plan?,pricing,$12,chat|followup,answer,pro-plan-followup,\n"
    )
    assert _read(text, "g.csv") == EXPECTED


def test_dumped_cases_read_back_as_the_same_turns() -> None:
    """The one-case-per-turn form (what the API and the shards dump) reads back unchanged."""
    golden = parse_golden(json.dumps([SINGLE, ENTRY]), Path("g.json"))
    dumped = json.dumps([c.model_dump(mode="json") for c in golden.cases])
    assert parse_golden(dumped, Path("g.json")).cases == golden.cases


def test_lines_name_the_entry() -> None:
    text = json.dumps(SINGLE) + "\n\n" + json.dumps(ENTRY) + "\n"
    golden = parse_golden(text, Path("g.jsonl"))
    assert golden.where("pro-plan-followup turn 2") == "g.jsonl:3"


def test_history_is_run_time_only() -> None:
    case = parse_golden(json.dumps([ENTRY]), Path("g.json")).cases[1]
    asked = case.model_copy(
        update={"history": [{"question": "How much is Basic?", "answer": "$8"}]}
    )
    assert asked.history == [{"question": "How much is Basic?", "answer": "$8"}]
    assert "history" not in json.loads(asked.model_dump_json())
    assert asked.model_dump(mode="json") == case.model_dump(mode="json")
    assert Case(id="q", question="q?").history == []


def test_single_questions_carry_no_turn_fields() -> None:
    case = Case(id="q", question="q?")
    assert (case.conversation, case.turn) == (None, None)
    assert json.loads(case.model_dump_json()).keys().isdisjoint({"conversation", "turn"})


def test_shared_checks_come_before_each_turns_own() -> None:
    entry = {
        "id": "c",
        "checks": [{"type": "not_contains", "value": "password"}],
        "provenance": {"from": "production", "conversation": "abc"},
        "turns": [
            {"question": "a?"},
            {"question": "b?", "checks": [{"type": "contains", "value": "b"}]},
        ],
    }
    first, second = parse_golden(json.dumps([entry]), Path("g.json")).cases
    assert [c.value for c in first.checks] == ["password"]  # type: ignore[union-attr]
    assert [c.value for c in second.checks] == ["password", "b"]  # type: ignore[union-attr]
    assert first.provenance == second.provenance == {"from": "production", "conversation": "abc"}


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"id": "c", "turns": []}, "case 'c': field 'turns' must be a non-empty list"),
        ({"id": "c", "turns": "hi"}, "case 'c': field 'turns' must be a non-empty list"),
        ({"id": "c", "turns": ["hi"]}, "case 'c' turn 1: a turn must be an object"),
        (
            {"id": "c", "question": "x?", "turns": [{"question": "a?"}]},
            "case 'c': unknown field 'question' beside \"turns\" (it belongs in each turn)",
        ),
        (
            {"id": "c", "turns": [{"question": "a?"}, {"question": "b?", "id": "x"}]},
            "case 'c' turn 2: unknown field 'id' in a turn",
        ),
        ({"turns": [{"question": "a?"}]}, 'case #1: a conversation needs an "id"'),
        (
            {"id": "c", "turns": [{"question": "a?"}, {"question": " "}]},
            "case 'c turn 2': field 'question': must not be empty",
        ),
        (
            {"id": "c", "turns": [{"question": "a?"}, {"question": "b?", "expect": "answer"}]},
            "case 'c turn 2': field 'case': expect \"answer\" needs the sources",
        ),
        (
            {"id": "c", "question": "a?", "history": [{"question": "x", "answer": "y"}]},
            "case 'c': \"history\" is filled at run time",
        ),
    ],
)
def test_malformed_conversations_are_named(entry: dict[str, object], message: str) -> None:
    with pytest.raises(InputError) as exc:
        parse_golden(json.dumps([entry]), Path("g.json"))
    assert message in exc.value.message


@pytest.mark.parametrize(
    ("cases", "message"),
    [
        (
            [{"id": "c turn 2", "question": "b?", "conversation": "c", "turn": 2}],
            "conversation 'c' is at turn 0 here; its turns must be numbered 1, 2, ... in order",
        ),
        (
            [{"id": "c turn 1", "question": "a?", "conversation": "c"}],
            '"conversation" and "turn" go together',
        ),
        (
            [{"id": "x", "question": "a?", "conversation": "c", "turn": 1}],
            "a turn's id is 'c turn 1', not 'x'",
        ),
        (
            [SINGLE, {"id": "q1", "turns": [{"question": "a?"}]}],
            "conversation 'q1' has the id of a single question",
        ),
        (
            [ENTRY, ENTRY],
            "duplicate case id 'pro-plan-followup turn 1'",
        ),
    ],
)
def test_turns_out_of_order_or_mislabelled(cases: list[object], message: str) -> None:
    with pytest.raises(InputError) as exc:
        parse_golden(json.dumps(cases), Path("g.json"))
    assert message in exc.value.message


def test_csv_turn_that_is_not_a_number() -> None:
    text = "id,question,conversation,turn\n,a?,c,first\n"
    with pytest.raises(InputError) as exc:
        parse_golden(text, Path("g.csv"))
    assert "field 'turn': expected a turn number from 1" in exc.value.message
    assert exc.value.where == "g.csv:2"


def test_lint_names_the_turn() -> None:
    from ragrail.golden import lint_golden

    entry = {
        "id": "pro-plan-followup",
        "turns": [
            {"question": "How much is Basic?", "facts": ["$8"], "sources": ["pricing"]},
            {"question": "And on the Pro plan?", "facts": ["$13"], "sources": ["pricing"]},
        ],
    }
    golden = parse_golden(json.dumps([entry]), Path("g.json"))
    problems = lint_golden(golden, {"pricing": "Basic is $8 a month. Pro is $12 a month."})
    assert [str(p) for p in problems] == [
        "g.json:1: conversation 'pro-plan-followup' turn 2: fact \"$13\" not found in pricing"
    ]
    assert problems[0].case_id == "pro-plan-followup turn 2"


def test_lint_follow_ups_are_not_near_duplicates_and_one_turn_is_warned() -> None:
    from ragrail.golden import lint_golden

    def chat(name: str, first: str) -> dict[str, object]:
        return {"id": name, "turns": [{"question": first}, {"question": "And on the Pro plan?"}]}

    cases = [chat("a", "How much is Basic?"), chat("b", "Can I export to PDF?")]
    cases.append({"id": "c", "turns": [{"question": "Is there an API?"}]})
    problems = lint_golden(parse_golden(json.dumps(cases), Path("g.json")), {})
    assert [str(p) for p in problems] == [
        "g.json:1: warning: conversation 'c': has one turn: write it as a single question, "
        "or add the follow-up it is for"
    ]
