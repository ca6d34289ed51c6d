"""``ragrail add`` for a conversation: the labels given after each ``--question`` (or after
``--turn K``) are that turn's.

Click gathers a repeated option's values into one list, losing how they interleave with the
other options; :class:`InOrder` keeps the order the options were given in, so
``-q "How much is Basic?" -s pricing -f '$8' -q "And on Pro?" -s pricing -f '$12'`` reads as
two turns, each with its own source and fact.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ragrail.errors import InputError

if TYPE_CHECKING:
    from ragrail.online.record import Conversation

ORDER = "ragrail.option_order"  # ctx.meta key: the options' names, once per occurrence
PER_TURN = ("question", "sources", "facts", "expect", "turn")


class InOrder(click.Command):
    """A command that records the order its options were given in (``ctx.meta[ORDER]``)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not ctx.resilient_parsing:
            # a first pass only for the order: the second, click's own, reports any mistake
            try:
                _, _, order = self.make_parser(ctx).parse_args(args=list(args))
            except click.UsageError:
                order = []
            ctx.meta[ORDER] = [param.name for param in order]
        return super().parse_args(ctx, args)


@dataclass
class TurnLabels:
    """What the command line says about one turn (a None question: the logged one)."""

    question: str | None = None
    sources: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    expect: str | None = None


def turn_labels(values: dict[str, tuple[Any, ...]], logged_turns: int = 0) -> list[TurnLabels]:
    """The turns the options describe, in the order they were given.

    ``--question`` starts the next turn (the first is turn 1); ``--source``, ``--fact`` and
    ``--expect`` belong to the turn of the ``--question`` (or ``--turn K``) before them,
    turn 1 before any. With ``--from-log`` (``logged_turns``: the logged conversation's
    turns) the questions are the logged ones: ``--turn K`` picks turn K and ``--question``
    replaces the current turn's question.
    """
    order = click.get_current_context().meta.get(ORDER)
    if order is None:  # called without InOrder: everything is turn 1's
        order = [name for name in PER_TURN for _ in values.get(name, ())]
    turns = [TurnLabels() for _ in range(max(logged_turns, 1))]
    taken = dict.fromkeys(PER_TURN, 0)
    current, asked = 0, False
    for name in order:
        if name not in PER_TURN:
            continue
        value = values[name][taken[name]]
        taken[name] += 1
        if name == "turn":
            current = _turn_number(value, len(turns), logged_turns) - 1
        elif name == "question":
            if not logged_turns and asked:
                turns.append(TurnLabels())
                current = len(turns) - 1
            turns[current].question, asked = value, True
        elif name == "expect":
            if turns[current].expect is not None:
                raise InputError(f"turn {current + 1}: --expect given twice")
            turns[current].expect = value
        else:
            getattr(turns[current], name).append(value)
    return turns


def _turn_number(value: int, known: int, logged_turns: int) -> int:
    if 1 <= value <= known:
        return value
    if logged_turns:
        raise InputError(f"--turn {value}: the logged conversation has turns 1 to {logged_turns}")
    raise InputError(f"--turn {value}: give a turn whose --question came before it (1 to {known})")


def conversation_entry(
    conversation_id: str, turns: list[TurnLabels], tags: list[str], logged: list[str]
) -> dict[str, Any]:
    """The golden entry with ``turns`` (``logged``: the logged questions, for a turn given
    none); every turn's facts need a source."""
    entry: dict[str, Any] = {"id": conversation_id}
    if tags:
        entry["tags"] = tags
    entry["turns"] = []
    for k, turn in enumerate(turns, start=1):
        if turn.facts and not turn.sources:
            raise InputError(f"turn {k}: a --fact needs a --source (a fact is found in a source)")
        item: dict[str, Any] = {
            "question": turn.question if turn.question is not None else logged[k - 1],
            "sources": turn.sources,
            "facts": turn.facts,
        }
        if turn.expect is not None:
            item["expect"] = turn.expect
        entry["turns"].append(item)
    return entry


def add_turns(
    path: Path,
    conversation_id: str | None,
    turns: list[TurnLabels],
    tags: list[str],
    logged: Conversation | None,
) -> str:
    """Append the conversation to the golden set; its id (``--id``, or for a logged one
    ``log-<conversation>``). A logged conversation keeps its provenance on every turn."""
    from ragrail.golden import _build
    from ragrail.golden.add import add_conversation

    questions: list[str] = []
    if logged is not None:
        from ragrail.online.cases import log_case_id, provenance_of

        questions = [logged.question, *(t.question for t in logged.turns)]
        conversation_id = conversation_id or log_case_id(logged.id)
    assert conversation_id is not None  # without --from-log, --id was required
    entry = conversation_entry(conversation_id, turns, tags, questions)
    if logged is not None:
        entry["provenance"] = provenance_of(logged)
    try:
        cases = _build(path, [(entry, 0)], path.parent).cases
    except InputError as exc:  # named by the turn; "<file>: case #1" would be no place
        raise InputError(exc.message) from None
    add_conversation(path, cases)
    return conversation_id
