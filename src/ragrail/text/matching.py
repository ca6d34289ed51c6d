"""The one fact matcher: how a labelled fact is found in a document, a chunk or an answer.

``lint``, retrieval recall, context relevance, correctness, answer checks, the
diagnosis and the HTML report all call this module, so a fact found in one place
is found in all of them.

**Normalisation** (:func:`normalise`), applied to the text (and, but for the markup, to
the fact):

- Unicode NFKC, then case folding (``Straße`` = ``STRASSE``, a decomposed ``café``
  = a composed one, the ligature ``ﬁle`` = ``file``, fullwidth ``３０`` = ``30``);
- zero-width characters (U+200B-U+200D, U+2060, U+FEFF) and soft hyphens (U+00AD)
  removed: they are invisible, and editors and CMSs insert them;
- curly quotes made straight (models write ``don’t``), dashes and the minus sign
  made ``-`` (``9–5`` = ``9-5``);
- Markdown emphasis and code marks removed where they pair up as markup
  (:func:`ragrail.text.markup.markup_spans`), since models and help centers write
  ``within **30 days**``; ``snake_case``, ``5 * 3`` and a lone ``_logs`` keep theirs;
- every run of whitespace (NBSP, ideographic space, line breaks) made one space, and
  none kept at either end.

**Token boundaries.** A fact that begins with a letter or a digit matches only where
the text does not continue a word or number before it, and one that ends with a
letter or digit only where the text does not continue one after it: ``30 days`` is
not in ``130 days``, ``Pro`` is not in ``Professional``, ``$10`` is not in ``$100``
nor in ``$10,000`` (a number goes on across ``.`` or ``,`` followed by a digit). A
fact that begins or ends with punctuation is free on that side. Scripts written
without spaces (Han, kana, Hangul, Thai, Lao, Khmer, Myanmar) need no boundary:
``返金`` is found in ``返金ポリシー``. Combining marks belong to the letter before
them, so a Devanagari word is not found inside a longer one.

**Facts as written.** A fact is normalised the same way except that markup is not
removed from it: its ``*``, ``_`` and `````` ` `````` are its own characters. The fact
``_logs`` is found in ``the _logs folder`` and in ``the `_logs` folder`` but not in
``your npm logs``; ``__init__`` is found in ``run `__init__.py```` (a code span keeps
its text) and in ``edit __init__.py``: a fact with marks of its own is also looked for
in the text as written (:class:`~ragrail.text.markup.Unmarked`), where Markdown would
pair those marks as bold, and the span found is mapped onto the text without markup. A
fact without marks is never looked for there: ``init`` is not found in ``__init__.py``
by this route, only as the text without markup has it.

**Facts** come in three forms (:class:`Fact`): a string; ``{"any": ["10%", "10
percent"]}``, found when one alternative is; ``{"regex": "..."}``, searched in the
normalised text case-insensitively (write ``ss`` for ``ß``), whose matches obey the
same token boundaries. A fact is a ``str``: its readable label (``10% | 10
percent``, ``/pattern/``), so results, problems and reports show facts as text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Annotated, Any

from pydantic import PlainSerializer, PlainValidator

from ragrail.text.markup import Unmarked, has_marks, markup_spans, unmark_keeping

ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff\u00ad"
# Regexes, not str.translate: translate with a mapping walks non-ASCII text 50x slower.
_INVISIBLE = re.compile(f"[{ZERO_WIDTH}]")
_PLAIN = {"\u2018": "'", "\u2019": "'", "\u201b": "'", "\u201c": '"', "\u201d": '"', "\u201f": '"'}
_PLAIN.update(dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"))
_FANCY = re.compile(f"[{''.join(_PLAIN)}]")
_NUMBER_JOINERS = ".,"

# Scripts written without spaces between words: a fact in them needs no boundary.
_SPACELESS = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x1780, 0x17FF),  # Khmer
    (0x2E80, 0x2FDF),  # CJK radicals
    (0x3005, 0x3007),  # 々 〆 〇
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3130, 0x318F),  # Hangul compatibility Jamo
    (0x31F0, 0x31FF),  # Katakana extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # halfwidth Katakana
    (0x20000, 0x3FFFF),  # CJK extensions B and later
)


def _fold(text: str) -> str:
    """Normalisation without the markup removal and whitespace collapse (see the module
    docstring)."""
    text = unicodedata.normalize("NFKC", _INVISIBLE.sub("", text))
    # case folding can decompose ("ǰ" folds to j + combining caron): compose again
    text = unicodedata.normalize("NFKC", text.casefold())
    return _FANCY.sub(lambda m: _PLAIN[m.group(0)], text)


@lru_cache(maxsize=8192)
def normalise(text: str) -> str:
    """The text as facts are matched in it (see the module docstring); cached, since the
    same chunk is normalised for retrieval, relevance and diagnosis of many questions."""
    # split() breaks at the characters regex \s matches (str.isspace), many times faster.
    # Markup pairs the same before and after the white space is collapsed (a space is a
    # space however long the run), and a dropped mark touches a non-space on its inner
    # side, so collapsing first leaves no two spaces together.
    if text.isascii():
        return unmark_keeping(" ".join(text.lower().split()))
    return unmark_keeping(" ".join(_fold(text).split()))


@lru_cache(maxsize=8192)
def normalise_fact(text: str) -> str:
    """A fact's text as it is searched for: :func:`normalise` without the markup removal,
    so the fact keeps its own ``*``, ``_`` and `````` ` `````` (``_logs`` stays ``_logs``)."""
    if text.isascii():
        return " ".join(text.lower().split())
    return " ".join(_fold(text).split())


def is_spaceless(ch: str) -> bool:
    """True for a character of a script written without spaces between words."""
    code = ord(ch)
    if code < 0x0E00:  # below every range: Latin, Cyrillic, Arabic, Devanagari, ...
        return False
    return any(lo <= code <= hi for lo, hi in _SPACELESS)


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_" or unicodedata.category(ch)[0] == "M"


_ASCII_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _binds(ch: str) -> bool:
    """True when ``ch`` is part of a word that needs a boundary (not of a spaceless script)."""
    if ch < "\x80":  # ASCII: no combining marks, no spaceless script
        return ch.isalnum() or ch == "_"
    return _is_word(ch) and not is_spaceless(ch)


def at_boundaries(text: str, start: int, end: int) -> bool:
    """True when ``text[start:end]`` does not begin or end inside a word or a number."""
    if start >= end:
        return False
    first, last = text[start], text[end - 1]
    if text.isascii():  # _binds of an ASCII character, without the calls
        word = _ASCII_WORD_CHARS
        if start > 0 and first in word and text[start - 1] in word:
            return False
        if end < len(text) and last in word and text[end] in word:
            return False
    else:
        if start > 0 and _binds(first) and _binds(text[start - 1]):
            return False
        if end < len(text) and _binds(last) and _binds(text[end]):
            return False
    # 10 in "$10,000" or "2.10": a number goes on across a separator followed by a digit
    number_before = start >= 2 and text[start - 1] in _NUMBER_JOINERS and text[start - 2].isdigit()
    if first.isdigit() and number_before:
        return False
    number_after = end + 1 < len(text) and text[end] in _NUMBER_JOINERS and text[end + 1].isdigit()
    return not (last.isdigit() and number_after)


class Fact(str):
    """A labelled fact: one text, alternatives (any one will do) or a regex.

    As a ``str`` it is its label: the text itself, ``10% | 10 percent`` or
    ``/pattern/``; equal labels are the same fact. ``raw()`` is the golden-set form
    it was read from, which is also how results store it, so a saved run reads back
    the same facts.
    """

    kind: str  # "text", "any" or "regex"
    values: tuple[str, ...]
    needles: tuple[str, ...]  # the normalised texts ("text", "any")
    pattern: re.Pattern[str] | None
    marked: bool  # has marks of its own: also looked for in the text as written

    def __new__(cls, kind: str, values: Iterable[str]) -> Fact:
        values = tuple(values)
        if kind == "text":
            label = values[0]
        elif kind == "any":
            label = " | ".join(values)
        else:
            label = f"/{values[0]}/"
        self = super().__new__(cls, label)
        self.kind = kind
        self.values = values
        self.needles = tuple(normalise_fact(v) for v in values) if kind != "regex" else ()
        self.pattern = re.compile(values[0], re.IGNORECASE) if kind == "regex" else None
        self.marked = any(has_marks(v) for v in values)
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (Fact, (self.kind, self.values))

    def raw(self) -> str | dict[str, Any]:
        """The golden-set form: a string, ``{"any": [...]}`` or ``{"regex": "..."}``."""
        if self.kind == "text":
            return self.values[0]
        if self.kind == "any":
            return {"any": list(self.values)}
        return {"regex": self.values[0]}


FACT_FORMS = 'a string, {"any": ["...", "..."]} or {"regex": "..."}'


def _text_value(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string, not {type(value).__name__}")
    if not normalise_fact(value):
        raise ValueError(f"{what} must not be empty")
    return value


def parse_fact(raw: Any) -> Fact:
    """A Fact from its golden-set form; ValueError says what is wrong with it.

    A regex must compile and must not match the empty string (it would be "found"
    in any text)."""
    if isinstance(raw, Fact):
        return raw
    if isinstance(raw, str):
        return Fact("text", (_text_value(raw, "a fact"),))
    if not isinstance(raw, dict) or len(raw) != 1 or next(iter(raw)) not in ("any", "regex"):
        keys = f" (got keys {', '.join(map(str, raw))})" if isinstance(raw, dict) else ""
        raise ValueError(f"a fact must be {FACT_FORMS}{keys}")
    if "any" in raw:
        options = raw["any"]
        if not isinstance(options, list) or not options:
            raise ValueError('"any" must be a non-empty list of strings')
        return Fact("any", [_text_value(v, "each alternative") for v in options])
    pattern = _text_value(raw["regex"], '"regex"')
    try:
        compiled = re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        raise ValueError(f"regex {pattern!r} does not compile: {exc}") from None
    if compiled.fullmatch("") is not None:
        raise ValueError(f"regex {pattern!r} matches the empty string, so any text has it")
    return Fact("regex", (pattern,))


def as_fact(fact: str) -> Fact:
    """A plain string taken as a text fact; a Fact as it is."""
    return fact if isinstance(fact, Fact) else parse_fact(fact)


# The pydantic field type: read from any golden-set form, written back in that form.
FactField = Annotated[
    Fact,
    PlainValidator(parse_fact),
    PlainSerializer(lambda fact: fact.raw(), return_type=Any),
]


def _candidates(fact: Fact, text: str) -> Iterator[tuple[int, int]]:
    """Every span where the fact's text or pattern occurs, boundaries not yet checked."""
    if fact.pattern is not None:
        pos = 0
        while pos <= len(text):
            m = fact.pattern.search(text, pos)
            if m is None:
                return
            if m.end() > m.start():
                yield m.start(), m.end()
            pos = m.start() + 1
        return
    for needle in fact.needles:
        at = text.find(needle)
        while at >= 0:
            yield at, at + len(needle)
            at = text.find(needle, at + 1)


def find_all(fact: str, normalised_text: str) -> list[tuple[int, int]]:
    """Every span of ``normalised_text`` (from :func:`normalise`) that matches the fact,
    sorted by start."""
    fact = as_fact(fact)
    spans = {s for s in _candidates(fact, normalised_text) if _at_edges(fact, normalised_text, *s)}
    if fact.marked and isinstance(normalised_text, Unmarked):
        mapped = map(normalised_text.from_marked, find_all(fact, normalised_text.marked))
        spans.update(s for s in mapped if s[0] < s[1])  # marks only: nothing is left
    return sorted(spans)


def _at_edges(fact: Fact, text: str, start: int, end: int) -> bool:
    """at_boundaries, and for a fact with marks of its own, no run of its edge mark goes
    on past the span: ``*args`` is not in ``**args**`` (bold args) nor in ``**args``."""
    if not at_boundaries(text, start, end):
        return False
    if not fact.marked:
        return True
    first, last = text[start], text[end - 1]
    return not (
        (first in "*`" and start > 0 and text[start - 1] == first)
        or (last in "*`" and end < len(text) and text[end] == last)
    )


def find(fact: str, normalised_text: str) -> tuple[int, int] | None:
    """The first span of ``normalised_text`` (from :func:`normalise`) matching the fact,
    or None. Callers normalise a text once and search it for many facts."""
    fact = as_fact(fact)
    if fact.marked:  # rare: the spans with the marks' own rules (_at_edges)
        spans = find_all(fact, normalised_text)
        return spans[0] if spans else None
    return _find(fact, normalised_text)


def _find(fact: Fact, normalised_text: str) -> tuple[int, int] | None:
    if fact.kind == "text":  # one needle: the first occurrence at token boundaries
        needle = fact.needles[0]
        at = normalised_text.find(needle)
        while at >= 0:
            if at_boundaries(normalised_text, at, at + len(needle)):
                return at, at + len(needle)
            at = normalised_text.find(needle, at + 1)
        return None
    best: tuple[int, int] | None = None
    for span in _candidates(fact, normalised_text):
        if (best is None or span < best) and at_boundaries(normalised_text, *span):
            best = span
    return best


def contains(fact: str, text: str) -> bool:
    """True when the (not yet normalised) text holds the fact."""
    return find(fact, normalise(text)) is not None


def normalise_with_offsets(text: str) -> tuple[str, list[int], list[int]]:
    """The normalised text with, for each of its characters, the start and end offset in
    ``text`` of the characters it came from: a span ``[i, j)`` of the normalised text
    is ``text[starts[i]:ends[j - 1]]``. Used to highlight facts in the original text.

    Each base character is normalised with the combining marks (and zero-width
    characters) that follow it, so the result equals :func:`normalise` for all but
    conjoining Hangul Jamo, which NFKC composes across characters.
    """
    if text.isascii() and not (has_marks(text) and markup_spans(text)):
        return _ascii_with_offsets(text)
    return _folded_with_offsets(text)


def _folded_with_offsets(text: str) -> tuple[str, list[int], list[int]]:
    """normalise_with_offsets() character by character: any text."""
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i, n = 0, len(text)
    while i < n:
        j = i + 1
        while (
            j < n
            and text[j] >= "\x80"
            and (text[j] in ZERO_WIDTH or unicodedata.category(text[j])[0] == "M")
        ):
            j += 1
        # an ASCII character alone folds to its lower case: no Unicode tables to consult
        piece = text[i].lower() if j == i + 1 and text[i] < "\x80" else _fold(text[i:j])
        for ch in piece:
            if ch.isspace():
                if chars and chars[-1] == " ":
                    ends[-1] = j
                    continue
                ch = " "
            chars.append(ch)
            starts.append(i)
            ends.append(j)
        i = j
    if chars and chars[-1] == " ":  # normalise() drops spaces at either end
        del chars[-1], starts[-1], ends[-1]
    if chars and chars[0] == " ":
        del chars[0], starts[0], ends[0]
    folded = "".join(chars)
    # Markup found after the white space is collapsed is the markup normalise() finds
    # before: pairing sees a space as a space however long the run, and an end as one.
    # A dropped mark touches a non-space on its inner side, so no two spaces meet.
    spans = markup_spans(folded) if has_marks(folded) else ()
    if not spans:
        return folded, starts, ends
    drop = {k for a, b in spans for k in range(a, b)}
    keep = [k for k in range(len(chars)) if k not in drop]
    return Unmarked(folded, spans), [starts[k] for k in keep], [ends[k] for k in keep]


_NON_SPACE = re.compile(r"\S+")


def _ascii_with_offsets(text: str) -> tuple[str, list[int], list[int]]:
    """normalise_with_offsets() for ASCII text without markup: each character folds to
    itself in lower case and each run of white space to one space spanning the run, so the
    offsets come per word instead of per character (reports highlight thousands of chunks)."""
    starts: list[int] = []
    ends: list[int] = []
    words: list[str] = []
    for m in _NON_SPACE.finditer(text):
        a, b = m.span()
        if words:  # the space standing for the run since the previous word
            starts.append(ends[-1])
            ends.append(a)
        starts.extend(range(a, b))
        ends.extend(range(a + 1, b + 1))
        words.append(m.group(0))
    return " ".join(words).lower(), starts, ends


def original_spans(facts: Iterable[str], text: str) -> list[tuple[int, int]]:
    """Spans of ``text`` (as given, not normalised) where any of the facts is found,
    sorted, overlaps left out (the earlier span wins)."""
    facts = list(facts)
    plain = normalise(text)
    if not any(find_all(fact, plain) for fact in facts):
        return []  # most chunks hold no fact: skip the per-character offsets
    norm, starts, ends = normalise_with_offsets(text)
    found = sorted((starts[a], ends[b - 1]) for fact in facts for a, b in find_all(fact, norm))
    out: list[tuple[int, int]] = []
    for start, end in found:
        if not out or start >= out[-1][1]:
            out.append((start, end))
    return out


# A name slug() gives back unchanged: lower-case ASCII letters, digits, ".", "_" and "-",
# neither starting nor ending with "-" or "." (most chunk ids' names already are slugs).
PLAIN_SLUG = r"[a-z0-9_](?:[a-z0-9._-]*[a-z0-9_])?"
_PLAIN_SLUG = re.compile(PLAIN_SLUG)


@lru_cache(maxsize=16_384)  # chunk ids are cited and compared many times over a run
def slug(name: str) -> str:
    """A document name as it appears in chunk ids: lower case, every run of characters
    other than letters, digits, combining marks, ``.``, ``_`` and ``-`` made one ``-``
    (``Refund Policy`` is ``refund-policy``, ``返金 ポリシー`` is ``返金-ポリシー``), so
    an id never holds a space, a ``#`` or a bracket and a model can cite it."""
    if _PLAIN_SLUG.fullmatch(name):
        return name
    text = unicodedata.normalize("NFKC", name).lower()
    out: list[str] = []
    for ch in text:
        if ch.isalnum() or ch in "._-" or unicodedata.category(ch)[0] == "M":
            out.append(ch)
        elif out and out[-1] != "-":
            out.append("-")
    return "".join(out).strip("-.") or "document"
