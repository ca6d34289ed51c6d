"""The one tokeniser: words of any script, CJK bigrams, stop words and stemming per language."""

from __future__ import annotations

import random

import pytest

from ragrail.text.tokens import (
    LANGUAGES,
    bm25_terms,
    check_language,
    is_cjk,
    normalise,
    stop_words,
    terms,
    tokens,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # [a-z0-9]+ made this "r" + "ckerstattung"
        ("Rückerstattung beantragen", ["rückerstattung", "beantragen"]),
        # the vowel signs ा and ी (Mc) stay inside the word; \w alone splits at them
        ("धनवापसी कब मिलेगी?", ["धनवापसी", "कब", "मिलेगी"]),
        ("पासवर्ड रीसेट", ["पासवर्ड", "रीसेट"]),
        # Japanese has no spaces: overlapping character bigrams
        ("パスワード", ["パス", "スワ", "ワー", "ード"]),
        # a single Han character between digits stands for itself
        ("30日", ["30", "日"]),
        ("한국어", ["한국", "국어"]),
        # mixed scripts in one run of letters: Latin, then Katakana + Hiragana bigrams
        ("Proプランは₹499", ["pro", "プラ", "ラン", "ンは", "499"]),
        # NFKC: fullwidth letters and digits, the ligature ﬁ
        ("ＰＲＯ ３０", ["pro", "30"]),
        ("ﬁle", ["file"]),
        # case folding: ß is ss
        ("Straße", ["strasse"]),
        ("STRASSE", ["strasse"]),
        # a decomposed é is the composed one
        ("cafe\u0301", ["café"]),
        # invisible characters do not split a word
        ("pass\u200bword soft\u00adware", ["password", "software"]),
        # Devanagari and Arabic-Indic digits are digits
        ("३० दिन", ["30", "दिन"]),
        ("٣٠", ["30"]),
        # underscores and apostrophes separate words, as before
        ("can't api_key", ["can", "t", "api", "key"]),
        ("", []),
    ],
)
def test_tokens(text: str, expected: list[str]):
    assert tokens(text) == expected


def test_ascii_fast_path_gives_what_the_unicode_path_gives():
    rng = random.Random(11)
    alphabet = "abcXYZ019 _-'.,?!\t\n"
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        # a non-ASCII word at the end forces the Unicode path for the same text
        slow = tokens(text + " ü")
        assert slow[-1] == "ü"
        assert tokens(text) == slow[:-1], text


def test_normalise_and_is_cjk():
    assert normalise("ＳＴＲＡßＥ\u200b ३") == "strasse 3"
    assert all(is_cjk(ch) for ch in "返パはー한々")
    assert not any(is_cjk(ch) for ch in "aü धा1")


def test_english_terms_are_unchanged():
    # the stand-in's own stop words and plural rule
    assert terms("How do I reset my passwords? Can't sign-in!") == ["reset", "password", "sign"]
    assert terms("address boss codes") == ["address", "boss", "code"]
    # BM25: bm25s's stop words, no stemming, no one-letter words
    assert bm25_terms("I want a 3 day refund") == ["want", "day", "refund"]


def test_english_bm25_terms_equal_bm25s_own_tokeniser_on_ascii_text():
    import bm25s

    rng = random.Random(5)
    words = "the a I reset passwords can't sign-in 30 minutes x Settings > Profile Is OF e-mail"
    for _ in range(200):
        text = " ".join(rng.choices(words.split(), k=rng.randint(0, 12)))
        theirs = bm25s.tokenize([text], stopwords="en", return_ids=False, show_progress=False)
        assert bm25_terms(text) == theirs[0], text


@pytest.mark.parametrize(
    ("text", "language", "expected"),
    [
        # German: "wie" and "die" are stop words; Snowball folds the umlaut and the ending
        ("Wie lange dauert die Rückerstattung?", "de", ["lang", "dauert", "ruckerstatt"]),
        ("Rückerstattungen", "de", ["ruckerstatt"]),
        ("Comment obtenir un remboursement ?", "fr", ["comment", "obten", "rembours"]),
        ("Les remboursements sont rapides", "fr", ["rembours", "rapid"]),
        ("Los reembolsos llegan en 5 días", "es", ["reembols", "lleg", "5", "dias"]),
        # Hindi: मैं, अपना, कैसे are stop words; दिनों is stemmed to दिन
        ("मैं अपना पासवर्ड कैसे बदलें?", "hi", ["पासवर्ड", "बदल"]),
        ("दिनों में", "hi", ["दिन"]),
        # Japanese: bigrams written only in Hiragana (を, する, には) are dropped
        (
            "パスワードを変更するには？",
            "ja",
            ["パス", "スワ", "ワー", "ード", "ドを", "を変", "変更", "更す"],
        ),
        # "die" is a German stop word, not an English one
        ("die", "en", ["die"]),
        ("die", "de", []),
        # auto: German stop words dropped but no German stemming; Devanagari stemmed as Hindi
        (
            "Wie lange dauert die Rückerstattung? धनवापसी कब मिलेगी?",
            "auto",
            ["lange", "dauert", "rückerstattung", "धनवापस", "मिल"],
        ),
        ("the password", "none", ["the", "password"]),
    ],
)
def test_terms_per_language(text: str, language: str, expected: list[str]):
    assert terms(text, language) == expected


def test_stop_words_per_language():
    assert {"und", "der", "dass"} <= stop_words("de")  # "daß" in NLTK's list, case-folded
    assert {"le", "et"} <= stop_words("fr") and {"el", "y"} <= stop_words("es")
    assert {"और", "है", "का"} <= stop_words("hi")
    assert {"です", "ます", "は", "を"} <= stop_words("ja") and "変更" not in stop_words("ja")
    assert "how" in stop_words("en") and "how" not in stop_words("en", "bm25")
    assert stop_words("none") == frozenset()
    assert stop_words("de") | stop_words("hi") | stop_words("ja") <= stop_words("auto")


def test_unknown_language_is_refused():
    assert set(LANGUAGES) == {"en", "de", "fr", "es", "hi", "ja", "auto", "none"}
    assert check_language("hi") == "hi"
    with pytest.raises(ValueError, match="unknown language 'xx'; choose en, de"):
        terms("text", "xx")
