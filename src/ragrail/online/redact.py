"""Redacting personal data from production logs before anything is stored.

E-mail addresses become ``[email]``, phone numbers ``[phone]``, payment-card numbers
(13-19 digits, Luhn-valid) ``[card]``, and whatever the project's ``[logs] redact``
patterns match ``[redacted]``. A user id is never stored as written: :func:`user_key`
keeps a short hash, enough to find the same user re-asking.

Unlike the ``no_pii`` check (ragrail.scoring.pii), which reports what it finds in one
answer, this runs over every string of every logged conversation (tens of thousands a
second), so phone numbers are found by their shape rather than by ``phonenumbers``, and
a string without an ``@`` or seven digits close together is returned untouched after
two C-speed scans. When in doubt a number is redacted: a lost order number costs less
than a leaked phone number. Dates, times, ISO timestamps, prices, amounts, decimals and
numbers labelled as an order, invoice or other reference survive.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable

from ragrail.scoring.pii import card_shaped, isbn13_ok, luhn_ok

EMAIL, PHONE, CARD, OTHER = "[email]", "[phone]", "[card]", "[redacted]"

# Broader than scoring.pii's: any local part up to the "@", so that no fragment of an
# address ("Ana.Pérez+tag@...") is left behind; the domain needs a dot.
# "@" as typed on a Japanese or Chinese keyboard too ("＠", "﹫")
_EMAIL = re.compile(r"[^\s@＠﹫<>()\[\]{},;:\"']{1,64}[@＠﹫][\w-]+(?:\.[\w-]+)+")
_LOCAL = re.compile(r"[^\s@＠﹫<>()\[\]{},;:\"']")
_AT = re.compile("[@＠﹫]")
# A sound pre-check: any number with 7+ digits spans first to last digit over digits,
# spaces, dots, dashes and brackets only.
_SEVEN = re.compile(r"\d[\d ().-]{5,}\d")
# A number as written: "+44 20 7946 0958", "(415) 555-2671", "4111 1111 1111 1111".
# Groups of digits (one may be in brackets) joined by at most one space, dot or dash.
# Possessive, so a run is one number or none (never the tail of a longer one); not part
# of a word, a decimal, a time ("10:30") or a date with slashes.
# Scripts written without spaces between words (CJK, kana, Hangul, Thai): a number
# glued to them ("私の番号は090-1234-5678です") is still a number, not part of a word.
_UNSPACED = "\u0e00-\u0e7f\u3000-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
_WORD = rf"[^\W{_UNSPACED}]"
_RUN = re.compile(
    rf"(?<!{_WORD})(?<![.,/:+\-)])(?:\+ ?)?(?:\(\d{{1,5}}\)|\d++)"
    rf"(?:[ .\-]?(?:\(\d{{1,5}}\)|\d++))*+"
)
# What a whole run may not be glued to: a word, an "@", or a decimal, time or date part
_GLUED = re.compile(rf"{_WORD}|[@＠﹫]|[.,:/]\d")
_GROUP_GAP = re.compile(r"[ .\-](?=\(?\d)")
_SEPARATORS = re.compile(r"[^\d]+")
_CURRENCY = "$€£¥₹₩₽¢"
_CURRENCY_AFTER = re.compile(r"\s?(?:[$€£¥₹₩₽]|(?:EUR|USD|GBP|JPY|CHF|INR)\b)")
# A label that makes the number after it an identifier: "order 1234567", "Ref: 55501234".
_ID_LABEL = re.compile(
    r"\b(?:order|invoice|tracking|ticket|booking|confirmation|reference|ref|transaction|"
    r"shipment|parcel|consignment|isbn(?:-1[03])?|issn|awb|sku|serial|case|po|pnr|"
    r"receipt|id|version|v|build|release|account\s+no)\b\W{0,3}(?:(?:number|num|no)\b\W{0,3})?\Z",
    re.I,
)

Redactor = Callable[[str], str]


def _date_shaped(groups: list[str], separators: set[str]) -> bool:
    """2024-01-15, 15.01.2024, 2024 01 15, or a compact 20240115[hhmm[ss]]."""
    if len(separators) > 1:
        return False
    sizes = [len(g) for g in groups]
    if sizes == [4, 2, 2]:
        year, month, day = groups
    elif len(sizes) == 3 and sizes[2] == 4 and sizes[0] <= 2 and sizes[1] <= 2:
        day, month, year = groups
        if int(month) > 12:  # US order: month first
            day, month = month, day
    elif len(groups) == 1 and len(groups[0]) in (8, 12, 14):
        digits = groups[0]
        year, month, day = digits[:4], digits[4:6], digits[6:8]
        if len(digits) > 8 and (int(digits[8:10]) > 23 or int(digits[10:12]) > 59):
            return False
    else:
        return False
    return year[:2] in ("19", "20") and 1 <= int(month) <= 12 and 1 <= int(day) <= 31


def _amount_shaped(groups: list[str], separators: set[str]) -> bool:
    """1.000.000 or 1,000 (thousands), or 1 000 000 with a short first group."""
    if len(groups) < 2 or len(separators) != 1 or any(len(g) != 3 for g in groups[1:]):
        return False
    sep = next(iter(separators))
    first = len(groups[0])
    return (sep == "." and first <= 3) or (sep == " " and first <= 2)


def _kind(text: str, start: int, end: int) -> str | None:
    """``[card]``, ``[phone]`` or None for the number at text[start:end]."""
    run = text[start:end]
    groups = [g for g in _SEPARATORS.split(run) if g]
    digits = "".join(groups)
    n = len(digits)
    if n < 7:
        return None
    before = text[max(0, start - 40) : start]
    if _ID_LABEL.search(before) is not None:
        return None
    last = before.rstrip()[-1:]
    if (last and last in _CURRENCY) or _CURRENCY_AFTER.match(text, end):
        return None
    plus = run.startswith("+")
    separators = {ch for ch in run if not ch.isdigit() and ch not in "+()"}
    if not plus and (_date_shaped(groups, separators) or _amount_shaped(groups, separators)):
        return None
    if separators == {"."} and len(groups) == 2:  # 3.14159265: a decimal
        return None
    bare = run.isdigit()
    # 10 digits from 1: seconds since 1970 (no national phone number starts with 1 then);
    # 13: milliseconds
    epoch = bare and digits[0] == "1" and n in (10, 13)
    if 13 <= n <= 19 and not plus and not epoch:
        if card_shaped(run.replace(".", " ")) and luhn_ok(digits) and not isbn13_ok(digits):
            return CARD
        return None  # a long reference number (parcel, IBAN body): not a card, not a phone
    if plus and 8 <= n <= 15:
        return PHONE
    if not plus and 7 <= n <= 12 and not epoch:
        return PHONE
    return None


def _card_head(text: str, start: int, end: int) -> int | None:
    """Where a card number ends that opens the run text[start:end] and is followed by more
    of it: "4111 1111 1111 1111 123" (a security code), "... 12/27", "... 2 times". Only
    whole groups, longest first: a long number written without gaps never hides one."""
    gaps = []
    before = start
    digits = 0
    for m in _GROUP_GAP.finditer(text, start, end):  # a card has 19 digits at most
        digits += sum(ch.isdigit() for ch in text[before : m.start()])
        if digits > 19:
            break
        if digits >= 13:
            gaps.append(m.start())
        before = m.start()
    for gap in reversed(gaps):
        if _kind(text, start, gap) == CARD:
            return gap
    return None


def redact_numbers(text: str) -> str:
    """Phone and card numbers in ``text`` replaced by ``[phone]`` and ``[card]``."""
    if _SEVEN.search(text) is None:
        return text
    out: list[str] = []
    last = 0
    for m in _RUN.finditer(text):
        start, end = m.span()
        glued = _GLUED.match(text, end) is not None
        kind = None if glued else _kind(text, start, end)
        if kind is None and end - start > 13:
            head = _card_head(text, start, end)
            if head is not None:
                out += (text[last:start], CARD)
                last = head
                # what follows the card is a number of its own: a phone number too?
                rest = None if glued else _kind(text, head + 1, end)
                if rest is not None:
                    out += (text[head : head + 1], rest)
                    last = end
                continue
        if kind is not None:
            out += (text[last:start], kind)
            last = end
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def redact_emails(text: str) -> str:
    """E-mail addresses in ``text`` replaced by ``[email]``.

    The pattern reads at most 64 characters before the "@" (so a long run of text
    with an "@" in it costs linear time, not quadratic); a longer local part is then
    taken back to where it starts, so no head of an address is left behind."""
    if _AT.search(text) is None:
        return text
    out: list[str] = []
    last = 0
    for m in _EMAIL.finditer(text):
        start = m.start()
        while start > last and _LOCAL.match(text[start - 1]):
            start -= 1
        out += (text[last:start], EMAIL)
        last = m.end()
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


MEMO_SIZE = 50_000  # strings remembered (about 15 MB of passages): emptied when full


def make_redactor(patterns: Iterable[str] = ()) -> Redactor:
    """A function that redacts one string: the extra ``patterns`` first (they see the text
    as written), then e-mail addresses, then phone and card numbers.

    It remembers what it redacted: a log repeats its retrieved passages, its versions and
    its sources thousands of times, and a dictionary look-up is cheaper than the scans.
    """
    extra = [re.compile(p) for p in patterns]
    memo: dict[str, str] = {}

    def scrub(text: str) -> str:
        for pattern in extra:
            text = pattern.sub(OTHER, text)
        if "@" in text or _AT.search(text) is not None:
            text = redact_emails(text)
        if _SEVEN.search(text) is not None:
            text = redact_numbers(text)
        return text

    def redact(text: str) -> str:
        done = memo.get(text)
        if done is None:
            if len(memo) >= MEMO_SIZE:
                memo.clear()
            done = memo[text] = scrub(text)
        return done

    return redact


redact = make_redactor()


def user_key(raw: str) -> str:
    """A user id as stored: 16 hex digits of its SHA-256. The same user is the same key
    (re-asks can be found); the id itself, often an e-mail address, is never stored."""
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:16]
