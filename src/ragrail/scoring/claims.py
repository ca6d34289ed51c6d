"""Deterministic faithfulness: split an answer into claims, check each against the context.

Claims: citation markers (``[refund-policy#2]``, ``[sso #1]``, ``【sso#1】``, a source's
number ``[1]``, a framework's node id) are removed first. The answer is split into lines,
each line into sentences, each sentence into clauses at commas, semicolons and colons and
at a clause-joining "and"/"but":

- a sentence ends at ``.``, ``!`` or ``?`` followed by a space, and at ``。``,
  ``！``, ``？``, ``।``, ``॥`` and ``؟`` wherever they stand;
- a full stop after a common abbreviation does not end a sentence: never after
  ``e.g.``, ``i.e.``, ``Dr.``, ``Mr.``, ``Mrs.``, ``vs.``, ``approx.``, a single
  letter (an initial) or a list number, nor after ``No.`` before a number
  (``No. 5``); after ``etc.``, ``a.m.``,
  ``p.m.``, ``U.S.`` only when the next word starts with a capital letter
  (``at 3 p.m. on Monday`` is one sentence, ``before 3 p.m. We ship`` two). A
  decimal point (``2.5``) is never followed by a space, so it never ends one;
- list items are claims of their own and their numbering or bullet is dropped:
  ``1. Go to Settings. 2. Click Save.`` gives "Go to Settings" and "Click
  Save"; ``- item`` and ``* item``, ``1)``, ``(1)``, ``a.`` and ``a)`` the same.
  A line ending in a colon ("Here are the steps:") leads into a list and is
  not a claim.

A fragment with no content word is not a claim: "Yes.", "Thanks!", and a bare
number or list label ("2", "10%") say nothing checkable on their own.

Support: a claim is supported by the retrieved text when

1. every number in it (amounts, percentages, durations: ``10%``, ``₹150``,
   ``30``) appears as a number in the retrieved text (``10%`` needs ``10%``;
   ``150`` does not match ``149``; fullwidth ``３０`` and Devanagari ``३०``
   are ``30``), and
2. at least half of its content words appear there: the terms of
   ``ragrail.text.tokens`` in the project's ``[pipeline] language`` (words
   of any script, stop words dropped, stemmed; Japanese and other text written
   without spaces as character bigrams).

faithfulness = supported claims / claims (None when there is no claim).

Limits, on purpose: it checks words, not meaning. A faithful paraphrase with
other words ("half an hour" for "30 minutes") counts as unsupported, and a
claim that rearranges supported words into a false statement counts as
supported. That is why it is a deterministic *first* check; the LLM judge
checks meaning where this is too blunt.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import filterfalse

from ragrail.scoring import scan
from ragrail.scoring.markers import CodeSpans  # code's brackets index: `args[1]` stays
from ragrail.scoring.memo import ScoringCache
from ragrail.text.tokens import ascii_digits, is_cjk, terms
from ragrail.text.tokens import term_set as _term_set

# A citation as ragrail.scoring.markers.citations reads one: a bracket pair (ASCII,
# fullwidth or lenticular) every part of which is an id#n ("[sso #1]", "[sso#1, plans#2]"),
# a source's number ("[1]", "[1, 3]") or a framework's opaque node id (a UUID or 16+ hex
# digits). Claims are read without the contexts' ids, so those two forms stand for them.
_BRACKET = re.compile(r"[\[［【]([^\[\]［］【】\n]{1,500})[\]］】]")
_OPENING_BRACKETS = "[［【"
_CITE_PART = re.compile(
    r"\s*(?:[^#]*?[^#\s]\s*#\s*\d+|[1-9][0-9]{0,2}"
    r"|[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}|[0-9a-fA-F]{16,64})\s*"
)
_ID_PART = re.compile(r"\s*[^#]*?[^#\s]\s*#\s*\d+\s*")  # in code, only an id#n cites
_CITE_SEPARATORS = re.compile(r"[,;、，；]")
_LINES = re.compile(r"\s*\n\s*")
# A sentence end: . ! ? followed by white space (after any closing quote or
# bracket), or a CJK or Indic end mark wherever it stands.
_END = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s)|[。！？।॥؟]+[\"'”’)\]」』）]*\s*")
_END_MARKS = ".!?。！？।॥؟"  # every _END match begins with one
_CLOSERS = "\"'”’)]"
_LAST_WORD = re.compile(r"(\S+)$")
_NEXT_CHAR = re.compile(r"\s*(\S)")
_MARKER = re.compile(r"^(?:[-*+•‣◦·▪–—]|\(?\d{1,3}[.)]|\(\d{1,3}\)|\(?[A-Za-z][.)])\s+")
_NUMBER_ONLY = re.compile(r"\(?\d{1,3}")
_INLINE_ITEM = re.compile(r"\s+\(\d{1,3}\)\s+")  # "(1) Open the app (2) Tap Save"
# "(e.g., Settings)" and "i.e., 12 characters" keep their comma: it opens an example
_CLAUSES = re.compile(r"(?<!\be\.g\.)(?<!\bi\.e\.)\s*[,;:]\s+|\s+(?:and|but)\s+(?=\w+\s+\w+)", re.I)
_NUMBER = re.compile(r"(?<![\d.])(\d+(?:[.,]\d+)*)(\s?%)?")
_LEAD = re.compile(r"^(?:and|but|or|so)\s+", re.I)
_TRIM = " \t.,;!?\"'。！？।॥؟「」『』（）"
# A full stop after these never ends a sentence: what follows is part of it.
NEVER_FINAL = frozenset(
    "e.g eg i.e ie dr mr mrs ms prof vs approx cf fig ca st jr sr incl esp viz".split()
)
# These may end a sentence: they do when the next word starts with a capital letter.
MAYBE_FINAL = frozenset("etc a.m p.m am pm u.s u.k inc ltd co corp".split())
# Pleasantries carry no claim about the world.
SMALL_TALK = frozenset(
    """yes ok okay sure thank thanks please hello hi sorry great danke bitte hallo merci
    bonjour gracias hola ja oui sí धन्यवाद नमस्ते कृपया etc""".split()
)


def _ends_sentence(text: str, start: int, end: int) -> bool:
    """Whether the full stop at ``text[end - 1]`` ends the sentence begun at ``start``."""
    match = _LAST_WORD.search(text, start, end - 1)
    if match is None:
        return True
    word = match.group(1).lower().lstrip("(\"'“‘")
    following = _NEXT_CHAR.match(text, end)
    after = following.group(1) if following is not None else ""
    if (len(word) == 1 and word.isalpha()) or word in NEVER_FINAL:
        return False
    if word in ("no", "nos"):
        return not after.isdigit()  # "No. 5" is a number; "The answer is no." ends
    if _NUMBER_ONLY.fullmatch(word) and not text[start : match.start()].strip():
        return False  # "1." opening a sentence is a list number
    if word in MAYBE_FINAL:
        return after.isupper()
    return True


def sentences(text: str) -> list[str]:
    """The sentences of one line (see the module docstring for where they end)."""
    out, start = [], 0
    for match in scan.finditer(_END, text, _END_MARKS):
        mark = match.group().rstrip()
        if mark[0] == "." and not _ends_sentence(text, start, match.start() + 1):
            continue
        following = _NEXT_CHAR.match(text, match.end())
        quoted = mark[0] in ".!?" and mark[-1] in _CLOSERS
        if quoted and following is not None and not following.group(1).isupper():
            # 'Click "Forgot password?" on the sign-in page': a quoted ? or ! ends the
            # sentence only when a capital letter starts the next one
            continue
        out.append(text[start : match.end()])
        start = match.end()
    out.append(text[start:])
    return [s.strip() for s in out if s.strip()]


def _trim(clause: str) -> str:
    """The clause without leading and trailing punctuation, but with the full stop
    of a closing abbreviation ("at 6 p.m.", "and so on, etc.") kept."""
    trimmed = clause.strip(_TRIM)
    rest = clause.strip()[len(trimmed) :] if clause.strip().startswith(trimmed) else ""
    if rest.startswith("."):
        last = _LAST_WORD.search(trimmed)
        if last is not None and last.group(1).lower() in NEVER_FINAL | MAYBE_FINAL:
            return trimmed + "."
    return trimmed


def strip_citations(answer: str) -> str:
    """The answer without its citation markers; other brackets ("[Save]") stay."""
    kept, last = [], 0
    code = CodeSpans(answer)
    for m in scan.finditer(_BRACKET, answer, _OPENING_BRACKETS):
        part = _ID_PART if m.start() in code else _CITE_PART
        if all(part.fullmatch(p) for p in _CITE_SEPARATORS.split(m.group(1))):
            start = m.start()
            while start > last and answer[start - 1].isspace():  # str.isspace is regex \s
                start -= 1  # the white space before a citation goes with it
            kept.append(answer[last:start])
            last = m.end()
    return "".join(kept) + answer[last:] if kept else answer


@functools.cache
def _small_talk(language: str) -> frozenset[str]:
    return frozenset(terms(" ".join(SMALL_TALK), language))


@functools.cache
def _ascii_small_talk(language: str) -> frozenset[str]:
    """The terms of the ASCII small-talk words: an all-ASCII clause can only match these
    (no non-ASCII small-talk word has an ASCII term, a test checks), and working out the
    others builds the Unicode tables, a tenth of a second an English run need not pay."""
    return frozenset(terms(" ".join(w for w in SMALL_TALK if w.isascii()), language))


def _is_claim_terms(words: frozenset[str], language: str) -> bool:
    """is_claim, given the clause's distinct terms."""
    ascii_only = all(map(str.isascii, words))
    small_talk = _ascii_small_talk(language) if ascii_only else _small_talk(language)
    # a generator, not a set difference: the first word usually settles it
    return any(w not in small_talk and not w.isdigit() for w in words)


def is_claim(clause: str, language: str = "en") -> bool:
    """True when a clause has a content word: not small talk, not a bare number or label."""
    return _is_claim_terms(_term_set(clause, language), language)


def term_set(text: str, language: str, cache: ScoringCache | None = None) -> frozenset[str]:
    """The distinct terms of a text; with a run's ``cache``, worked out once per distinct
    text and language, whether the text is a context or a claim (an answer that quotes
    a chunk makes the same string both)."""
    if cache is None:
        return _term_set(text, language)
    memo = cache.table(("terms", language))
    found = memo.get(text)
    if found is None:
        found = memo.put(text, _term_set(text, language))
    return found


def _clauses(item: str) -> list[str]:
    """``_CLAUSES.split(item)``, without running the pattern over an item that has none
    of the characters and words it splits at (most sentences of most answers)."""
    if "," in item or ";" in item or ":" in item:
        return _CLAUSES.split(item)
    low = item.lower()
    if "and" in low or "but" in low:
        return _CLAUSES.split(item)
    return [item]


def _claims_with_terms(
    answer: str, language: str, cache: ScoringCache | None = None
) -> list[tuple[str, frozenset[str]]]:
    """Each claim of the answer with its distinct terms, worked out once for both uses."""
    text = strip_citations(answer)
    claims = []
    for line in _LINES.split(text) if "\n" in text else [text]:
        if line.endswith(":"):
            continue  # "Here are the steps:" leads into a list; it claims nothing itself
        for sentence in sentences(line):
            body = _MARKER.sub("", sentence)
            for item in _INLINE_ITEM.split(body) if "(" in body else [body]:
                for clause in _clauses(item):
                    clause = _trim(_LEAD.sub("", clause.strip()))
                    if not clause:
                        continue
                    words = term_set(clause, language, cache)
                    if _is_claim_terms(words, language):
                        claims.append((clause, words))
    return claims


def split_claims(answer: str, language: str = "en") -> list[str]:
    """The answer's claims, in order (see the module docstring for the rule)."""
    return [claim for claim, _ in _claims_with_terms(answer, language)]


def numbers(text: str) -> set[str]:
    """Numbers in a text, thousands separators removed, ``%`` kept: {"10%", "150"}.

    A digit run glued to a letter ("v2", "mp3") is a name, not a number, except
    after Han or Kana, which need no space before a number ("購入後30日").
    """
    if not text.isascii():
        text = ascii_digits(unicodedata.normalize("NFKC", text))
    out = set()
    # in ASCII text every number begins with an ASCII digit: try the pattern only there
    found = scan.finditer(_NUMBER, text, "0123456789") if text.isascii() else _NUMBER.finditer(text)
    for m in found:
        before = text[m.start() - 1] if m.start() else " "
        if before == "_" or (before.isalnum() and not is_cjk(before)):
            continue
        out.add(m.group(1).replace(",", "") + ("%" if m.group(2) else ""))
    return out


@dataclass(frozen=True)
class ClaimVerdict:
    claim: str
    supported: bool
    reason: str  # why not, when unsupported


def check_claim(
    claim: str, context_terms: set[str], context_numbers: set[str], language: str = "en"
) -> ClaimVerdict:
    missing_numbers = sorted(numbers(claim) - context_numbers)
    if missing_numbers:
        return ClaimVerdict(claim, False, f"number {', '.join(missing_numbers)} not in the context")
    words = [w for w in set(terms(claim, language)) if not w.isdigit()]
    if words:
        covered = sum(1 for w in words if w in context_terms)
        if covered * 2 < len(words):
            return ClaimVerdict(
                claim, False, f"{covered} of {len(words)} content words in the context"
            )
    return ClaimVerdict(claim, True, "")


@dataclass(frozen=True)
class ClaimParts:
    """What the support check reads of one claim."""

    text: str
    numbers: frozenset[str]
    words: frozenset[str]  # its distinct terms, bare numbers left out


def claim_parts(
    answer: str, language: str = "en", cache: ScoringCache | None = None
) -> tuple[ClaimParts, ...]:
    """The answer's claims, each with its numbers and content words."""
    return tuple(
        ClaimParts(claim, frozenset(numbers(claim)), _without_numbers(words))
        for claim, words in _claims_with_terms(answer, language, cache)
    )


def _without_numbers(words: frozenset[str]) -> frozenset[str]:
    """The words that are not bare numbers (most claims have none: the same set then)."""
    return frozenset(filterfalse(str.isdigit, words)) if any(map(str.isdigit, words)) else words


class Evidence:
    """The retrieved texts as the support check reads them, each worked out only when a
    claim needs it: a claim that half the first context's words already support never
    looks at the others, and only a claim with a number looks at numbers.

    It gives the verdicts :func:`check_claim` gives against the contexts joined by line
    breaks: no word runs across a line break, so a word is a term of the joined text
    exactly when it is a term of one context, and so is a number, but for "10" at the
    end of one context and "%" at the start of the next, which the joined text reads
    as "10%". So where a context after the first starts with ``%``, or with a
    non-ASCII character NFKC might make one, the numbers are read from the joined text.
    """

    def __init__(self, contexts: Sequence[str], language: str, cache: ScoringCache) -> None:
        self.contexts = contexts
        self.language = language
        self._cache = cache
        self._term_sets: list[frozenset[str]] = []
        self._all_numbers: frozenset[str] | None = None

    def _terms_of(self, i: int) -> frozenset[str]:
        """The terms of context ``i``, computed once per distinct text."""
        if i < len(self._term_sets):
            return self._term_sets[i]
        found = term_set(self.contexts[i], self.language, self._cache)
        self._term_sets.append(found)
        return found

    def numbers(self) -> frozenset[str]:
        """The numbers of the joined contexts."""
        if self._all_numbers is None:
            if any(c and (c[0] == "%" or not c[0].isascii()) for c in self.contexts[1:]):
                self._all_numbers = frozenset(numbers("\n".join(self.contexts)))
            else:
                parts = []
                memo = self._cache.table("context numbers")
                for text in self.contexts:
                    found = memo.get(text)
                    if found is None:
                        found = memo.put(text, frozenset(numbers(text)))
                    parts.append(found)
                self._all_numbers = frozenset().union(*parts)
        return self._all_numbers

    def verdict(self, claim: ClaimParts) -> ClaimVerdict:
        """:func:`check_claim`'s verdict on one claim."""
        if claim.numbers:
            missing_numbers = sorted(claim.numbers - self.numbers())
            if missing_numbers:
                reason = f"number {', '.join(missing_numbers)} not in the context"
                return ClaimVerdict(claim.text, False, reason)
        words = claim.words
        if words:
            rest = words
            for i in range(len(self.contexts)):
                context_terms = self._terms_of(i)
                if rest <= context_terms:  # every word covered: no need to count
                    return ClaimVerdict(claim.text, True, "")
                rest = rest - context_terms
                if (len(words) - len(rest)) * 2 >= len(words):
                    return ClaimVerdict(claim.text, True, "")
            covered = len(words) - len(rest)
            reason = f"{covered} of {len(words)} content words in the context"
            return ClaimVerdict(claim.text, False, reason)
        return ClaimVerdict(claim.text, True, "")


def check_claims(
    answer: str,
    contexts: Sequence[str],
    language: str = "en",
    cache: ScoringCache | None = None,
) -> list[ClaimVerdict]:
    """Each claim of the answer with its verdict against the retrieved texts. With a
    run's ``cache``, each distinct answer is split and each distinct context read once."""
    cache = cache if cache is not None else ScoringCache()
    memo = cache.table(("claims", language))
    parts = memo.get(answer)
    if parts is None:
        parts = memo.put(answer, claim_parts(answer, language, cache))
    evidence = Evidence(contexts, language, cache)
    return [evidence.verdict(p) for p in parts]


def faithfulness(verdicts: Sequence[ClaimVerdict]) -> float | None:
    """faithfulness = supported claims / claims; None when the answer makes no claim."""
    if not verdicts:
        return None
    return sum(1 for v in verdicts if v.supported) / len(verdicts)
