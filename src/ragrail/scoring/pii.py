"""Personal data in an answer, for the ``no_pii`` check: e-mail addresses, phone numbers
(by ``phonenumbers``), payment-card numbers (Luhn) and IBANs (ISO 13616 mod-97), telling
them from dates, times, ISBNs and labelled order or reference numbers."""

from __future__ import annotations

import re
from collections.abc import Collection

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# A run of digits joined by single spaces or hyphens, not part of a decimal, a date
# (15.01.2024, 01/15/2024) or a time. Possessive, so the whole run is one number or
# none: no card is read out of the middle of a longer run.
_NUMBER_RUN = re.compile(r"(?<![\d.,/+-])\d++(?:[ -]\d++)*+(?![\w]|[.,:/]\d)")
# An IBAN in print (DE89 3704 0044 ...) or electronic form, ASCII upper case
_IBAN_RUN = re.compile(r"(?<![A-Z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){10,32}(?![A-Z0-9])")
_ASCII_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
# A label that makes the number after it an identifier, not a card or a phone:
# "Order #4111111111111111", "ISBN 978-3-16-148410-0", "tracking no. 9876543210".
_ID_LABEL = re.compile(
    r"\b(?:order|invoice|tracking|ticket|booking|confirmation|reference|ref|transaction|"
    r"shipment|parcel|consignment|isbn(?:-1[03])?|issn|awb|sku|serial|case|po|pnr|"
    r"receipt|id)\b\W{0,3}(?:(?:number|num|no)\b\W{0,3})?\Z",
    re.I,
)
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


def luhn_ok(digits: str) -> bool:
    """Luhn checksum: double every second digit from the right, subtract 9 above 9,
    and the sum must be a multiple of 10."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d * 2 > 9 else d * 2
        total += d
    return total % 10 == 0


def iban_ok(iban: str) -> bool:
    """ISO 13616: a known country, its length, and mod-97 of the rearranged number is 1."""
    iban = iban.replace(" ", "").upper()
    if IBAN_LENGTHS.get(iban[:2]) != len(iban) or not iban[2:4].isdigit():
        return False
    if not iban.isascii() or not iban.isalnum():
        return False
    return int("".join(str(int(ch, 36)) for ch in iban[4:] + iban[:4])) % 97 == 1


def isbn13_ok(digits: str) -> bool:
    """An ISBN-13 (EAN Bookland): 978/979, digits weighted 1, 3, 1, ... sum to 0 mod 10."""
    if len(digits) != 13 or digits[:3] not in ("978", "979"):
        return False
    return sum(int(d) * (3 if i % 2 else 1) for i, d in enumerate(digits)) % 10 == 0


def card_shaped(run: str) -> bool:
    """13-19 digits written as a card is: all together, in fours (the last group 1-4
    digits) or as 4-6-5 / 4-6-4 (American Express, Diners), one kind of separator."""
    digits = re.sub(r"\D", "", run)
    if not 13 <= len(digits) <= 19:
        return False
    if len({ch for ch in run if not ch.isdigit()}) > 1:
        return False
    groups = [len(g) for g in re.split(r"[ -]", run)]
    if len(groups) == 1:
        return True
    in_fours = all(g == 4 for g in groups[:-1]) and 1 <= groups[-1] <= 4
    return in_fours or groups in ([4, 6, 5], [4, 6, 4])


def _timestamp(digits: str) -> bool:
    """YYYYMMDDhhmm[ss...]: a compact timestamp, never a card (no card starts 19 or 20)."""
    return (
        digits[:2] in ("19", "20")
        and 1 <= int(digits[4:6]) <= 12
        and 1 <= int(digits[6:8]) <= 31
        and int(digits[8:10]) <= 23
        and int(digits[10:12]) <= 59
    )


def _labelled_id(text: str, start: int) -> bool:
    """Whether the number at ``start`` follows a label such as "Order #" or "ISBN"."""
    return _ID_LABEL.search(text, max(0, start - 40), start) is not None


def find_pii(text: str, kinds: Collection[str], region: str | None = None) -> list[str]:
    """Problems naming each kind of PII found (the value itself is not echoed in full).

    Phone numbers are those ``phonenumbers`` finds valid: written with their country
    code (``+44 20 7946 0958``), or, with ``region`` (``"US"``), also as dialled in
    that country. A card number is 13-19 digits shaped like one that pass the Luhn
    check; an IBAN passes ISO 13616's length and mod-97 checks. Dates, times, ISBNs
    and numbers labelled as an order, invoice or other reference are never flagged.
    """
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []  # spans already reported, so no number counts twice

    def free(start: int, end: int) -> bool:
        return all(end <= a or start >= b for a, b in taken)

    if "email" in kinds:
        found += [(m.start(), f"e-mail address {_mask(m.group(0))}") for m in _EMAIL.finditer(text)]
    upper = text.translate(_ASCII_UPPER)  # same length: offsets still hold
    for m in _IBAN_RUN.finditer(upper):
        iban = _iban_at(m.group(0))
        if iban:
            taken.append((m.start(), m.start() + len(iban)))
            if "iban" in kinds:
                found.append((m.start(), f"IBAN {_mask(iban.replace(' ', ''))}"))
    for m in _NUMBER_RUN.finditer(text):
        digits = re.sub(r"\D", "", m.group(0))
        if (
            free(m.start(), m.end())
            and not (m.start() and text[m.start() - 1].isalpha())  # SKU4111...: a code
            and card_shaped(m.group(0))
            and luhn_ok(digits)
            and not isbn13_ok(digits)
            and not (len(digits) >= 12 and m.group(0).isdigit() and _timestamp(digits))
            and not _labelled_id(text, m.start())
        ):
            taken.append(m.span())
            if "card" in kinds:
                found.append((m.start(), f"card number {_mask(digits)}"))
    if "phone" in kinds:
        import phonenumbers

        for pm in phonenumbers.PhoneNumberMatcher(
            text, region, leniency=phonenumbers.Leniency.VALID
        ):
            if free(pm.start, pm.end) and not _labelled_id(text, pm.start):
                digits = re.sub(r"\D", "", pm.raw_string)
                found.append((pm.start, f"phone number {_mask(digits)}"))
    return [problem for _, problem in sorted(found, key=lambda f: f[0])]


def _iban_at(run: str) -> str | None:
    """The IBAN a candidate run starts with, ending at a group boundary, if any (a run
    can take in a following upper-case word: "DE89 3704 0044 0532 0130 00 OK")."""
    length = IBAN_LENGTHS.get(run[:2])
    if length is None:
        return None
    count = 0
    for i, ch in enumerate(run):
        count += ch != " "
        if count == length:
            head = run[: i + 1]
            at_boundary = i + 1 == len(run) or run[i + 1] == " "
            return head if at_boundary and iban_ok(head) else None
    return None


def _mask(value: str) -> str:
    return value[:2] + "…" + value[-2:] if len(value) > 4 else "…"
