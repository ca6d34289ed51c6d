"""Conversations in other tools' files: their messages as ragrail's turns, and back.

DeepEval (``ConversationalGolden``, ``ConversationalTestCase``: ``turns`` of ``role`` user or
assistant) and RAGAS (``MultiTurnSample``: ``user_input``, messages of ``type`` human, ai or
tool) both write a conversation as its messages in order. Each user message starts a turn
and is its question; what the assistant said before the next user message is the answer
the logged system gave (several replies joined by a blank line); the passages given with
it (DeepEval's ``retrieval_context``, RAGAS's tool messages) are the turn's retrieved
contexts. A reply before the first question asks nothing and is left out (counted in the
import's note). Turn k of a conversation is ``"<conversation> turn <k>"``.

ragrail's own export writes each turn's labels (sources, facts, expect, tags, checks) in
the user message's ``metadata`` under ``"ragrail"`` (both tools keep a message's metadata
through their save and load), so a golden set taken there and back is the same golden set;
an import reads those labels as they are.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragrail.errors import InputError
from ragrail.interop.rows import RawCase, RawContext

OWN = "ragrail"  # the metadata key holding ragrail's own labels of a turn
# "context_ids": the passages' ids beside a DeepEval retrieval_context, which has no
# field for them (:func:`ragrail.interop.deepeval.own_ids`); never a label
OWN_KEYS = frozenset(
    {"sources", "facts", "expect", "tags", "checks", "conversation", "context_ids"}
)


@dataclass
class Message:
    """One message of a logged conversation, as ragrail reads it."""

    role: str  # "user", "assistant" or "tool"
    content: str
    contexts: list[RawContext] = field(default_factory=list)  # passages given with it
    own: dict[str, Any] | None = None  # ragrail's labels in its metadata


@dataclass
class Dropped:
    """What the files held that ragrail has no place for, counted for one note."""

    counts: Counter[str] = field(default_factory=Counter)

    def add(self, item: dict[str, Any], keys: Sequence[str], unit: str) -> None:
        for key in keys:
            value = item.get(key)
            if value not in (None, "", [], {}):
                self.counts[f"{key}\0{unit}"] += 1

    def note(self) -> list[str]:
        if not self.counts:
            return []
        parts = []
        for key, n in self.counts.items():
            name, unit = key.split("\0")
            parts.append(f"{name} ({n} {unit}{'' if n == 1 else 's'})" if unit else f"{name} ({n})")
        return ["not imported, ragrail has no place for them: " + ", ".join(parts)]


def own_labels(metadata: Any, key: str, where: str) -> dict[str, Any] | None:
    """The labels ragrail's export put in a message's metadata, or None."""
    if not isinstance(metadata, dict) or OWN not in metadata:
        return None
    own = metadata[OWN]
    if not isinstance(own, dict):
        raise InputError(f"field '{key}.{OWN}' must be an object of ragrail labels", where)
    unknown = sorted(set(own) - OWN_KEYS)
    if unknown:
        raise InputError(f"field '{key}.{OWN}' has an unknown label {unknown[0]!r}", where)
    return own


def turns(
    messages: Sequence[Message],
    where: str,
    name: str | None,
    reference: str | None = None,
    reference_contexts: Sequence[RawContext] = (),
    dropped: Dropped | None = None,
) -> list[RawCase]:
    """The turns of one conversation: a case per user message, with the replies and
    passages up to the next one. ``reference`` (the conversation's expected outcome) is
    its last turn's reference answer; ``reference_contexts`` (the conversation's ideal
    context) are every turn's."""
    out: list[RawCase] = []
    replies: list[str] = []
    for message in messages:
        if message.role == "user":
            _close(out, replies)
            replies = []
            case = RawCase(where=where, question=message.content, turn=len(out) + 1)
            case.conversation, case.own = name, message.own
            case.reference_contexts = list(reference_contexts)
            out.append(case)
        elif not out:
            if dropped is not None:
                dropped.counts["replies before the first question\0conversation"] += 1
        else:
            if message.contexts:
                out[-1].contexts = [*(out[-1].contexts or []), *message.contexts]
            if message.role == "assistant" and message.content.strip():
                replies.append(message.content)
            elif message.role == "assistant" and out[-1].contexts is None:
                out[-1].contexts = []
    _close(out, replies)
    if not out:
        if dropped is not None:
            dropped.counts["conversations with no question, a scenario to simulate\0"] += 1
        return out
    if reference is not None and reference.strip():
        out[-1].references = [reference]
    if out[0].own is not None and isinstance(out[0].own.get("conversation"), str):
        name = out[0].own["conversation"]
        for case in out:
            case.conversation = name
    for case in out:
        if case.own is not None:
            case.own = {k: v for k, v in case.own.items() if k != "conversation"}
    return out


def _close(out: list[RawCase], replies: list[str]) -> None:
    """The replies to the turn so far become its answer (a run's output)."""
    if out and replies:
        out[-1].answer = "\n\n".join(replies)
        if out[-1].contexts is None:
            out[-1].contexts = []


def text_field(value: Any, key: str, where: str) -> str:
    if not isinstance(value, str):
        kind = "missing" if value is None else f"not {type(value).__name__}"
        raise InputError(f"field {key!r} must be text ({kind})", where)
    return value


def listed(value: Any, key: str, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise InputError(f"field {key!r} must be a list of messages", where)
    return value


# ---------------------------------------------------------------- export


@dataclass
class ExportTurn:
    """A question to export, with its labels and, from a run, what the system did."""

    id: str
    question: str
    labels: dict[str, Any]  # sources, facts, expect, tags, checks as the golden set has them
    conversation: str | None = None
    answer: str | None = None
    contexts: list[tuple[str, str, str]] | None = None  # (id, source, text); None: no run


def export_turns(cases: Sequence[Any], with_run: bool) -> list[ExportTurn]:
    """Golden-set cases, or a run's case results (``with_run``: their answers and
    contexts too), as the turns an exporter writes."""
    out = []
    for case in cases:
        data = case.model_dump(mode="json", exclude_defaults=True)
        # a run's ``checks`` are its counts of checks passed, not the golden set's checks
        keys = ("sources", "facts", "expect", "tags") + (() if with_run else ("checks",))
        labels = {k: data[k] for k in keys if k in data}
        if getattr(case, "grades", None):
            labels["sources"] = dict(case.grades)
        turn = ExportTurn(case.id, case.question, labels, case.conversation)
        if with_run:
            turn.answer = case.trace.answer
            turn.contexts = [(c.id, c.source, c.text) for c in case.trace.retrieved]
        out.append(turn)
    return out


def grouped(turns_: Sequence[ExportTurn]) -> list[list[ExportTurn]]:
    """Each single question alone, each conversation's turns together, in order."""
    out: list[list[ExportTurn]] = []
    for turn in turns_:
        if turn.conversation is not None and out and out[-1][0].conversation == turn.conversation:
            out[-1].append(turn)
        else:
            out.append([turn])
    return out


def split_kinds(
    units: list[list[ExportTurn]], conversations_wanted: bool
) -> tuple[list[list[ExportTurn]], list[list[ExportTurn]]]:
    """Single questions and conversations apart: the other tools' datasets hold one kind.
    Without a file for the conversations, a run of both kinds is refused."""
    singles = [u for u in units if u[0].conversation is None]
    talks = [u for u in units if u[0].conversation is not None]
    if singles and talks and not conversations_wanted:
        raise InputError(
            f"this holds {len(talks)} conversations and {len(singles)} single questions; "
            "a dataset holds one kind: pass --conversations FILE for the conversations"
        )
    return singles, talks
