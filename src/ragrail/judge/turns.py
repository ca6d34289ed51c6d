"""A turn of a conversation as the judge reads it: the conversation so far, then the
question. Single questions are read as before, so their prompts (and cached verdicts
and stored validations, keyed by the prompts) are unchanged."""

from __future__ import annotations

from collections.abc import Sequence

from ragrail.records.results import CaseResult

# (question, answer) of an earlier turn; answer None: not shown (a pairwise comparison,
# where each run answered the earlier turns its own way)
Turn = tuple[str, str | None]


def run_histories(cases: Sequence[CaseResult], answers: bool = True) -> dict[str, list[Turn]]:
    """Each turn's earlier turns in the run, by case id: their questions and the answers
    the run gave them (its first answer each; ``answers=False``: questions only)."""
    said: dict[str, list[tuple[int, str, str | None]]] = {}
    for c in cases:
        if c.conversation is not None:
            answer = (c.trace.answer or "") if answers else None
            said.setdefault(c.conversation, []).append((c.turn or 0, c.question, answer))
    return {
        c.id: [
            (q, a)
            for t, q, a in sorted(said[c.conversation], key=lambda x: x[0])
            if t < (c.turn or 0)
        ]
        for c in cases
        if c.conversation is not None
    }


def question_in_context(question: str, history: Sequence[Turn]) -> str:
    """What the judge's ``$question`` holds: the question alone, or for a turn after the
    first, the earlier turns (``Customer:`` / ``Assistant:`` lines) and then the
    question, marked as the one to judge."""
    if not history:
        return question
    lines = ["Earlier in this conversation:"]
    for asked, answer in history:
        lines.append(f"Customer: {asked.strip()}")
        if answer is not None:
            lines.append(f"Assistant: {answer.strip() or '(no answer)'}")
    lines += ["", "The customer now asks (judge the answer to this):", question]
    return "\n".join(lines)
