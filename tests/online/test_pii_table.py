"""Redaction measured both ways on a table written for the project (pii_table_data.py):
recall per kind over values in many countries' formats and many places in a log, and the
damage done to numbers that are not personal data. The rates are computed and asserted;
README's privacy paragraph states them."""

from __future__ import annotations

import re

import pytest

from ragrail.online.redact import make_redactor
from ragrail.scoring.pii import find_pii, iban_ok, luhn_ok
from ragrail.text.pii_detect import fold
from tests.online.pii_table_data import (
    CARD_PLACES,
    CARDS,
    DIAL_PLACES,
    DIALLED_PHONES,
    EMAILS,
    ENCODED_PHONES,
    ENCODED_PLACES,
    IBANS,
    IDS,
    LABEL_PLACES,
    LOOKALIKE_FRAMES,
    LOOKALIKES,
    PHONES,
    PLACES,
    URL_PLACES,
)

KINDS = {"email": EMAILS, "phone": PHONES, "card": CARDS, "iban": IBANS, "id": IDS}
TAG = re.compile(r"\[(?:email|phone|card|iban|id|ip|redacted)\]")


def label_keeps(value: str) -> bool:
    """What an order label still keeps (README): bare digits not starting with 0."""
    return fold(value).isdigit() and not fold(value).startswith("0")


def rows(values: list[str], kind: str = "") -> list[tuple[str, str]]:
    """(value, text) for every value in every place (URL places: values without spaces;
    labels: values a label does not keep; the kind's own places)."""
    out = []
    for value in values:
        places = PLACES + (URL_PLACES if " " not in value else [])
        if kind != "phone" or not label_keeps(value):
            places = places + LABEL_PLACES
        places = places + (CARD_PLACES if kind == "card" else [])
        out += [(value, place.format(v=value)) for place in places]
    if kind == "phone":
        out += [(v, place.format(v=v)) for v in ENCODED_PHONES for place in ENCODED_PLACES]
        out += [(v, place.format(v=v)) for v in DIALLED_PHONES for place in DIAL_PLACES]
    return out


def leaked(value: str, text: str, redacted: str) -> bool:
    """Whether anything of ``value`` survives: one of its digits or letters beyond what
    the place itself holds, or (an e-mail address) its local part or its "@"."""
    kept = TAG.sub("", redacted)
    template = text.replace(value, "")
    if "@" in fold(value) or "%40" in value:
        local = re.split("@|%40", fold(value))[0]
        return (local in fold(kept) and local not in template) or kept.count("@") > template.count(
            "@"
        )
    return sum(ch.isalnum() for ch in kept) > sum(ch.isalnum() for ch in template)


def recall(kind: str) -> tuple[float, int, float, list[str]]:
    """Recall (nothing of the value left), rows, tag accuracy, and the first misses."""
    redact = make_redactor()
    hits = right_tag = 0
    misses = []
    table = rows(KINDS[kind], kind)
    for value, text in table:
        out = redact(text)
        if leaked(value, text, out):
            misses.append(repr(out))
        else:
            hits += 1
            right_tag += f"[{kind}]" in out
    return hits / len(table), len(table), right_tag / max(hits, 1), misses[:10]


@pytest.mark.parametrize(("kind", "floor"), [("email", 0.99), ("phone", 0.99), ("card", 0.99),
                                             ("iban", 0.99), ("id", 0.95)])  # fmt: skip
def test_recall_per_kind(kind: str, floor: float) -> None:
    rate, n, tag_rate, misses = recall(kind)
    print(f"{kind}: recall {rate:.1%} of {n} rows, right tag {tag_rate:.1%}")
    assert n >= 200
    assert rate >= floor, misses
    assert tag_rate >= 0.9


def test_lookalike_damage_is_at_most_two_percent() -> None:
    redact = make_redactor()
    table = [frame.format(v=v) for v in LOOKALIKES for frame in LOOKALIKE_FRAMES]
    damaged = [text for text in table if redact(text) != text]
    rate = len(damaged) / len(table)
    print(f"look-alikes: {len(damaged)} of {len(table)} changed ({rate:.1%})")
    assert len(LOOKALIKES) >= 150 and len(table) >= 750
    assert rate <= 0.02, damaged


def test_the_table_is_what_it_says() -> None:
    # the planted values are valid as what they stand for: the rates above mean something
    assert all(luhn_ok(re.sub(r"\D", "", card)) for card in CARDS)
    assert all(iban_ok(iban) for iban in IBANS)
    assert len(set(PHONES)) == len(PHONES) >= 80 and len(EMAILS) >= 15


def test_no_pii_finds_nothing_in_what_ingest_kept() -> None:
    # one detector, two uses: what redaction left, the check does not flag
    redact = make_redactor()
    kinds = ["email", "phone", "card", "iban"]
    for kind in kinds:
        for _, text in rows(KINDS[kind], kind):
            assert find_pii(redact(text), kinds) == [], redact(text)
    for text in LOOKALIKES:
        assert find_pii(text, kinds) == [], text
