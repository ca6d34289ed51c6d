"""Personal data in an answer, for the ``no_pii`` check: e-mail addresses, phone numbers
(by ``phonenumbers``), payment-card numbers (Luhn), IBANs (ISO 13616) and national
identity numbers, told from dates, times, prices, ISBNs and labelled order or reference
numbers by ragrail.text.pii_detect, the detector ingest redaction uses."""

from __future__ import annotations

import re
from collections.abc import Collection

from ragrail.text.pii_detect import Detector
from ragrail.text.pii_numbers import card_shaped, luhn_ok  # noqa: F401  (the checks' helpers)

# ISO 13616 (SWIFT IBAN registry): each country's IBAN length.
IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22,
    "BH": 22, "BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24,
    "DE": 22, "DJ": 27, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18,
    "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27,
    "GT": 28, "HN": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
    "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20,
    "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20,
    "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23, "PK": 24,
    "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24,
    "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25,
    "SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
    "YE": 30,
}  # fmt: skip


def iban_ok(iban: str) -> bool:
    """ISO 13616 (``stdnum.iban``): a known country, its length and national format, and
    mod-97 of the rearranged number is 1."""
    from stdnum import iban as stdnum_iban

    return bool(stdnum_iban.is_valid(iban))


def isbn13_ok(digits: str) -> bool:
    """An ISBN-13 (EAN Bookland): 978/979, digits weighted 1, 3, 1, ... sum to 0 mod 10."""
    if len(digits) != 13 or digits[:3] not in ("978", "979"):
        return False
    return sum(int(d) * (3 if i % 2 else 1) for i, d in enumerate(digits)) % 10 == 0


def find_pii(text: str, kinds: Collection[str], region: str | None = None) -> list[str]:
    """Problems naming each kind of PII found (the value itself is not echoed in full).

    The detector is ingest redaction's (ragrail.text.pii_detect), with one difference:
    an answer check must not fail on an order number, so a number written without a
    country code is a phone number only as ``phonenumbers`` reads it in ``region``
    (``"US"``: ``(415) 555-0132``); with no region, only numbers written with their
    country code (``+44 20 7946 0958``) are phone numbers. A card number is 13-19 digits
    shaped like one, from a card network, that pass the Luhn check; an IBAN passes ISO
    13616's checks; ``id`` is a national identity number. Dates, times, prices, ISBNs
    and numbers labelled as an order, invoice or other reference are never flagged.
    """
    found = []
    for start, end, kind in Detector(region).find(text):
        if kind in kinds:
            value = text[start:end]
            if kind != "email":  # the digits (and letters) only, as in "IBAN GB…32"
                value = re.sub(r"\W" if kind in ("iban", "id") else r"\D", "", value).upper()
            found.append(f"{_NAMES[kind]} {_mask(value)}")
    return found


_NAMES = {
    "email": "e-mail address", "phone": "phone number", "card": "card number",
    "iban": "IBAN", "id": "identity number", "ip": "IP address",
}  # fmt: skip


def _mask(value: str) -> str:
    return value[:2] + "…" + value[-2:] if len(value) > 4 else "…"
