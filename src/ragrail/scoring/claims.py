"""Deterministic faithfulness: split an answer into claims, check each against the context.

Claims: the answer is split into sentences (at . ! ? followed by a space, and
at line breaks and list bullets), then into clauses at commas, semicolons and
a clause-joining "and"/"but". Citation markers like ``[refund-policy#2]`` are
removed first. A fragment with no content word and no number is not a claim
("Yes.", "Thanks!").

Support: a claim is supported by the retrieved text when

1. every number in it (amounts, percentages, durations: ``10%``, ``₹150``,
   ``30``) appears as a number in the retrieved text (``10%`` needs ``10%``;
   ``150`` does not match ``149``), and
2. at least half of its content words (the stand-in retriever's terms:
   lower-cased, stop words dropped, plural ``s`` stripped) appear there.

faithfulness = supported claims / claims (None when there is no claim).

Limits, on purpose: it checks words, not meaning. A faithful paraphrase with
other words ("half an hour" for "30 minutes") counts as unsupported, and a
claim that rearranges supported words into a false statement counts as
supported. That is why it is a deterministic *first* check; the LLM judge
checks meaning where this is too blunt.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragrail.retrieval import terms

_CITE = re.compile(r"\s*\[[^\[\]\s]+#\d+\]")
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+|^\s*[-*•]\s+", re.M)
_CLAUSES = re.compile(r"\s*[,;:]\s+|\s+(?:and|but)\s+(?=\w+\s+\w+)", re.I)
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)*)(\s?%)?")
_LEAD = re.compile(r"^(?:and|but|or|so)\s+", re.I)
# Pleasantries carry no claim about the world.
_SMALL_TALK = frozenset("yes ok okay sure thank thanks please hello hi sorry great".split())


def split_claims(answer: str) -> list[str]:
    """The answer's claims, in order (see the module docstring for the rule)."""
    text = _CITE.sub("", answer)
    claims = []
    for sentence in _SENTENCES.split(text):
        for clause in _CLAUSES.split(sentence or ""):
            clause = _LEAD.sub("", clause.strip()).strip(" .!?\"'")
            if clause and (numbers(clause) or set(terms(clause)) - _SMALL_TALK):
                claims.append(clause)
    return claims


def numbers(text: str) -> set[str]:
    """Numbers in a text, thousands separators removed, ``%`` kept: {"10%", "150"}."""
    return {
        m.group(1).replace(",", "") + ("%" if m.group(2) else "") for m in _NUMBER.finditer(text)
    }


@dataclass(frozen=True)
class ClaimVerdict:
    claim: str
    supported: bool
    reason: str  # why not, when unsupported


def check_claim(claim: str, context_terms: set[str], context_numbers: set[str]) -> ClaimVerdict:
    missing_numbers = sorted(numbers(claim) - context_numbers)
    if missing_numbers:
        return ClaimVerdict(claim, False, f"number {', '.join(missing_numbers)} not in the context")
    words = [w for w in set(terms(claim)) if not w.isdigit()]
    if words:
        covered = sum(1 for w in words if w in context_terms)
        if covered * 2 < len(words):
            return ClaimVerdict(
                claim, False, f"{covered} of {len(words)} content words in the context"
            )
    return ClaimVerdict(claim, True, "")


def check_claims(answer: str, contexts: Sequence[str]) -> list[ClaimVerdict]:
    joined = "\n".join(contexts)
    context_terms = set(terms(joined))
    context_numbers = numbers(joined)
    return [check_claim(c, context_terms, context_numbers) for c in split_claims(answer)]


def faithfulness(verdicts: Sequence[ClaimVerdict]) -> float | None:
    """faithfulness = supported claims / claims; None when the answer makes no claim."""
    if not verdicts:
        return None
    return sum(1 for v in verdicts if v.supported) / len(verdicts)
