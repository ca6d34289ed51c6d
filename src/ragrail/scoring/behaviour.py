"""Expected behaviour: did a reply answer, say it doesn't know, refuse or escalate, and is
that what its golden case expects?

A case expects one of :data:`EXPECTATIONS` (``Case.expected``: its ``expect``, or by
default ``abstain`` for a case without sources and ``answer`` otherwise). A reply

- **escalated** when the system says so (``escalated: true`` on an outputs-file line,
  in the HTTP reply at ``[system] escalated_field``, or in a Python target's dict: the
  trace's ``escalated``), or when its answer opens with an escalate phrase
  ("I've escalated this to our support team");
- **refused** when its answer opens with a refuse phrase ("I can't help with that");
- **abstained** when its answer opens with an abstain phrase ("I don't know").

Phrases are matched as abstentions always were (:func:`ragrail.scoring.answers.opens_with`):
the first sentence, after leading politeness ("Sorry,", "Leider"), opens with the phrase,
or, for a phrase written ``...X``, ends with it (verb-final languages). They are
``[scoring] abstain_phrases``, ``refuse_phrases`` and ``escalate_phrases``; the defaults
cover English, German, French, Spanish, Hindi and Japanese, and no default is in two lists.

What passes:

- ``escalate``: the reply escalated (an answer that merely holds the facts does not);
- ``refuse``: it refused and did not escalate;
- ``abstain``: it said it doesn't know and did not escalate. A refusal is not an
  "I don't know": one is "the documents do not cover this", the other "I won't"; a
  phrase put in both lists counts for both;
- ``answer``: it neither escalated nor refused, and its facts and citations pass
  (:func:`ragrail.scoring.answers.check_answer`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ragrail.records.case import EXPECTATIONS, Expectation, expected_of  # noqa: F401
from ragrail.scoring.answers import DEFAULT_ABSTAIN_PHRASES, abstains, opens_with
from ragrail.scoring.memo import ScoringCache

DEFAULT_REFUSE_PHRASES: tuple[str, ...] = (
    # English
    "I can't help with that",
    "I cannot help with that",
    "I can't help with this",
    "I cannot help with this",
    "I can't assist with",
    "I cannot assist with",
    "I'm not able to help with",
    "I am not able to help with",
    "I'm unable to help with",
    "I am unable to help with",
    "I can't share",
    "I cannot share",
    "I can't disclose",
    "I cannot disclose",
    "I can't provide",
    "I cannot provide",
    "I can't do that",
    "I cannot do that",
    "I won't",
    "I will not",
    "I'm not allowed to",
    "I am not allowed to",
    "I'm not permitted to",
    "I am not permitted to",
    "I must decline",
    "I have to decline",
    "That's not something I can help with",
    "That is not something I can help with",
    # German
    "Dabei kann ich nicht helfen",
    "Dabei kann ich Ihnen nicht helfen",
    "Damit kann ich nicht helfen",
    "Das kann ich nicht tun",
    "Das darf ich nicht",
    "Ich darf keine",
    "Ich darf das nicht",
    "Ich kann keine Auskunft",
    # after "Leider" (stripped as politeness) the verb comes first: "Leider kann ich ..."
    "kann ich dabei nicht helfen",
    "kann ich Ihnen dabei nicht helfen",
    "kann ich damit nicht helfen",
    "kann ich Ihnen damit nicht helfen",
    "kann ich Ihnen keine Auskunft",
    # French
    "Je ne peux pas vous aider",
    "Je ne peux pas aider",
    "Je ne peux pas partager",
    "Je ne peux pas fournir",
    "Je ne suis pas autorisé",
    "Je ne suis pas autorisée",
    # Spanish
    "No puedo ayudar con eso",
    "No puedo ayudarte con eso",
    "No puedo ayudarle con eso",
    "No puedo compartir",
    "No puedo proporcionar",
    "No estoy autorizado",
    "No estoy autorizada",
    # Hindi: "..." marks a phrase that ends the sentence (the verb comes last)
    "...मदद नहीं कर सकता",
    "...मदद नहीं कर सकती",
    "...साझा नहीं कर सकता",
    "...साझा नहीं कर सकती",
    # Japanese: the verb comes last, so each phrase ends the sentence
    "...お手伝いできません",
    "...お応えできません",
    "...対応できません",
    "...お伝えできません",
    "...提供できません",
)

DEFAULT_ESCALATE_PHRASES: tuple[str, ...] = (
    # English
    "I've escalated",
    "I have escalated",
    "I'm escalating",
    "I am escalating",
    "I'll escalate",
    "I will escalate",
    "Let me escalate",
    "This has been escalated",
    "Your request has been escalated",
    "Your question has been escalated",
    "I've passed this",
    "I have passed this",
    "I've forwarded",
    "I have forwarded",
    "I'm connecting you",
    "I am connecting you",
    "I'll connect you",
    "I will connect you",
    "Let me connect you",
    "I'm transferring you",
    "I am transferring you",
    "I'll transfer you",
    "I will transfer you",
    "Let me transfer you",
    "I'm handing this over",
    "I am handing this over",
    "I've handed this over",
    "I have handed this over",
    "I've created a ticket",
    "I have created a ticket",
    "I've opened a ticket",
    "I have opened a ticket",
    "A member of our support team will",
    "Someone from our support team will",
    "Our support team will",
    "A human agent will",
    # German
    "Ich habe Ihre Anfrage an",
    "Ich habe Ihre Anfrage weitergeleitet",
    "Ich habe das an",
    "Ich leite Ihre Anfrage",
    "Ich leite das an",
    "Ich verbinde Sie",
    "Ich habe ein Ticket",
    "Ein Mitarbeiter wird sich",
    "Unser Support-Team wird sich",
    # French
    "J'ai transmis",
    "J'ai transféré",
    "Je transmets votre demande",
    "Je vous mets en relation",
    "Je vous transfère",
    "J'ai créé un ticket",
    "Un conseiller va vous",
    "Un membre de notre équipe va",
    # Spanish
    "He escalado",
    "He transferido",
    "He remitido",
    "He creado un ticket",
    "Le paso con",
    "Te paso con",
    "Le transfiero",
    "Te transfiero",
    "Un agente se pondrá en contacto",
    # Hindi
    "...टीम को भेज दिया है",
    "...आगे भेज दिया है",
    "...एस्केलेट कर दिया है",
    # Japanese
    "...担当者に引き継ぎました",
    "...担当者におつなぎします",
    "...担当者にお繋ぎします",
    "...サポートチームに転送しました",
    "...エスカレーションしました",
)


def refuses(
    answer: str,
    phrases: Iterable[str] = DEFAULT_REFUSE_PHRASES,
    cache: ScoringCache | None = None,
) -> bool:
    """True when the answer is a refusal: it opens with a refuse phrase. ``cache`` is
    accepted for symmetry with ``abstains`` and not used: right after the abstain check
    of the same answer (its first sentence known by then), the test is two C calls, and
    a memo of it cost more than it saved."""
    return opens_with(answer, phrases)


def escalates(
    answer: str,
    phrases: Iterable[str] = DEFAULT_ESCALATE_PHRASES,
    cache: ScoringCache | None = None,
) -> bool:
    """True when the answer's words say it escalated: it opens with an escalate phrase.
    (The system's own ``escalated`` field is :func:`escalated`'s to read; ``cache``: as
    :func:`refuses`.)"""
    return opens_with(answer, phrases)


def escalated(
    answer: str,
    flag: bool | None,
    phrases: Iterable[str] = DEFAULT_ESCALATE_PHRASES,
    cache: ScoringCache | None = None,
) -> bool:
    """True when the reply escalated: the system said so (``flag``), or its answer does."""
    return flag is True or escalates(answer, phrases, cache)


def behaviour_problems(
    expect: str,
    answer: str,
    flag: bool | None = None,
    abstain_phrases: Iterable[str] = DEFAULT_ABSTAIN_PHRASES,
    refuse_phrases: Iterable[str] = DEFAULT_REFUSE_PHRASES,
    escalate_phrases: Iterable[str] = DEFAULT_ESCALATE_PHRASES,
    cache: ScoringCache | None = None,
) -> list[str]:
    """Why the reply did not behave as a case expecting ``expect`` should, or [] (see the
    module docstring). ``flag``: the system's own word on escalating (``Trace.escalated``).
    For ``answer``, [] says only that it neither escalated nor refused: its facts and
    citations are :func:`~ragrail.scoring.answers.check_answer`'s."""
    did_escalate = escalated(answer, flag, escalate_phrases, cache)
    if expect == "escalate":
        return [] if did_escalate else ["should escalate"]
    if expect == "refuse":
        if did_escalate:
            return ["should refuse, not escalate"]
        return [] if refuses(answer, refuse_phrases, cache) else ["should refuse"]
    if expect == "abstain":
        if did_escalate:
            return ["should say it doesn't know, not escalate"]
        return [] if abstains(answer, abstain_phrases, cache) else ["should say it doesn't know"]
    if did_escalate:
        return ["escalated instead of answering"]
    if refuses(answer, refuse_phrases, cache):
        return ["refused instead of answering"]
    return []


def expectation_counts(cases: Iterable[Any]) -> dict[str, tuple[int, int]]:
    """Per expected behaviour, in :data:`EXPECTATIONS` order and only those some question
    expects, (questions, questions whose answer passed); a question that errored counts
    and never passes. ``cases``: scored cases (``sources``, ``expect``, ``answer_pass``).
    {} when no question expects ``refuse`` or ``escalate``: the scorecards of golden sets
    that do not use them read as they always did."""
    counts: dict[str, list[int]] = {e: [0, 0] for e in EXPECTATIONS}
    for case in cases:
        tally = counts[expected_of(case.sources, case.expect)]
        tally[0] += 1
        tally[1] += case.answer_pass is True
    if not counts["refuse"][0] and not counts["escalate"][0]:
        return {}
    return {e: (n, passed) for e, (n, passed) in counts.items() if n}


def describe_counts(counts: Mapping[str, Any], sep: str = " · ") -> str:
    """``answer 9/10 · abstain 2/2 · refuse 1/1 · escalate 0/1``; ``counts`` maps each
    behaviour to (n, passed) or to an object with ``n`` and ``passed``."""
    parts = []
    for name, value in counts.items():
        n, passed = value if isinstance(value, tuple) else (value.n, value.passed)
        parts.append(f"{name} {passed}/{n}")
    return sep.join(parts)
