"""Answer checks by code: facts present, citations valid, abstaining when it should.

``check_answer`` returns a list of problems; an empty list is a pass. Facts are found
with :mod:`ragrail.text.matching`, the matcher every other score uses.

**Citations** are chunk ids in brackets, ``[refund-policy#2]``, read as models write them
(:mod:`ragrail.scoring.markers`). A system may instead say which contexts its answer used
(``cited``: their ids, as LlamaIndex's ``source_nodes``); those ids count as citations
written in the answer would.

**Abstention**: an answer abstains when it *is* "I don't know": after leading
punctuation and politeness ("Sorry,", "Unfortunately,", "Leider", "申し訳ありませんが")
its first sentence opens with an abstain phrase, or, for a phrase written with a
leading ``...``, ends with it (verb-final languages put it last: ``...わかりません``
matches "その情報はわかりません。"). A phrase quoted in the middle of a real answer
("... We do not know at this time if ...") is not an abstention. The phrases are
``[scoring] abstain_phrases``; the defaults (:data:`DEFAULT_ABSTAIN_PHRASES`) cover
English, German, French, Spanish, Hindi and Japanese.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Iterable, Mapping, Sequence
from functools import lru_cache

from ragrail.scoring import scan
from ragrail.scoring.markers import citation_key, citations, cites
from ragrail.scoring.memo import ScoringCache
from ragrail.text.matching import as_fact, at_boundaries, find, normalise, slug

__all__ = [
    "DEFAULT_ABSTAIN_PHRASES",
    "abstains",
    "answer_correctness",
    "check_answer",
    "citation_key",
    "citations",
    "cites",
    "missing_facts",
    "normalise",
    "opens_with",
    "slug",
]

DEFAULT_ABSTAIN_PHRASES: tuple[str, ...] = (
    # English
    "I don't know",
    "I do not know",
    "I dont know",
    "I'm not sure",
    "I am not sure",
    "I don't have information",
    "I do not have information",
    "I don't have any information",
    "I do not have any information",
    "I don't have enough information",
    "I do not have enough information",
    "I have no information",
    "I couldn't find",
    "I could not find",
    "I can't find",
    "I cannot find",
    "I was unable to find",
    "I wasn't able to find",
    "I can't answer",
    "I cannot answer",
    "I'm unable to answer",
    "I am unable to answer",
    "There is no information",
    "There's no information",
    "There isn't any information",
    "The help center doesn't cover",
    "The help center does not cover",
    "The documentation doesn't cover",
    "The documentation does not cover",
    "The provided context doesn't",
    "The provided context does not",
    "The context doesn't",
    "The context does not",
    # German
    "Ich weiß es nicht",
    "Ich weiß nicht",
    "Das weiß ich nicht",
    "Das weiß ich leider nicht",
    "Ich weiß leider nicht",
    "Weiß ich nicht",
    "Weiß ich das nicht",
    "Darüber habe ich keine Informationen",
    "Ich kann das nicht beantworten",
    "Ich habe keine Informationen",
    "Dazu habe ich keine Informationen",
    "Ich konnte keine Informationen",
    "Ich kann diese Frage nicht beantworten",
    # French
    "Je ne sais pas",
    "Je n'ai pas d'information",
    "Je n'ai pas cette information",
    "Je n'ai pas trouvé",
    "Je ne trouve pas",
    "Je ne peux pas répondre",
    "Il n'y a aucune information",
    # Spanish
    "No lo sé",
    "No sé",
    "No tengo información",
    "No tengo esa información",
    "No encontré",
    "No he encontrado",
    "No puedo responder",
    # Hindi: "..." marks a phrase that ends the sentence (the verb comes last)
    "मुझे नहीं पता",
    "मुझे पता नहीं",
    "मैं नहीं जानता",
    "मैं नहीं जानती",
    "मुझे इसकी जानकारी नहीं है",
    "मेरे पास इसकी जानकारी नहीं है",
    "मेरे पास कोई जानकारी नहीं है",
    "...मुझे नहीं पता",
    "...जानकारी नहीं है",
    "...जानकारी उपलब्ध नहीं है",
    # Japanese: the verb comes last, so each phrase ends the sentence
    "...わかりません",
    "...分かりません",
    "...わかりかねます",
    "...存じません",
    "...情報がありません",
    "...情報はありません",
    "...見つかりませんでした",
    "...お答えできません",
    "...回答できません",
)
END_MARKS = ("...", "…")  # a phrase starting with one is matched at the end of the first sentence

# Openers that carry no answer: "Sorry, I don't know" is an abstention.
_OPENERS: tuple[str, ...] = tuple(
    normalise(p)
    for p in (
        "I'm sorry",
        "I am sorry",
        "Sorry",
        "Unfortunately",
        "Regrettably",
        "My apologies",
        "Apologies",
        "Hmm",
        "Well",
        "But",
        "However",
        "Based on the provided context",
        "Based on the context",
        "Based on the provided documents",
        "Based on the documents",
        "Based on the information provided",
        "According to the help center",
        "According to the documentation",
        "According to the context",
        "Es tut mir leid",
        "Tut mir leid",
        "Entschuldigung",
        "Leider",
        "Aber",
        "Je suis désolé",
        "Je suis désolée",
        "Désolé",
        "Désolée",
        "Malheureusement",
        "Mais",
        "Lo siento",
        "Lamentablemente",
        "Desafortunadamente",
        "Disculpe",
        "Pero",
        "क्षमा करें",
        "क्षमा कीजिए",
        "माफ़ कीजिए",
        "माफ़ करें",
        "खेद है",
        "लेकिन",
        "申し訳ございませんが",
        "申し訳ありませんが",
        "申し訳ございません",
        "申し訳ありません",
        "すみませんが",
        "すみません",
        "残念ながら",
    )
)
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|[。！？।\n]")
_SENTENCE_MARKS = ".!?。！？।\n"  # every _SENTENCE_END match is one of them


def _is_filler(ch: str) -> bool:
    """Punctuation, spaces and Markdown marks around an abstention: "**Sorry!** ..."."""
    return ch.isspace() or unicodedata.category(ch)[0] == "P" or ch in ">#*~`|"


def _trim(text: str) -> str:
    start, end = 0, len(text)
    while start < end and _is_filler(text[start]):
        start += 1
    while end > start and _is_filler(text[end - 1]):
        end -= 1
    return text[start:end]


def _opening(answer: str) -> str:
    """The answer's first sentence, normalised, after leading politeness."""
    text = _trim(normalise(answer))
    changed = True
    # startswith over the whole tuple first: most answers open with no opener at all
    while changed and text.startswith(_OPENERS):
        changed = False
        for opener in _OPENERS:
            if text.startswith(opener) and at_boundaries(text, 0, len(opener)):
                text = _trim(text[len(opener) :])
                changed = True
    end = scan.search(_SENTENCE_END, text, _SENTENCE_MARKS)
    return _trim(text[: end.start()] if end else text)


@lru_cache(maxsize=64)
def _prepared(phrases: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(phrases that open the first sentence, phrases that end it), normalised."""
    opening = [_trim(normalise(p)) for p in phrases if not p.lstrip().startswith(END_MARKS)]
    ending = [
        _trim(normalise(p.lstrip()[1 if p.lstrip()[0] == "…" else 3 :]))
        for p in phrases
        if p.lstrip().startswith(END_MARKS)
    ]
    return tuple(p for p in opening if p), tuple(p for p in ending if p)


_LAST_PHRASES: list[tuple[object, tuple[tuple[str, ...], tuple[str, ...]]]] = []


def _phrases(phrases: Iterable[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """_prepared(phrases), the last few phrases tuples known again by identity: a run
    passes the same tuples (abstain, refuse, escalate) for every answer, and hashing
    their 80 phrases for the lru_cache costs more than the check itself."""
    for known, prepared in _LAST_PHRASES:
        if known is phrases:
            return prepared
    prepared = _prepared(tuple(phrases))
    if isinstance(phrases, tuple):  # immutable: safe to know again by identity
        _LAST_PHRASES[:] = [(phrases, prepared), *_LAST_PHRASES[:3]]
    return prepared


def abstains(
    answer: str,
    phrases: Iterable[str] = DEFAULT_ABSTAIN_PHRASES,
    cache: ScoringCache | None = None,
) -> bool:
    """True when the answer is an abstention (see the module docstring); with a run's
    ``cache``, decided once per distinct answer (and the same phrases object)."""
    return opens_with(answer, phrases, cache, "abstains")


def opens_with(
    answer: str, phrases: Iterable[str], cache: ScoringCache | None = None, table: str = ""
) -> bool:
    """True when the answer's first sentence, after leading politeness, opens with one of
    ``phrases`` (a phrase written ``...X``: ends with X), as the module docstring says of
    abstentions; refusals and escalations (:mod:`ragrail.scoring.behaviour`) are read
    the same way. With a run's ``cache``, decided once per distinct answer in ``table``."""
    if cache is not None:
        memo = cache.table(table or "opens with")
        seen = memo.get(answer)
        if seen is not None and seen[0] is phrases:
            return seen[1]
        return memo.put(answer, (phrases, _first_opens_with(_last_opening(answer), phrases)))[1]
    return _first_opens_with(_last_opening(answer), phrases)


_LAST_OPENING: tuple[str | None, str] = (None, "")


def _last_opening(answer: str) -> str:
    """:func:`_opening`, the last answer's known again by identity: scoring reads one answer
    with three phrase lists in a row (abstain, escalate, refuse), and working out its first
    sentence is most of each check. One tuple, replaced whole, so threads never mix two."""
    global _LAST_OPENING
    last = _LAST_OPENING
    if last[0] is answer:
        return last[1]
    first = _opening(answer)
    _LAST_OPENING = (answer, first)
    return first


def _first_opens_with(first: str, phrases: Iterable[str]) -> bool:
    """True when ``first`` (an answer's :func:`_opening`) opens or ends with a phrase."""
    opening, ending = _phrases(phrases)
    if first.startswith(opening):  # one C call rules out almost every real answer
        for phrase in opening:
            if first.startswith(phrase) and at_boundaries(first, 0, len(phrase)):
                return True
    if first.endswith(ending):
        for phrase in ending:
            end = len(first)
            if first.endswith(phrase) and at_boundaries(first, end - len(phrase), end):
                return True
    return False


def missing_facts(
    facts: Sequence[str], answer: str, cache: ScoringCache | None = None
) -> list[str]:
    """The facts (labels, in order) not found in the answer; with a run's ``cache``, the
    answer is normalised once per distinct text."""
    text = normalise(answer) if cache is None else cache.memoised(normalise)(answer)
    return [as_fact(f) for f in facts if find(f, text) is None]


def _given_sources(given: Mapping[str, str] | Collection[str]) -> dict[str, str]:
    """Citation key -> source article of each chunk the model was given."""
    if isinstance(given, dict | Mapping):  # dict first: the ABC check is slow
        return {citation_key(cid): source for cid, source in given.items()}
    return {citation_key(cid): cid.split("#")[0] for cid in given}


def check_answer(
    facts: Sequence[str],
    sources: Collection[str],
    answer: str,
    given: Mapping[str, str] | Collection[str],
    abstain_phrases: Iterable[str] = DEFAULT_ABSTAIN_PHRASES,
    missing: Sequence[str] | None = None,
    cache: ScoringCache | None = None,
    used: Sequence[str] = (),
    require_citation: bool = True,
) -> list[str]:
    """Problems with an answer; [] is a pass. ``missing``: :func:`missing_facts` of this
    answer, when the caller has it already; ``cache``: the run's (see ``scoring.memo``).

    - no sources (the documents don't cover it): the answer must abstain;
    - otherwise every fact must be found, every cited id must be a chunk the model
      was given (``given``: chunk id -> its source article, or just the ids when
      they are ``<source>#<n>``), and at least one citation must point at a chunk
      of a source article. The problems name the citations as they were read.

    The citations are the answer's ``[id]`` markers, then ``used``: the ids of the
    contexts the system says the answer used. With ``require_citation`` False, an
    answer citing nothing is no problem; one citing a chunk it was never given, or
    only chunks of other articles, still is: a citation given is checked.
    """
    if not sources:
        return [] if abstains(answer, abstain_phrases, cache) else ["should say it doesn't know"]
    if missing is None:
        missing = missing_facts(facts, answer, cache)
    problems = [f'missing "{fact}"' for fact in missing]
    ids = list(given) if isinstance(given, dict | list | tuple | Mapping) else ()
    cited = citations(answer, cache, ids)
    if used:
        cited = list(dict.fromkeys([*cited, *map(citation_key, used)]))
    known = _given_sources(given)
    unknown = list(dict.fromkeys(cid for cid in cited if cid not in known))
    if unknown:
        problems.append(f"cites a chunk it was never given ({', '.join(unknown)})")
    elif not cited:
        if require_citation:
            problems.append("no citation")
    elif not any(known[cid] in sources for cid in cited):
        shown = ", ".join(_with_article(cid, known[cid]) for cid in dict.fromkeys(cited))
        problems.append(f"wrong article cited ({shown})")
    return problems


def _with_article(cid: str, source: str) -> str:
    """A cited id as a problem names it: with the article it came from when the id does
    not say it (a framework's opaque node id: ``9f2c... from npm-ci``); ``sso#1`` as it is."""
    return cid if cid.rpartition("#")[0] == slug(source) else f"{cid} from {source}"


def answer_correctness(
    facts: Sequence[str], answer: str, missing: Sequence[str] | None = None
) -> float | None:
    """correctness = needed facts found in the answer / needed facts; None with no facts.
    ``missing``: :func:`missing_facts` of this answer, when the caller has it already."""
    if not facts:
        return None
    if missing is None:
        missing = missing_facts(facts, answer)
    return (len(facts) - len(missing)) / len(facts)
