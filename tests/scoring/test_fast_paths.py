"""Every shortcut the scorers take gives what the plain definition gives.

The references below are the definitions as they were written before the shortcuts
(a regex over the whole text, a character loop), run on random texts built from the
pieces that matter to each rule.
"""

from __future__ import annotations

import random
import re
import unicodedata

import pytest

from ragrail.scoring import answers, claims, markers
from ragrail.scoring.memo import ScoringCache
from ragrail.text import matching, tokens
from ragrail.text.tokens import Analyzer

PIECES = [
    *"    \n\t.,;:!?()[]#%-_*'\"",
    *["and", "AND", "but", "But", "or", "so", "word", "Word", "WORDS", "e.g.", "i.e.", "No."],
    *["1", "10", "2.5", "1,000", "v2", "x_y", "(1)", "(2)", "a#1", "sso #1", "Refund Policy#2"],
    *["[a#1]", "[x]", "【sso#1】", "［plans#2］", "[a#1, b#2]", "Straße", "ﬁle", "３０", "日本語"],
    *["\u200b", "\u00a0", "é", "e\u0301", "धनवापसी"],
]


def texts(seed: int, count: int = 500, ascii_only: bool = False) -> list[str]:
    rng = random.Random(seed)
    pool = [p for p in PIECES if p.isascii()] if ascii_only else PIECES
    return ["".join(rng.choice(pool) for _ in range(rng.randint(0, 30))) for _ in range(count)]


def test_ascii_tokens_are_the_runs_of_letters_and_digits():
    for text in texts(1, ascii_only=True):
        assert tokens.tokens(text) == re.findall(r"[a-z0-9]+", text.lower())


@pytest.mark.parametrize("language", ["en", "de", "hi", "ja", "auto", "none"])
def test_term_set_is_the_set_of_terms(language: str):
    for text in texts(2):
        assert tokens.term_set(text, language) == frozenset(tokens.terms(text, language))


def test_each_token_is_stemmed_once_and_an_empty_stem_is_kept():
    seen: list[str] = []

    def stem(token: str) -> str:
        seen.append(token)
        return "" if token == "x" else token.upper()

    analyzer = Analyzer(stop=frozenset({"the"}), stem=stem)
    assert analyzer.terms("a x the b x a") == ["A", "", "B", "", "A"]
    assert analyzer.terms("b a") == ["B", "A"]
    assert sorted(seen) == ["a", "b", "x"]
    assert analyzer.term_set("x the x") == frozenset({""})


def test_the_token_memo_is_bounded(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(tokens, "MEMO_TOKENS", 10)
    analyzer = Analyzer(stop=frozenset(), stem=None)
    words = [f"w{i}" for i in range(35)]
    assert analyzer.terms(" ".join(words)) == words
    assert len(analyzer._memo) <= 10


def _strip_citations_by_regex(answer: str) -> str:
    bracket = re.compile(r"\s*[\[［【]([^\[\]［］【】\n]{1,500})[\]］】]")

    def drop(m: re.Match[str]) -> str:
        parts = claims._CITE_SEPARATORS.split(m.group(1))
        return "" if all(claims._CITE_PART.fullmatch(p) for p in parts) else m.group()

    return bracket.sub(drop, answer)


def test_citations_are_stripped_with_the_white_space_before_them():
    assert claims.strip_citations("Refunds take 30 days \n [refunds#2]. Done") == (
        "Refunds take 30 days. Done"
    )
    assert claims.strip_citations("Click [Save] now") == "Click [Save] now"
    for text in texts(3):
        assert claims.strip_citations(text) == _strip_citations_by_regex(text)


def test_clauses_split_only_where_the_pattern_splits():
    for text in texts(4):
        assert claims._clauses(text) == claims._CLAUSES.split(text)


def test_numbers_of_ascii_text_with_and_without_digits():
    assert claims.numbers("no digits at all, 10 percent in words") == {"10"}
    assert claims.numbers("none here") == set()


def _slug_by_loop(name: str) -> str:
    text = unicodedata.normalize("NFKC", name).lower()
    out: list[str] = []
    for ch in text:
        if ch.isalnum() or ch in "._-" or unicodedata.category(ch)[0] == "M":
            out.append(ch)
        elif out and out[-1] != "-":
            out.append("-")
    return "".join(out).strip("-.") or "document"


def test_slugs_and_citation_keys_of_plain_ids_are_the_ids():
    rng = random.Random(5)
    alphabet = "ab09._- #A\u00e9"
    for _ in range(3000):
        name = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
        assert matching.slug(name) == _slug_by_loop(name), name
        chunk_id = f"{name}#{rng.choice(['0', '1', '01', '12', 'x'])}"
        m = markers._CITE_ID.fullmatch(chunk_id)
        expected = f"{_slug_by_loop(m.group(1))}#{int(m.group(2))}" if m else chunk_id
        assert answers.citation_key(chunk_id) == expected, chunk_id


def _find_by_candidates(fact: str, text: str) -> tuple[int, int] | None:
    spans = matching.find_all(fact, text)
    return spans[0] if spans else None


def test_a_text_fact_is_found_where_the_candidates_say():
    rng = random.Random(6)
    for text in texts(6):
        norm = matching.normalise(text)
        words = norm.split(" ")
        for _ in range(3):
            start = rng.randrange(len(words))
            fact = " ".join(words[start : start + rng.randint(1, 3)]).strip() or "10"
            if matching.normalise(fact).strip():
                assert matching.find(fact, norm) == _find_by_candidates(fact, norm), fact


def test_an_answers_abstention_is_remembered_per_phrases():
    cache = ScoringCache()
    phrases = ("I don't know",)
    others = ("No idea",)
    assert answers.abstains("Sorry, I don't know.", phrases, cache)
    assert answers.abstains("Sorry, I don't know.", phrases, cache)
    assert not answers.abstains("Sorry, I don't know.", others, cache)  # not the same phrases
    assert answers.abstains("No idea.", others, cache)
    for text in texts(7, count=200):
        assert answers.abstains(text, answers.DEFAULT_ABSTAIN_PHRASES, cache) == (
            answers.abstains(text)
        )


def test_an_answers_citations_are_read_once_and_handed_out_as_new_lists():
    cache = ScoringCache()
    first = answers.citations("See [a#1] and [B#02].", cache)
    first.append("changed")
    assert answers.citations("See [a#1] and [B#02].", cache) == ["a#1", "b#2"]


def test_ascii_word_characters_bind_as_any_word_character_does():
    for code in range(128):
        ch = chr(code)
        assert (ch in matching._ASCII_WORD_CHARS) == (ch.isalnum() or ch == "_")
        assert (ch in matching._ASCII_WORD_CHARS) == matching._binds(ch)
    # and in non-ASCII text the general rule decides: a Devanagari mark binds, Han does not
    assert matching.find("रीसेट", matching.normalise("पासवर्ड रीसेट करें")) is not None
    assert matching.find("返金", matching.normalise("返金ポリシー")) == (0, 2)


def test_no_non_ascii_small_talk_word_has_an_ascii_term_in_any_language():
    """What lets an all-ASCII clause be checked against the ASCII small talk only."""
    from ragrail.scoring.claims import SMALL_TALK, _ascii_small_talk, _small_talk
    from ragrail.text.tokens import LANGUAGES, terms

    others = " ".join(w for w in SMALL_TALK if not w.isascii())
    for language in (*LANGUAGES, "auto"):
        assert not [t for t in terms(others, language) if t.isascii()], language
        ascii_terms = {t for t in _small_talk(language) if t.isascii()}
        assert ascii_terms == set(_ascii_small_talk(language)), language


def test_ascii_offsets_agree_with_the_character_walk() -> None:
    """The report's per-word offsets for plain ASCII equal the per-character walk's, white
    space of every kind and at either end included."""
    import random
    import string

    from ragrail.text.matching import _ascii_with_offsets, _folded_with_offsets

    rng = random.Random(7)
    alphabet = string.ascii_letters + string.digits + " \t\n\r\x0b\x0c\x1c.,;:!?-'\""
    texts = ["", " ", "  a  ", "A\tB\n\nC", "Reset  it IN 30 days. "]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60))) for _ in range(2000)]
    for text in texts:
        assert _ascii_with_offsets(text) == _folded_with_offsets(text), repr(text)
