"""What a run of digits validates as: a payment card (shape, network, Luhn), a national
identity number in its own grouping or bare (``python-stdnum``), a product code (EAN,
UPC, GTIN, ISBN), a phone number in E.164 read with a "+" in front (``phonenumbers``).
The checks ragrail.text.pii_detect applies to each number it finds; each answer is a
pure function of the digits, so the costly ones (stdnum, phonenumbers) are remembered.
"""

from __future__ import annotations

import re
from typing import Any

_NON_DIGIT = re.compile(r"\D+")
_GROUP_SPLIT = re.compile(r"[ .\-]")
# Maestro's issuer ranges, whose cards may have 12 digits (the other networks: 13-19)
_MAESTRO_12 = ("5018", "5020", "5038", "5893", "6304", "6759", "6761", "6762", "6763",
               "56", "57", "58", "0604")  # fmt: skip


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


def card_shaped(run: str, fewest: int = 13) -> bool:
    """13-19 digits (``fewest``: 12 for Maestro) written as a card is: all together, in
    fours (the last group 1-4 digits) or as 4-6-5 / 4-6-4 (American Express, Diners),
    one kind of separator."""
    digits = _NON_DIGIT.sub("", run)
    if not fewest <= len(digits) <= 19 or len({ch for ch in run if not ch.isdigit()}) > 1:
        return False
    groups = [len(g) for g in _GROUP_SPLIT.split(run)]
    if len(groups) == 1:
        return True
    in_fours = all(g == 4 for g in groups[:-1]) and 1 <= groups[-1] <= 4
    return in_fours or groups in ([4, 6, 5], [4, 6, 4])


def is_card(run: str, digits: str) -> bool:
    """Card-shaped, a network's first digits (Mir, Mastercard 22-27; Amex, Diners, JCB 3;
    Visa 4; Mastercard, Maestro 5; Discover, UnionPay, Maestro 6; 12 digits: Maestro
    only), Luhn-valid, and not a 13-digit EAN product code written as one."""
    n = len(digits)
    if n == 12:
        if not digits.startswith(_MAESTRO_12):
            return False
    elif n < 12 or n > 19 or not ("22" <= digits[:2] <= "27" or digits[0] in "3456"):
        return False
    if not card_shaped(run, 12) or not luhn_ok(digits):
        return False
    return not (n == 13 and valid("ean", digits))


_MODULES: dict[str, Any] = {}
_MEMO: dict[tuple[str, str], bool] = {}


def valid(name: str, value: str) -> bool:
    """``stdnum.<name>.is_valid(value)``, the module imported on first use, the answer
    remembered (a log repeats its numbers)."""
    key = (name, value)
    known = _MEMO.get(key)
    if known is not None:
        return known
    module = _MODULES.get(name)
    if module is None:
        import importlib

        module = _MODULES[name] = importlib.import_module(f"stdnum.{name}")
    if len(_MEMO) > 100_000:
        _MEMO.clear()
    ok = _MEMO[key] = bool(module.is_valid(value))
    return ok


def shaped_id(digits: str, sizes: list[int], seps: set[str]) -> bool:
    """An identity number written in its own grouping: SSN 123-45-6789, CPF
    123.456.789-09, KR 971013-9019902, NIR 2 95 10 99 126 111 93, Aadhaar and My Number
    1234 5678 9012, IdNr 12 345 678 901, BSN 1234.56.789, AHV 756.9143.6207.88."""
    if sizes == [3, 2, 4] and seps <= {"-", " "}:
        return valid("us.ssn", digits)
    if sizes == [3, 3, 3, 2] and seps == {".", "-"}:
        return valid("br.cpf", digits)
    if sizes == [6, 7] and seps == {"-"}:
        return valid("kr.rrn", digits)
    if sizes == [1, 2, 2, 2, 3, 3, 2]:
        return valid("fr.nir", digits)
    if sizes == [4, 4, 4] and seps == {" "}:
        return valid("in_.aadhaar", digits) or valid("jp.in_", digits)
    if sizes == [2, 3, 3, 3] and seps == {" "}:
        return valid("de.idnr", digits)
    if sizes == [3, 4, 4, 2] and seps <= {".", " "}:
        return valid("ch.ssn", digits)
    return sizes == [4, 2, 3] and seps == {"."} and valid("nl.bsn", digits)


def bare_id(digits: str) -> bool:
    """An identity number written as bare digits: IdNr or CPF (11), Aadhaar or My Number
    (12), AHV (13, 756...), NIR (15), CN resident id (18), BSN (9)."""
    n = len(digits)
    if n == 11:
        return valid("de.idnr", digits) or valid("br.cpf", digits)
    if n == 12:
        return valid("in_.aadhaar", digits) or valid("jp.in_", digits)
    if n == 13:
        return digits.startswith("756") and valid("ch.ssn", digits)
    if n == 15:
        return valid("fr.nir", digits)
    if n == 18:
        return valid("cn.ric", digits)
    return n == 9 and valid("nl.bsn", digits)


def product_code(digits: str, sizes: list[int], labelled: bool, check: str = "") -> bool:
    """An EAN/UPC/GTIN, ISBN or ISSN that validates as one and is written so that it cannot be
    taken for a phone number: labelled (``EAN``, ``ISBN``, ``barcode``...), or an ISBN
    in its hyphenated groups (978-3-16-148410-0, 0-306-40615-2, 0-07-166923-X), or 12-14
    bare digits not starting with 0 (a trunk prefix) that are no valid number in E.164.
    ``check``: an "X" written after the digits (an ISBN-10's check digit)."""
    n = len(digits) + len(check)
    if labelled:
        if n in (8, 12, 13, 14) and not check and valid("ean", digits):
            return True
        if n == 8:
            return valid("issn", digits + check)
        return n in (10, 13) and valid("isbn", digits + check)
    groups, last = len(sizes) + bool(check), 1 if check else sizes[-1]
    if groups == 4 and last == 1:
        return n == 10 and valid("isbn", digits + check)
    if len(sizes) == 5 and n == 13 and digits[:3] in ("978", "979"):
        return valid("isbn", digits)
    return (
        len(sizes) == 1
        and n in (12, 13, 14)
        and digits[0] != "0"
        and valid("ean", digits)
        and not e164_valid(digits)
    )


_E164: dict[str, bool] = {}


def e164_valid(digits: str) -> bool:
    """Whether ``+<digits>`` is a valid phone number (an msisdn written without its "+":
    ``5491123452648``, ``244923127431``)."""
    known = _E164.get(digits)
    if known is None:
        import phonenumbers

        try:
            known = phonenumbers.is_valid_number(phonenumbers.parse("+" + digits, None))
        except phonenumbers.NumberParseException:
            known = False
        if len(_E164) > 100_000:
            _E164.clear()
        _E164[digits] = known
    return known


def phone_matches(window: str, region: str | None) -> list[tuple[int, int]]:
    """Spans of ``phonenumbers.PhoneNumberMatcher`` at ``POSSIBLE`` leniency."""
    import phonenumbers

    return [
        (m.start, m.end)
        for m in phonenumbers.PhoneNumberMatcher(
            window, region, leniency=phonenumbers.Leniency.POSSIBLE
        )
    ]
