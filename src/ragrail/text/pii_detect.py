"""Personal data in text, as spans: e-mail addresses, phone numbers, payment cards,
IBANs and national identity numbers. One detector, two uses: ingest redaction
(ragrail.online.redact) and the ``no_pii`` check (ragrail.scoring.pii).

- **E-mail**: a local part and a domain with a dot, "@" also as "＠", "﹫" or "%40".
- **Phone**: ``phonenumbers.PhoneNumberMatcher`` with ``Leniency.POSSIBLE`` (the length is
  possible for the country): ``VALID`` would keep numbers not yet assigned, fictional
  ranges (+44 7700 900123, 555 numbers) and every number of a newly opened range, and a
  privacy filter would rather redact those. Numbers written with a country code (``+``,
  ``(+44)``, ``00``) are read with it; others in the national format of ``region``.
  Extensions (``x35337``, ``ext. 12``) go with the number. With ``any_national`` (ingest:
  a log's users live anywhere) 7-12 digits that the region's matcher does not take and
  no context keeps are a phone number too: when in doubt a number is redacted.
- **Card**: 13-19 digits shaped like a card (together, in fours, 4-6-5, 4-6-4), Luhn-valid,
  issued by a network (first digits 22-27 or 3-6), wherever it stands; a 13-digit number
  that is a valid EAN-13 is a product code (13-digit cards are no longer issued).
- **IBAN**: ``stdnum.iban`` (ISO 13616: country, length, national format, mod 97).
- **Identity numbers** (``stdnum``): US SSN (written 3-2-4), DE IdNr/Steuer-ID, FR NIR,
  ES DNI and NIE, IT codice fiscale, NL BSN, BR CPF, IN Aadhaar and PAN, JP My Number,
  CN resident id, KR resident registration number, and the UK National Insurance number
  (by its published prefix rules: stdnum has none).

Texts are read after a length-preserving fold (full-width forms and other scripts'
digits to ASCII, as NFKC does for them), so offsets hold for the text as written. A
number glued to a Latin word (``SKU4111...``, ``A1234567B``) is an identifier, not
personal data; ragrail.text.pii_context lists what else keeps a number.
"""

from __future__ import annotations

import re
from typing import Any

from ragrail.text.pii_context import ip_shaped, kept_by_context, order_labelled

EMAIL, PHONE, CARD, IBAN, ID, IP = "email", "phone", "card", "iban", "id", "ip"
Hit = tuple[int, int, str]  # start, end, kind

# The zero of each script's decimal digits (Unicode 15, category Nd): ten in a row each
_ZEROS = (
    0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66,
    0xCE6, 0xD66, 0xDE6, 0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810,
    0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0,
    0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10, 0x104A0, 0x10D30, 0x11066, 0x110F0,
    0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0, 0x11950,
    0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0, 0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC,
    0x1D7F6, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0,
)  # fmt: skip
_SPACES = [0x00A0, *range(0x2000, 0x200B), 0x202F, 0x3000]
_DASHES = [*range(0x2010, 0x2016), 0x2212, 0x30FC, 0xFE63]
_FOLD: dict[int, int] = {cp: cp - 0xFEE0 for cp in range(0xFF01, 0xFF5F)}
_FOLD |= dict.fromkeys(_SPACES, 0x20) | dict.fromkeys(_DASHES, 0x2D) | {0xFE6B: 0x40}
_FOLD |= {zero + d: 0x30 + d for zero in _ZEROS for d in range(10)}


def _char_class(codes: list[int]) -> str:
    """A regular-expression class of ``codes`` as ranges (a class of single characters
    this long is scanned ten times slower)."""
    parts, first = [], codes[0]
    for prev, cp in zip(codes, [*codes[1:], -1], strict=True):
        if cp != prev + 1:
            parts.append(
                re.escape(chr(first)) + ("-" + re.escape(chr(prev)) if prev > first else "")
            )
            first = cp
    return "[" + "".join(parts) + "]"


_FOLDABLE = re.compile(_char_class(sorted(_FOLD)))
_PLUS_ENCODED = re.compile("%2[Bb]")


def fold(text: str) -> str:
    """``text`` with full-width ASCII, odd spaces and dashes, and every script's decimal
    digits made ASCII, one character for one (so a span found in it is a span of text),
    and a URL's "%2B" as two spaces and "+"."""
    if "%2" in text:
        text = _PLUS_ENCODED.sub("  +", text)
    if text.isascii() or _FOLDABLE.search(text) is None:
        return text
    return text.translate(_FOLD)


# Any local part up to the "@" (no fragment of "Ana.Pérez+tag@..." is left behind) but
# not across a URL's "/", "?", "&" or "=": "...?email=bob@example.com" loses "bob@...".
_EMAIL = re.compile(r"[^\s@<>()\[\]{},;:\"'/?&=]{1,64}(?:@|%40)[\w-]+(?:\.[\w-]+)+")
_LOCAL = re.compile(r"[^\s@<>()\[\]{},;:\"'/?&=]")
# C-speed gates on the folded text: every kind but e-mail has two digits in a row, and
# every kind found by _RUN or _IBAN_RUN seven characters of digits and separators
_TWO_DIGITS = re.compile(r"[0-9][0-9]")
_NUMBERISH = re.compile(r"[0-9][0-9 ().\-/+]{5,}[0-9]")
# ...and an id or IBAN a letter next to a digit, or a NINO's "12 34 56 C"
_ALNUM_HINT = re.compile(
    r"[0-9](?:(?<=[A-Za-z][0-9])|(?=[A-Za-z])|[0-9] [0-9]{2} [0-9]{2} ?[A-Da-d](?![A-Za-z0-9]))"
)
# A number as written: groups of digits (one may be in brackets) joined by at most one
# space, dot, dash or slash, a country code in front, an extension behind. Possessive:
# a run is one number or none (never the tail of a longer one).
_RUN = re.compile(
    r"(?=[(+0-9][0-9 ().\-/+]{6})(?:\(\+\d{1,4}\) ?|\+ ?)?(?:\(\d{1,5}\)|\d++)(?:[ .\-/]?(?:\(\d{1,5}\)|\d++))*+"
    r"(?P<ext>,? ?(?:x|ext\.?|extn\.?|extension|poste|durchwahl|доб\.?|内線) ?\d{1,7}(?!\d))?",
    re.I,
)
_IBAN_RUN = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]){10,32}(?![A-Za-z0-9])")
_ALNUM_ID = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"(?P<dni>\d{8}[ -]?[A-Z])|(?P<nie>[XYZ][ -]?\d{7}[ -]?[A-Z])|"
    r"(?P<cf>[A-Z]{6}[0-9LMNPQRSTUV]{2}[A-EHLMPRST][0-9LMNPQRSTUV]{2}[A-Z][0-9LMNPQRSTUV]{3}[A-Z])|"
    r"(?P<pan>[A-Z]{3}[ABCFGHLJPT][A-Z]\d{4}[A-Z])|(?P<ric>\d{17}X)|"
    r"(?P<nino>[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d\d ?\d\d ?\d\d ?[A-D])"
    r")(?![A-Za-z0-9])",
    re.I,
)
_NINO_NOT = ("BG", "GB", "NK", "KN", "TN", "NT", "ZZ")
# Scripts written without spaces between words (CJK, kana, Hangul, Thai): a number glued
# to them ("私の番号は090-1234-5678です") is still a number, not part of a word.
_UNSPACED = "\u0e00-\u0e7f\u3000-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
_WORD = re.compile(rf"[^\W{_UNSPACED}]")
_GLUED = re.compile(rf"[^\W{_UNSPACED}]|@|[.,:]\d")
_NON_DIGIT = re.compile(r"\D+")
# "XJ-1234567", "a456-426614174000": a code's part after a dash, not a number of its own
_IBAN_HEAD = re.compile(r"(?:\A|[^A-Za-z0-9])[A-Za-z]{2}[0-9]{2}\Z|\A[A-Za-z]{2}[0-9]{2}\Z")
_CODE_DASH = re.compile(rf"[^\W{_UNSPACED}]-")
_EXPIRY = re.compile(r"(?:\d\d?/\d\d(?:\d\d)?[ .\-]?)+")
_GROUP_GAP = re.compile(r"[ .\-](?=\(?\d)")


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


def card_shaped(run: str) -> bool:
    """13-19 digits written as a card is: all together, in fours (the last group 1-4
    digits) or as 4-6-5 / 4-6-4 (American Express, Diners), one kind of separator."""
    digits = _NON_DIGIT.sub("", run)
    if not 13 <= len(digits) <= 19 or len({ch for ch in run if not ch.isdigit()}) > 1:
        return False
    groups = [len(g) for g in re.split(r"[ .\-]", run)]
    if len(groups) == 1:
        return True
    in_fours = all(g == 4 for g in groups[:-1]) and 1 <= groups[-1] <= 4
    return in_fours or groups in ([4, 6, 5], [4, 6, 4])


def is_card(run: str, digits: str) -> bool:
    """Card-shaped, a network's first digits (Mir, Mastercard 22-27; Amex, Diners, JCB 3;
    Visa 4; Mastercard, Maestro 5; Discover, UnionPay, Maestro 6), Luhn-valid, and not an
    EAN-13 product code written as one."""
    if not card_shaped(run) or not ("22" <= digits[:2] <= "27" or digits[0] in "3456"):
        return False
    if len(digits) == 13 and _valid("ean", digits):
        return False
    return luhn_ok(digits)


_MODULES: dict[str, Any] = {}


def _valid(name: str, value: str) -> bool:
    """``stdnum.<name>.is_valid(value)``, the module imported on first use."""
    module = _MODULES.get(name)
    if module is None:
        import importlib

        module = _MODULES[name] = importlib.import_module(f"stdnum.{name}")
    return bool(module.is_valid(value))


def _shaped_id(digits: str, sizes: list[int], seps: set[str]) -> bool:
    """An identity number written in its own grouping: SSN 123-45-6789, CPF
    123.456.789-09, KR 971013-9019902, NIR 2 95 10 99 126 111 93, Aadhaar and My Number
    1234 5678 9012, IdNr 12 345 678 901, BSN 1234.56.789."""
    if sizes == [3, 2, 4] and seps <= {"-", " "}:
        return _valid("us.ssn", digits)
    if sizes == [3, 3, 3, 2] and seps == {".", "-"}:
        return _valid("br.cpf", digits)
    if sizes == [6, 7] and seps == {"-"}:
        return _valid("kr.rrn", digits)
    if sizes == [1, 2, 2, 2, 3, 3, 2]:
        return _valid("fr.nir", digits)
    if sizes == [4, 4, 4] and seps == {" "}:
        return _valid("in_.aadhaar", digits) or _valid("jp.in_", digits)
    if sizes == [2, 3, 3, 3] and seps == {" "}:
        return _valid("de.idnr", digits)
    return sizes == [4, 2, 3] and seps == {"."} and _valid("nl.bsn", digits)


def _bare_id(digits: str) -> bool:
    """An identity number written as bare digits (after labels and product codes have had
    their say: a bare 12-digit UPC-A is kept before an Aadhaar is looked for)."""
    n = len(digits)
    if n == 11:
        return _valid("de.idnr", digits) or _valid("br.cpf", digits)
    if n == 12:
        return _valid("in_.aadhaar", digits) or _valid("jp.in_", digits)
    if n == 15:
        return _valid("fr.nir", digits)
    if n == 18:
        return _valid("cn.ric", digits)
    return n == 9 and _valid("nl.bsn", digits)


def _product_code(digits: str, sizes: list[int]) -> bool:
    """An ISBN-13/EAN-13, UPC-A, GTIN-14 or hyphenated ISBN-10 that validates as one."""
    n = len(digits)
    if n in (12, 13, 14):
        return _valid("ean", digits)
    return n == 10 and len(sizes) == 4 and sizes[-1] == 1 and _valid("isbn", digits)


def _matches(window: str, region: str | None) -> list[tuple[int, int]]:
    import phonenumbers

    return [
        (m.start, m.end)
        for m in phonenumbers.PhoneNumberMatcher(
            window, region, leniency=phonenumbers.Leniency.POSSIBLE
        )
    ]


def _card_head(t: str, start: int, end: int) -> int | None:
    """Where a card number ends that opens the run t[start:end] and is followed by more
    of it ("4111 1111 1111 1111 123": a security code). Whole groups, longest first."""
    gaps, before, digits = [], start, 0
    for m in _GROUP_GAP.finditer(t, start, end):
        digits += sum(ch.isdigit() for ch in t[before : m.start()])
        if digits > 19:
            break
        if digits >= 13:
            gaps.append(m.start())
        before = m.start()
    for gap in reversed(gaps):
        run = t[start:gap]
        if is_card(run, _NON_DIGIT.sub("", run)):
            return gap
    return None


class Detector:
    """Finds personal data. ``region``: where numbers written without a country code are
    dialled (``"US"``); ``any_national``: also call 7-12 digits a phone number when no
    context keeps them (the ingest default); ``ip``: report IPv4 addresses as ``ip``."""

    def __init__(
        self, region: str | None = None, *, any_national: bool = False, ip: bool = False
    ) -> None:
        self.region, self.any_national, self.ip = region, any_national, ip

    def find(self, text: str) -> list[Hit]:
        """Spans of personal data in ``text``, in order, none overlapping."""
        t = fold(text)
        hits = _emails(t) if "@" in t or "%40" in t else []
        if _TWO_DIGITS.search(t) is None:
            return hits
        numberish = _NUMBERISH.search(t) is not None
        if _ALNUM_HINT.search(t) is not None:
            if numberish:
                hits += _ibans(t, hits)
            hits += _alnum_ids(t, hits)
        if numberish:
            hits += self._numbers(t, hits)
        hits.sort()
        return hits

    def _numbers(self, t: str, taken: list[Hit]) -> list[Hit]:
        found: list[Hit] = []
        m = _RUN.search(t)
        while m is not None:
            start, end = m.span()
            main_end = m.start("ext") if m.group("ext") else end
            if start and (_WORD.match(t[start - 1]) or _CODE_DASH.match(t, max(0, start - 2))):
                # glued to a word, the first group is part of an identifier (SKU4111...,
                # A1234567B); what follows its gap is read again ("v1 (415) 555-2671")
                gap = _GROUP_GAP.search(t, start, main_end)
                if _IBAN_HEAD.match(t, max(0, start - 3), start + 2):
                    gap = None  # "DE89 3704 ...": an IBAN that failed its check, not a card
                m = _RUN.search(t, gap.end() if gap else end)
                continue
            if (
                main_end - start >= 7
                and not any(a < end and start < b for a, b, _ in taken)
                and _GLUED.match(t, end) is None  # a word, an "@", a decimal or time part
            ):
                found += self._classify(t, start, main_end, end)
            m = _RUN.search(t, end)
        return found

    def _classify(self, t: str, start: int, main_end: int, end: int) -> list[Hit]:
        run = t[start:main_end]
        digits = _NON_DIGIT.sub("", run)
        n = len(digits)
        if n < 7:
            return []
        head = run.lstrip("(")
        if head.startswith("+") or (head.startswith("00") and n > 9 and digits[2] != "0"):
            return self._international(t, start, end, n)
        if ip_shaped(run):
            return [(start, main_end, IP)] if self.ip else []
        if is_card(run, digits):
            return [(start, main_end, CARD)]
        groups = [g for g in _NON_DIGIT.split(run) if g]
        sizes = [len(g) for g in groups]
        seps = {ch for ch in run if ch in " .-/"}
        if _shaped_id(digits, sizes, seps):
            return [(start, main_end, ID)]
        if n > 13 and len(groups) > 1:
            gap = _card_head(t, start, main_end)
            if gap is not None:  # what follows: an expiry and a code, or a number of its own
                after = _EXPIRY.match(t, gap + 1, main_end)
                rest = self._classify(t, after.end() if after else gap + 1, main_end, end)
                return [(start, gap, CARD), *rest]
        if kept_by_context(t, start, main_end, groups, seps) or order_labelled(t, start):
            return []
        if _product_code(digits, sizes):
            return []
        if run.isdigit() and _bare_id(digits):
            return [(start, main_end, ID)]
        if self.region is not None:
            spans = _matches(t[start:end], self.region)
            if spans:
                return [(start + a, start + b, PHONE) for a, b in spans]
        epoch = run.isdigit() and digits[0] == "1" and n in (10, 13)  # seconds, ms since 1970
        if self.any_national and 7 <= n <= 12 and not epoch:
            return [(start, end, PHONE)]
        return []

    def _international(self, t: str, start: int, end: int, n: int) -> list[Hit]:
        """+44 20 7946 0958, (+44) 20..., 0044 20 ...: read with the country code."""
        window = t[start:end]
        lead = len(window) - len(window.lstrip("("))
        if window[lead:].startswith("00"):  # "00" as "+" and a space: offsets hold
            window = window[:lead] + " +" + window[lead + 2 :]
        spans = _matches(window, None)
        if spans:
            return [(start + (0 if a <= lead + 2 else a), start + b, PHONE) for a, b in spans]
        if self.any_national and 8 <= n <= 17:
            return [(start, end, PHONE)]
        return []


def _emails(t: str) -> list[Hit]:
    """The pattern reads at most 64 characters before the "@" (linear time on a long
    run of text); a longer local part is then taken back to where it starts."""
    found: list[Hit] = []
    last = 0
    for m in _EMAIL.finditer(t):
        start = m.start()
        while start > last and _LOCAL.match(t[start - 1]):
            start -= 1
        found.append((start, m.end(), EMAIL))
        last = m.end()
    return found


def _ibans(t: str, taken: list[Hit]) -> list[Hit]:
    found: list[Hit] = []
    for m in _IBAN_RUN.finditer(t):
        if any(a < m.end() and m.start() < b for a, b, _ in taken):
            continue
        length = _iban_at(m.group(0).upper())
        if length:
            found.append((m.start(), m.start() + length, IBAN))
    return found


def _iban_at(run: str) -> int:
    """The length of the IBAN a candidate run starts with, ending at a group boundary
    (a run can take in a following word: "DE89 3704 0044 0532 0130 00 OK"), or 0."""
    count = 0
    for i, ch in enumerate(run):
        count += ch != " "
        at_gap = i + 1 == len(run) or run[i + 1] == " "
        if count >= 15 and at_gap and _valid("iban", run[: i + 1]):
            return i + 1
    return 0


def _alnum_ids(t: str, taken: list[Hit]) -> list[Hit]:
    found: list[Hit] = []
    for m in _ALNUM_ID.finditer(t):
        if any(a < m.end() and m.start() < b for a, b, _ in taken):
            continue
        kind = m.lastgroup or ""
        value = re.sub(r"[ -]", "", m.group(0)).upper()
        if kind == "nino":
            ok = value[:2] not in _NINO_NOT
        else:
            name = {"dni": "es.dni", "nie": "es.nie", "cf": "it.codicefiscale"}.get(kind)
            ok = _valid(name or {"pan": "in_.pan", "ric": "cn.ric"}[kind], value)
        if ok:
            found.append((m.start(), m.end(), ID))
    return found
