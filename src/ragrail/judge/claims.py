"""Claim-level faithfulness: the judge splits an answer into claims and says which
the retrieved context supports."""

from __future__ import annotations

from collections.abc import Sequence
from string import Template
from typing import Any

from ragrail.judge.replies import ClaimsReply, parse_reply
from ragrail.judge.turns import Turn, question_in_context
from ragrail.records.results import CaseResult, JudgeClaim


def context_text(case: CaseResult) -> str:
    """The retrieved chunks as the judge reads them, each with its id."""
    return "\n\n".join(f"[{c.id}] {c.text}" for c in case.trace.retrieved) or "(none)"


def claims_prompt(template: str, case: CaseResult, history: Sequence[Turn] = ()) -> str:
    """``history``: a turn's earlier turns, shown before its question (``judge.turns``)."""
    return Template(template).safe_substitute(
        question=question_in_context(case.question, history),
        context=context_text(case),
        answer=case.trace.answer or "",
    )


def apply_claims(case: CaseResult, results: Sequence[Any]) -> None:
    """Record a case's claim verdicts (each repeat's call result): faithfulness is the
    share of claims supported; a failed call is a judge error, never a score."""
    judged = case.judge
    assert judged is not None
    scores = []
    for res in results:
        if res.error is not None:
            judged.errors.append(f"faithfulness: {res.error}")
            continue
        reply = parse_reply(res.text, ClaimsReply)
        claims = [
            JudgeClaim(text=c.claim, supported=c.supported, chunk=c.chunk) for c in reply.claims
        ]
        score = sum(c.supported for c in claims) / len(claims) if claims else None
        if not judged.claims and score is not None:
            judged.claims = claims
        if score is not None:
            scores.append(score)
    if judged.errors:
        return
    judged.faithfulness_runs = scores
    judged.faithfulness = scores[0] if scores else None
    judged.faithfulness_stable = len(set(scores)) <= 1
