"""A conversation's turns shown together in every report: the turns of one conversation
follow each other from where its first turn stands, and each conversation gets a verdict
(it passes when every turn passes)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ragrail.records.results import CaseResult
from ragrail.scoring.conversations import turn_passes


@dataclass(frozen=True)
class Conversation:
    """A conversation's turns in order, and how many passed."""

    id: str
    turns: list[CaseResult]

    @property
    def passed(self) -> int:
        return sum(1 for t in self.turns if turn_passes(t))

    @property
    def failing(self) -> list[int]:
        """The numbers of the turns that did not pass."""
        return [t.turn or 0 for t in self.turns if not turn_passes(t)]

    def verdict(self) -> str:
        """``pass``, or ``FAIL (turn 2 of 3)`` / ``FAIL (turns 2, 3 of 3)``."""
        failing = self.failing
        if not failing:
            return "pass"
        which = ", ".join(map(str, failing))
        return f"FAIL (turn{'s' if len(failing) > 1 else ''} {which} of {len(self.turns)})"


def together(cases: Sequence[CaseResult]) -> list[CaseResult]:
    """The cases with each conversation's turns moved next to its first, in turn order;
    single questions keep their places. The same list (not a copy) when there are none."""
    if not any(c.conversation is not None for c in cases):
        return list(cases)
    groups: dict[str, list[CaseResult]] = {}
    order: list[CaseResult | str] = []
    for c in cases:
        if c.conversation is None:
            order.append(c)
            continue
        if c.conversation not in groups:
            groups[c.conversation] = []
            order.append(c.conversation)
        groups[c.conversation].append(c)
    out: list[CaseResult] = []
    for item in order:
        if isinstance(item, str):
            out.extend(sorted(groups[item], key=lambda c: c.turn or 0))
        else:
            out.append(item)
    return out


def conversations_of(cases: Sequence[CaseResult]) -> list[Conversation]:
    """Each conversation with its turns in order, in the order of their first turns."""
    groups: dict[str, list[CaseResult]] = {}
    for c in together(cases):
        if c.conversation is not None:
            groups.setdefault(c.conversation, []).append(c)
    return [Conversation(id=k, turns=v) for k, v in groups.items()]


def conversations_note(passed: int, total: int) -> str:
    """``conversations 3 of 5 pass``: the scorecard's and the reports' line."""
    return f"conversations {passed} of {total} pass"


def cases_html(cases: Sequence[CaseResult], render: Callable[[CaseResult], str]) -> str:
    """The report's questions, each conversation's turns in one block headed by its
    verdict (``render``: one question's drill-down), after a line counting them."""
    from ragrail.text.guard import escape

    out: list[str] = []
    chats = {c.id: c for c in conversations_of(cases)}
    if chats:
        passed = sum(1 for chat in chats.values() if not chat.failing)
        out.append(
            f"<p class='muted'>{conversations_note(passed, len(chats))}: a conversation "
            "passes when every turn passes; its turns are shown together, in order.</p>"
        )
    shown: set[str] = set()
    for case in together(cases):
        if case.conversation is None:
            out.append(render(case))
        elif case.conversation not in shown:
            shown.add(case.conversation)
            chat = chats[case.conversation]
            out.append(
                f"<section class='conversation'><h3>conversation {escape(chat.id)}: "
                f"{escape(chat.verdict())}</h3>"
                + "".join(render(turn) for turn in chat.turns)
                + "</section>"
            )
    return "".join(out)
