"""Redacting personal data from production logs before anything is stored.

E-mail addresses become ``[email]``, phone numbers ``[phone]``, payment-card numbers
``[card]``, IBANs ``[iban]``, national identity numbers ``[id]`` (and, with ``ip=True``,
IPv4 addresses ``[ip]``), and whatever the project's ``[logs] redact`` patterns match
``[redacted]``. What counts as each, and which numbers are kept (dates, prices, order
numbers, versions, product codes...), is ragrail.text.pii_detect's: the ``no_pii``
check uses the same detector. A user id is never stored as written: :func:`user_key`
keeps a short hash, enough to find the same user re-asking.

This runs over every string of every logged conversation, so a string without an
"@" or two digits in a row is returned after C-speed scans, and phonenumbers' matcher
(pure Python, about 25 µs) only sees the numbers that a country code, or the project's
region, makes worth reading. A log's users live anywhere, so 7-12 digits that no context
keeps are redacted as a phone number whatever the region: a lost order number costs
less than a leaked phone number.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable

from ragrail.text.pii_detect import Detector

EMAIL, PHONE, CARD, IBAN, ID, IP, OTHER = (
    "[email]", "[phone]", "[card]", "[iban]", "[id]", "[ip]", "[redacted]"
)  # fmt: skip
TAGS = {"email": EMAIL, "phone": PHONE, "card": CARD, "iban": IBAN, "id": ID, "ip": IP}

Redactor = Callable[[str], str]
_INGEST = Detector(any_national=True)


def _replace(text: str, detector: Detector, kinds: Iterable[str]) -> str:
    wanted = set(kinds)
    hits = [h for h in detector.find(text) if h[2] in wanted]
    return _join(text, hits) if hits else text


def _join(text: str, hits: list[tuple[int, int, str]]) -> str:
    """``text`` with each hit's span replaced by its kind's tag."""
    out: list[str] = []
    last = 0
    for start, end, kind in hits:
        out += (text[last:start], TAGS[kind])
        last = end
    out.append(text[last:])
    return "".join(out)


def redact_numbers(text: str) -> str:
    """Phone, card, IBAN and identity numbers in ``text`` replaced by their tags."""
    return _replace(text, _INGEST, ("phone", "card", "iban", "id"))


def redact_emails(text: str) -> str:
    """E-mail addresses in ``text`` replaced by ``[email]``."""
    return _replace(text, _INGEST, ("email",))


MEMO_SIZE = 50_000  # strings remembered (about 15 MB of passages): emptied when full


def make_redactor(
    patterns: Iterable[str] = (), *, region: str | None = None, ip: bool = False
) -> Redactor:
    """A function that redacts one string: the extra ``patterns`` first (they see the text
    as written), then personal data (ragrail.text.pii_detect). ``region`` ("DE", "US"):
    where numbers written without a country code are dialled, so that phonenumbers reads
    them (extent, extension); ``ip``: IPv4 addresses become ``[ip]`` (kept otherwise).

    It remembers what it redacted: a log repeats its retrieved passages, its versions and
    its sources thousands of times, and a dictionary look-up is cheaper than the scans.
    """
    extra = [re.compile(p) for p in patterns]
    detector = _INGEST if region is None and not ip else Detector(region, any_national=True, ip=ip)
    find = detector.find
    memo: dict[str, str] = {}

    def redact(text: str) -> str:
        done = memo.get(text)
        if done is None:
            if len(memo) >= MEMO_SIZE:
                memo.clear()
            done = text
            for pattern in extra:
                done = pattern.sub(OTHER, done)
            hits = find(done)
            if hits:
                done = _join(done, hits)
            memo[text] = done
        return done

    return redact


redact = make_redactor()


def user_key(raw: str) -> str:
    """A user id as stored: 16 hex digits of its SHA-256. The same user is the same key
    (re-asks can be found); the id itself, often an e-mail address, is never stored."""
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:16]
