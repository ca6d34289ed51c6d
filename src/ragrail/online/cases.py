"""From production back to the golden set: a logged conversation as a golden case, with its
provenance (``ragrail add --from-log``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragrail.records.case import Case

if TYPE_CHECKING:
    from ragrail.online.record import Conversation


def log_case_id(conversation_id: str) -> str:
    """The case id ``add --from-log`` gives a conversation when no ``--id`` is given:
    ``log-`` and the conversation id as a slug (``log-c-1042`` for ``C 1042``)."""
    from ragrail.text.matching import slug

    return f"log-{slug(conversation_id)}"


def case_from_log(
    conversation: Conversation,
    case_id: str | None = None,
    question: str | None = None,
    sources: list[str] | None = None,
    facts: list[str] | None = None,
    tags: list[str] | None = None,
) -> Case:
    """A case made from a logged conversation: its question (unless another is given),
    the labels given, and its provenance (conversation id, date, app version)."""
    # validated as a golden-set entry is: a fact is read from its text
    return Case.model_validate(
        {
            "id": case_id or log_case_id(conversation.id),
            "question": question if question is not None else conversation.question,
            "sources": sources or [],
            "facts": facts or [],
            "tags": tags or [],
            "provenance": provenance_of(conversation),
        }
    )


def provenance_of(conversation: Conversation) -> dict[str, str]:
    """Where a case made from a logged conversation came from: its id, date, app version."""
    from ragrail.online.sample import iso_date

    return {
        "from": "production",
        "conversation": conversation.id,
        "date": iso_date(conversation.at),
        "version": conversation.version,
    }
