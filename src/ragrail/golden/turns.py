"""Conversations in a golden set: an entry with ``turns`` becomes one case per turn.

An entry ``{"id": "pro-plan-followup", "tags": [...], "turns": [{"question": ...,
"facts": [...], "sources": [...]}, ...]}`` reads as the cases ``"pro-plan-followup turn
1"``, ``"pro-plan-followup turn 2"``, ... in order, each with ``conversation`` (the entry's
id) and ``turn`` (its number from 1). A turn takes what a case takes (question, sources,
facts, expect, checks, tags); the entry's ``tags`` and ``checks`` apply to every turn (before
the turn's own), and its ``provenance`` (a logged conversation's) is every turn's.

Cases already written one per turn (a CSV's ``conversation`` and ``turn`` columns, or cases
dumped from a loaded set) read the same way; either way a conversation's turns must be
numbered 1, 2, ... in the order of the file, since turn k is asked with turns 1..k-1 before it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ragrail.errors import InputError
from ragrail.records.case import Case, turn_id

# What an entry holding ``turns`` may say besides them, and what each turn may say.
ENTRY_KEYS = frozenset({"id", "turns", "tags", "checks", "provenance"})
TURN_KEYS = frozenset({"question", "sources", "grades", "facts", "tags", "expect", "checks"})


def expand_turns(raw: Iterable[tuple[Any, int]], path: Path) -> Iterator[tuple[Any, int]]:
    """The golden items with each conversation entry replaced by its turns, one item per
    turn at the entry's line; other items pass unchanged."""
    for index, (item, line) in enumerate(raw):
        if isinstance(item, dict) and "history" in item:
            where = f"{path}:{line}" if line else f"{path}: case #{index + 1}"
            raise InputError(
                f'{_label(item, index)}: "history" is filled at run time with the '
                'system\'s own answers; write a conversation as "turns"',
                where,
            )
        if not isinstance(item, dict) or "turns" not in item:
            yield item, line
            continue
        where = f"{path}:{line}" if line else f"{path}: case #{index + 1}"
        for turn in entry_turns(item, _label(item, index), where):
            yield turn, line


def entry_turns(item: dict[str, Any], label: str, where: str) -> list[dict[str, Any]]:
    """The per-turn case items of one entry holding ``turns`` (its id checked here; each
    item's fields are checked as a case's)."""
    extra = sorted(set(item) - ENTRY_KEYS)
    if extra:
        hint = " (it belongs in each turn)" if extra[0] in TURN_KEYS else ""
        raise InputError(f'{label}: unknown field {extra[0]!r} beside "turns"{hint}', where)
    conversation = item.get("id")
    if not isinstance(conversation, str) or not conversation.strip():
        raise InputError(f'{label}: a conversation needs an "id"', where)
    turns = item["turns"]
    if not isinstance(turns, list) or not turns:
        raise InputError(f"{label}: field 'turns' must be a non-empty list of turns", where)
    shared_tags = _list(item.get("tags", []), f"{label}: field 'tags'", where)
    shared_checks = _list(item.get("checks", []), f"{label}: field 'checks'", where)
    out: list[dict[str, Any]] = []
    for k, turn in enumerate(turns, start=1):
        name = f"{label} turn {k}"
        if not isinstance(turn, dict):
            raise InputError(f"{name}: a turn must be an object", where)
        unknown = sorted(set(turn) - TURN_KEYS)
        if unknown:
            raise InputError(f"{name}: unknown field {unknown[0]!r} in a turn", where)
        own_tags = _list(turn.get("tags", []), f"{name}: field 'tags'", where)
        case: dict[str, Any] = {"id": turn_id(conversation, k), **turn}
        tags = list(dict.fromkeys([*shared_tags, *own_tags]))  # each once, in order
        if tags:
            case["tags"] = tags
        checks = [*shared_checks, *_list(turn.get("checks", []), f"{name}: field 'checks'", where)]
        if checks:
            case["checks"] = checks
        if "provenance" in item:
            case["provenance"] = item["provenance"]
        case["conversation"] = conversation
        case["turn"] = k
        out.append(case)
    return out


def check_conversations(cases: Sequence[Case], where: Any) -> None:
    """Each conversation's turns are numbered 1, 2, ... in file order. ``where(case_id)``
    names a case's place for the error."""
    last: dict[str, int] = {}
    single = {case.id for case in cases if case.conversation is None}
    for case in cases:
        if case.conversation is None or case.turn is None:
            continue
        if case.conversation in single:
            raise InputError(
                f"conversation {case.conversation!r} has the id of a single question: "
                "give one of them another id",
                where(case.id),
            )
        expected = last.get(case.conversation, 0) + 1
        if case.turn != expected:
            raise InputError(
                f"case {case.id!r}: conversation {case.conversation!r} is at turn "
                f"{expected - 1} here; its turns must be numbered 1, 2, ... in order",
                where(case.id),
            )
        last[case.conversation] = case.turn


def conversations(cases: Iterable[Case]) -> dict[str, list[Case]]:
    """The turns of each conversation by its id, in order (single questions left out)."""
    out: dict[str, list[Case]] = {}
    for case in cases:
        if case.conversation is not None:
            out.setdefault(case.conversation, []).append(case)
    return out


def _label(item: dict[str, Any], index: int) -> str:
    return f"case {item['id']!r}" if isinstance(item.get("id"), str) else f"case #{index + 1}"


def _list(value: Any, what: str, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise InputError(f"{what} must be a list", where)
    return value
