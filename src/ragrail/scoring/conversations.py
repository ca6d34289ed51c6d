"""A conversation's verdict: it passes when every turn passes. Totals count conversations
apart from their turns (which count as questions)."""

from __future__ import annotations

from collections.abc import Sequence

from ragrail.records.results import CaseResult


def turn_passes(case: CaseResult) -> bool:
    """A question passes (for its conversation's verdict) with no failed call, an answer
    that passes and every fact retrieved: what ``ragrail.diff.fails`` fails it for."""
    recall = case.retrieval_recall
    return not case.errored and case.answer_pass is not False and (recall is None or recall >= 1)


def conversation_counts(cases: Sequence[CaseResult]) -> dict[str, int]:
    """``n_conversations`` and ``conversations_passed``: a conversation passes when every
    turn passes (:func:`turn_passes`)."""
    passed: dict[str, bool] = {}
    for c in cases:
        if c.conversation is not None:
            passed[c.conversation] = passed.get(c.conversation, True) and turn_passes(c)
    return {"n_conversations": len(passed), "conversations_passed": sum(passed.values())}
