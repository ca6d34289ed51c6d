"""One logged conversation, as stored after ingest (PII already redacted).

A conversation is the user's first question and the bot's answer, the contexts it
retrieved, the outcome signals the app logged, and any follow-up turns (used to find
re-asks). Every outcome field may be missing: a log that never records thumbs simply
has no thumbs-down rate, rather than a rate of 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Context:
    """One retrieved passage as the app logged it."""

    id: str
    source: str
    text: str


@dataclass(frozen=True, slots=True)
class Turn:
    """A follow-up question in the same conversation, ``at`` seconds since the epoch (UTC)."""

    question: str
    at: float | None = None


@dataclass(frozen=True, slots=True)
class Conversation:
    """A logged conversation. ``at`` is seconds since the epoch (UTC); ``thumbs`` is +1 (up),
    -1 (down) or None (no vote); latency is in milliseconds and cost in USD."""

    id: str
    at: float
    version: str
    question: str
    answer: str
    user: str | None = None
    contexts: tuple[Context, ...] = ()
    turns: tuple[Turn, ...] = ()
    thumbs: int | None = None
    escalated: bool | None = None
    resolved: bool | None = None
    latency_ms: float | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost: float | None = None
    # Flags from scoring the answer without labels (``ragrail logs score``), e.g.
    # "unfaithful", "bad-citation", "pii": empty until scored.
    flags: tuple[str, ...] = field(default=())
