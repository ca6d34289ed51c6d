"""Words of any script: the one tokeniser used wherever ragrail counts words.

The stand-in retriever, BM25, the claim check and the near-duplicate lint all
read text through :func:`tokens` and :func:`terms`, so a word means the same
thing everywhere.

Tokens
    The text is NFKC-normalised (fullwidth ``３０`` is ``30``, the ligature
    ``ﬁ`` is ``fi``), format characters such as the zero-width space and the
    soft hyphen are removed, it is case-folded (``Straße`` and ``STRASSE``
    are both ``strasse``) and every decimal digit becomes an ASCII digit
    (Devanagari ``३०`` is ``30``). A token is then a run of letters and digits
    of any script with its combining marks: Devanagari vowel signs (category
    Mc/Mn) stay inside their word, so ``धनवापसी`` and ``Rückerstattung`` are
    one token each. Han, Hiragana, Katakana and Hangul are written without
    spaces between words, so a run of them becomes its overlapping character
    bigrams (``パスワード`` -> ``パス``, ``スワ``, ``ワー``, ``ード``), and a
    single such character stands for itself. ASCII text takes a fast path with
    the same result: lower-cased runs of ``[a-z0-9]``.

Terms
    Tokens less the stop words of the project's ``[pipeline] language``,
    then stemmed (Snowball, through PyStemmer) where the language has a stemmer:

    ========  ==========================================  =======================
    language  stop words                                  stemming
    ========  ==========================================  =======================
    en        the stand-in's own list; BM25: bm25s's       stand-in: a plural "s"
              English list                                 stripped; BM25: none
    de/fr/es  bm25s's lists (from NLTK)                    Snowball
    hi        a list in this module                        Snowball Hindi
    ja        every term written only in Hiragana          none (bigrams)
              (particles, endings, auxiliaries)
    auto      every list above together                    Hindi for Devanagari
                                                           words, none otherwise
    none      none                                         none
    ========  ==========================================  =======================

English keeps each retriever's historical rule, so English scores are the same
as before this module. ``auto`` decides per word by its script, never per text:
a short question cannot tell German from English, and a word must map to the
same term in a question and in a document, or they never match.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field

LANGUAGES: dict[str, str] = {
    "en": "English",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "hi": "Hindi",
    "ja": "Japanese",
    "auto": "each word by its script",
    "none": "no stop words, no stemming",
}

# ASCII text: letters lower-cased, digits kept, any other character a space, so that
# str.split() gives the runs of [a-z0-9] (a regex findall is several times slower)
_ASCII_WORDS = str.maketrans(
    {code: chr(code).lower() if chr(code).isalnum() else " " for code in range(128)}
)
# Characters that change nothing a reader sees: zero-width space and joiners, the soft
# hyphen, direction marks, the word joiner and the byte-order mark.
_FORMAT = re.compile("[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")
_CJK_RANGES = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u2e80-\u2fdf"  # CJK and Kangxi radicals
    "\u3005-\u3007"  # 々 〆 〇
    "\u3040-\u30ff"  # Hiragana, Katakana (with the prolonged sound mark ー)
    "\u3130-\u318f"  # Hangul compatibility Jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # Han extension A
    "\u4e00-\u9fff"  # Han
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # Han compatibility ideographs
    "\uff66-\uff9f"  # halfwidth Katakana
    "\U00020000-\U0003134f"  # Han extensions B-G
)
_CJK = re.compile(f"[{_CJK_RANGES}]")
_CJK_SPLIT = re.compile(f"[{_CJK_RANGES}]+|[^{_CJK_RANGES}]+")
_DEVANAGARI = re.compile("[\u0900-\u097f]")

# The stand-in's English list. Contractions split on the apostrophe ("can't" ->
# "can", "t"), so their tails are listed too.
ENGLISH = frozenset(
    """
    a about after again all also am an and any are as at be been before being both but by
    can could d did do does doing don done down during each either else even ever every for
    from get gets getting got had has have having he her here hers him his how i if in
    into is it its just ll m may me might more most much must my need needs no nor not
    now of off on once one only or other our ours out over own re s same she should so
    some still such t than that the their theirs them then there these they this those
    through to too under until up us ve very was way we were what when where which while
    who whom why will with would yet you your yours
    """.split()
)

# Hindi function words: postpositions, pronouns, auxiliaries, conjunctions and
# question words (the English list drops "how" and "what" too).
HINDI = frozenset(
    """
    है हैं था थे थी थीं हो होता होती होते होना होगा होगी होंगे हुआ हुए हुई
    का की के को में से पर ने तक लिए लिये साथ द्वारा बाद पहले बारे
    और या व एवं तथा लेकिन परंतु परन्तु किंतु कि जो जब तब तो भी ही यदि अगर
    यह ये वह वे इस इसे इसका इसकी इसके इन इनका इनकी इनके उस उसे उसका उसकी उसके उन उनका उनकी उनके
    मैं मेरा मेरी मेरे मुझे हम हमारा हमारी हमारे हमें आप आपका आपकी आपके आपको तुम अपना अपनी अपने
    कर करें करना करने करता करती करते किया किए कैसे क्या कब कहाँ कहां कौन कितना कितनी कितने क्यों
    जा जाता जाती जाते जाए जाएगा जाएगी सकता सकती सकते सकें सके गया गई गए रहा रही रहे
    एक कुछ सभी सब कोई किसी नहीं न ना यहाँ वहाँ अब
    """.split()
)

# Japanese particles, endings and auxiliaries (は, を, です, ます, ください, どうすれば)
# are written in Hiragana and content words mostly in Han and Katakana, so a
# Japanese term written only in Hiragana is a stop term: every Hiragana
# character and every pair of them.
_HIRAGANA = [chr(c) for c in range(0x3041, 0x3097)] + ["ゝ", "ゞ"]
JAPANESE = frozenset(_HIRAGANA + [a + b for a in _HIRAGANA for b in _HIRAGANA])


@functools.cache
def _marks() -> str:
    """A character class body of every combining mark (categories Mn, Mc, Me)."""
    ranges: list[tuple[int, int]] = []
    for code in range(0x30000):
        if unicodedata.category(chr(code))[0] == "M":
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    ranges.append((0xE0100, 0xE01EF))  # variation selectors supplement
    return "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)


@functools.cache
def _word() -> re.Pattern[str]:
    """A letter or digit of any script, then letters, digits and combining marks."""
    return re.compile(f"[^\\W_](?:[^\\W_]|[{_marks()}])*")


@functools.cache
def _digits() -> dict[int, str]:
    """A translation table from every non-ASCII decimal digit to its ASCII digit."""
    return {
        code: str(unicodedata.decimal(chr(code)))
        for code in range(0x80, 0x20000)
        if unicodedata.category(chr(code)) == "Nd"
    }


def ascii_digits(text: str) -> str:
    """Every decimal digit of any script as its ASCII digit: "३०" and "٣٠" are "30"."""
    return text.translate(_digits())


def normalise(text: str) -> str:
    """NFKC, format characters removed, case-folded, decimal digits made ASCII."""
    text = _FORMAT.sub("", unicodedata.normalize("NFKC", text))
    # Case folding can leave a text that is not NFKC any more (e.g. "ǰ"): normalise again.
    text = unicodedata.normalize("NFKC", text.casefold())
    return ascii_digits(text)


def is_cjk(char: str) -> bool:
    """True for a Han, Hiragana, Katakana or Hangul character (no spaces between words)."""
    return _CJK.match(char) is not None


def tokens(text: str) -> list[str]:
    """The words of a text, in order, with duplicates (see the module docstring)."""
    if text.isascii():
        return text.translate(_ASCII_WORDS).split()
    out: list[str] = []
    for word in _word().findall(normalise(text)):
        if _CJK.search(word) is None:
            out.append(word)
            continue
        for run in _CJK_SPLIT.findall(word):
            if not is_cjk(run[0]) or len(run) == 1:
                out.append(run)
            else:
                out.extend(run[i : i + 2] for i in range(len(run) - 1))
    return out


def _plural_s(word: str) -> str:
    """The stand-in's English stemmer: a plural "s" stripped (not from "ss", not from short words)."""
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


@functools.cache
def _snowball(algorithm: str) -> Callable[[str], str]:
    import Stemmer  # PyStemmer: Snowball stemmers in C

    return Stemmer.Stemmer(algorithm).stemWord


def _hindi_words_only(word: str) -> str:
    """``auto``'s stemmer: Devanagari words are Hindi; any other script is left alone."""
    return _snowball("hindi")(word) if _DEVANAGARI.match(word) else word


def check_language(language: str) -> str:
    """The language, or ValueError naming the supported ones."""
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}; choose {', '.join(LANGUAGES)}")
    return language


@functools.cache
def stop_words(language: str, retriever: str = "standin") -> frozenset[str]:
    """The stop words of a language as tokens (normalised), for the stand-in or for BM25."""
    check_language(language)
    if language == "en":
        if retriever == "bm25":
            from bm25s.stopwords import STOPWORDS_EN

            return frozenset(STOPWORDS_EN)
        return ENGLISH
    if language in ("de", "fr", "es"):
        from bm25s import stopwords as lists

        name = {"de": "GERMAN", "fr": "FRENCH", "es": "SPANISH"}[language]
        return frozenset(t for w in getattr(lists, f"STOPWORDS_{name}") for t in tokens(w))
    if language == "hi":
        return frozenset(t for w in HINDI for t in tokens(w))
    if language == "ja":
        return JAPANESE
    if language == "auto":
        return frozenset().union(
            *(
                stop_words(lang, r)
                for lang in ("en", "de", "fr", "es", "hi", "ja")
                for r in ("standin", "bm25")
            )
        )
    return frozenset()


# Distinct tokens an analyzer remembers the term of; past it the memo starts afresh. A
# language's working vocabulary fits many times over, so a run re-stems almost nothing.
MEMO_TOKENS = 200_000


class _TermMemo(dict[str, str | None]):
    """Token -> its term, or None for a dropped token, learnt on first sight."""

    def __init__(self, learn: Callable[[str], str | None]) -> None:
        super().__init__()
        self._learn = learn
        self.empty_term = False  # whether a token has stemmed to "" (filter(None) would drop it)

    def __missing__(self, token: str) -> str | None:
        if len(self) >= MEMO_TOKENS:
            self.clear()  # bounded: the next tokens are learnt again, at a small cost
        term = self[token] = self._learn(token)
        if term == "":
            self.empty_term = True
        return term


@dataclass(frozen=True)
class Analyzer:
    """How one language turns tokens into terms: which to drop, how to stem the rest.

    A token's term depends on the token alone, so each distinct token is looked up,
    stemmed and remembered once (a bounded memo); a text's terms are then a mapping over
    its tokens, which matters for the claim check and the retrievers alike."""

    stop: frozenset[str]
    stem: Callable[[str], str] | None  # never applied to CJK bigrams
    min_chars: int = 1  # shorter non-CJK tokens are dropped
    _memo: _TermMemo = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_memo", _TermMemo(self.term))

    def term(self, token: str) -> str | None:
        """The term of one token: None when it is a stop word or too short; CJK tokens
        (bigrams and single characters) are kept whole, whatever their length."""
        if token in self.stop:
            return None
        if is_cjk(token[0]):
            return token
        if len(token) < self.min_chars:
            return None
        return token if self.stem is None else self.stem(token)

    def terms(self, text: str) -> list[str]:
        """The terms of a text, in order, with duplicates."""
        memo = self._memo
        mapped = list(map(memo.__getitem__, tokens(text)))
        if memo.empty_term:  # never seen yet; kept exact should a stemmer ever return ""
            return [t for t in mapped if t is not None]
        return list(filter(None, mapped))

    def term_set(self, text: str) -> frozenset[str]:
        """``frozenset(self.terms(text))``, without building the list first."""
        found = set(map(self._memo.__getitem__, tokens(text)))
        found.discard(None)
        return frozenset(found)  # type: ignore[arg-type]


@functools.cache
def analyzer(language: str = "en", retriever: str = "standin") -> Analyzer:
    """The analyzer of a language for the stand-in (also claims and lint) or for BM25.

    BM25 drops one-character words as bm25s's own tokeniser does (CJK characters
    excepted), so English BM25 scores stay what they were."""
    check_language(language)
    stem: Callable[[str], str] | None = None
    if language == "en":
        stem = _plural_s if retriever == "standin" else None
    elif language in ("de", "fr", "es", "hi"):
        stem = _snowball({"de": "german", "fr": "french", "es": "spanish", "hi": "hindi"}[language])
    elif language == "auto":
        stem = _hindi_words_only
    return Analyzer(
        stop=stop_words(language, retriever),
        stem=stem,
        min_chars=2 if retriever == "bm25" else 1,
    )


def terms(text: str, language: str = "en") -> list[str]:
    """Content words of a text, in order, with duplicates: the stand-in's terms."""
    return analyzer(language).terms(text)


def term_set(text: str, language: str = "en") -> frozenset[str]:
    """The distinct terms of a text: ``frozenset(terms(text, language))``."""
    return analyzer(language).term_set(text)


def bm25_terms(text: str, language: str = "en") -> list[str]:
    """BM25's terms of a text: its stop words, stemming and one-letter rule."""
    return analyzer(language, "bm25").terms(text)
