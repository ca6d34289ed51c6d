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

from ragrail.text.pii_context import DIAL, ORDER, PRODUCT, ip_shaped, kept_by_context, label_flags
from ragrail.text.pii_numbers import (
    bare_id,
    e164_valid,
    is_card,
    phone_matches,
    product_code,
    shaped_id,
    valid,
)

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


_DIGIT_LIKE = sorted({zero + d for zero in _ZEROS for d in range(10)} | {0xFF20, 0xFE6B})
_SEP_LIKE = _char_class(sorted(set(_FOLD) - set(_DIGIT_LIKE)))
# Folding matters only where a foreign digit or "@" stands, or an odd space, dash or
# bracket touches an ASCII digit: other text (Japanese punctuation, accents) is read as
# is. Characters past U+FFFF are a class of their own: one in a class of BMP characters
# makes re test every range in turn (eight times slower).
_FOREIGN = re.compile(
    _char_class([cp for cp in _DIGIT_LIKE if cp <= 0xFFFF]) + "|[\U00010000-\U0010ffff]"
)
_SEP_BY_DIGIT = re.compile(f"[0-9](?:(?<={_SEP_LIKE}[0-9])|(?={_SEP_LIKE}))")  # digit-led: fast


def fold(text: str) -> str:
    """``text`` with full-width ASCII, odd spaces and dashes, and every script's decimal
    digits made ASCII, one character for one (so a span found in it is a span of text)."""
    if text.isascii() or (_FOREIGN.search(text) is None and _SEP_BY_DIGIT.search(text) is None):
        return text
    return text.translate(_FOLD)


# A URL's escapes ("%20", "%2B", "%28") and, in a query, a form's "+" for a space
_URL_CODE = re.compile(r"%([2-7][0-9A-Fa-f])|(?<=[0-9A-Za-z])\+(?=[0-9A-Za-z%])")
_QUERY_START = re.compile(r"[=?][^\s]*\Z")


def url_view(t: str) -> tuple[str, list[int], list[int]] | None:
    """``t`` with its URL escapes decoded, and where each character of that came from
    (its start and end in ``t``); None when there is nothing to decode."""
    parts: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    last = 0
    for m in _URL_CODE.finditer(t):
        at = m.start()
        if m.group(1):
            ch = chr(int(m.group(1), 16))
        elif _QUERY_START.search(t, max(0, t.rfind(" ", 0, at)), at):
            ch = " "
        else:
            continue
        parts += (t[last:at], ch)
        starts += [*range(last, at), at]
        ends += [*range(last + 1, at + 1), m.end()]
        last = m.end()
    if not parts:
        return None
    parts.append(t[last:])
    starts += range(last, len(t))
    ends += range(last + 1, len(t) + 1)
    return "".join(parts), starts, ends


# Any local part up to the "@" (no fragment of "Ana.Pérez+tag@..." is left behind), not
# across a URL's "/", "?", "&" or "=" ("...?email=bob@example.com" loses "bob@..."); an
# apostrophe inside a name (o'brien@); a quoted local part ("Ana Pérez"@); a domain of
# names (an ideographic full stop between them too) or an address literal ([192.0.2.1]).
_LOCAL_CHAR = r"(?:[^\s@<>()\[\]{},;:\"'/?&=]|(?<=[^\W_])'(?=[^\W_]))"
_EMAIL = re.compile(
    rf"(?:[\"“”][^\"“”\n@]{{1,64}}[\"“”]|{_LOCAL_CHAR}{{1,64}})(?:@|%40)"
    r"(?:\[(?:IPv6:)?[0-9A-Fa-f:.]{2,45}\]|[\w-]+(?:\.[\w-]+|[。｡．][A-Za-z0-9-]+)+)"
)
_LOCAL = re.compile(_LOCAL_CHAR)
# C-speed gates on the folded text: a run of seven digits and separators (every kind but
# e-mail has one, or is an id the next gate finds); an IBAN's or id's letters and digits
_NUMBERISH = re.compile(r"[0-9][0-9 ().\-/+]{5,}[0-9]")
_ALNUM_HINT = re.compile(  # each branch opens with a one-character test most digits fail
    r"[0-9](?:(?<=[A-Za-z][0-9])(?:(?<=(?<![A-Za-z0-9])[A-Za-z]{2}[0-9])|(?<=[A-Za-z]{5}[0-9]))"
    r"[0-9]"  # IBAN, NINO; codice fiscale, PAN
    r"|(?<=[A-Za-z] [0-9])(?<=(?<![A-Za-z0-9])[A-Za-z]{2} [0-9])[0-9] ?[0-9]{2} ?[0-9]{2} ?[A-Da-d]"
    r"|(?<![0-9][0-9])(?:[0-9]{5,16}[ -]?[A-Za-z](?![A-Za-z0-9])"  # DNI, NIE, CN resident id
    r"|(?<=[0-3])[0-9][01][0-9]{3}[-+A-FU-Y][0-9]{3}[0-9A-Y](?![0-9A-Za-z])))"  # HETU
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
    r"(?P<cf>(?i:[A-Z]{6}[0-9LMNPQRSTUV]{2}[A-EHLMPRST][0-9LMNPQRSTUV]{2}[A-Z][0-9LMNPQRSTUV]{3}[A-Z]))|"
    r"(?P<pan>(?i:[A-Z]{3}[ABCFGHLJPT][A-Z]\d{4}[A-Z]))|(?P<ric>\d{17}[Xx])|"
    r"(?P<nino>(?i:[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d\d ?\d\d ?\d\d ?[A-D]))|"
    r"(?P<hetu>[0-3]\d[01]\d\d\d[-+A-FU-Y]\d{3}[0-9A-FHJ-NPR-Y])"
    r")(?![A-Za-z0-9])"
)
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_ID_MODULES = {"dni": "es.dni", "nie": "es.nie", "cf": "it.codicefiscale", "pan": "in_.pan",
               "ric": "cn.ric", "hetu": "fi.hetu"}  # fmt: skip
_NINO_NOT = ("BG", "GB", "NK", "KN", "TN", "NT", "ZZ")
# Scripts written without spaces between words (CJK, kana, Hangul, Thai): a number glued
# to them ("私の番号は090-1234-5678です") is still a number, not part of a word.
_UNSPACED = "\u0e00-\u0e7f\u3000-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
_WORD = re.compile(rf"[^\W{_UNSPACED}]")
_GLUED_ON = re.compile(r"@|[.,:]\d")  # an e-mail's local part, a decimal or time part
_NON_DIGIT = re.compile(r"\D+")
# "XJ-1234567", "a456-426614174000": a code's part after a dash, not a number of its own
_IBAN_HEAD = re.compile(r"(?:\A|[^A-Za-z0-9])[A-Za-z]{2}[0-9]{2}\Z|\A[A-Za-z]{2}[0-9]{2}\Z")
_CODE_DASH = re.compile(rf"[^\W{_UNSPACED}]-")
_GROUP_GAP = re.compile(r"[ .\-](?=\(?\d)")
# What follows a card and goes with it (PCI DSS: never stored): an expiry, a security
# code, each with or without its label ("exp 09/27", "CVV 123", "09/27 123")
_AFTER_CARD = re.compile(
    r"(?:[ ,;:/|]*(?:(?:exp(?:iry|ires|iration)?|valid(?: thru| through| until)?|g[üu]ltig bis"
    r"|ablauf|vence|vencimiento|expire|scadenza|date)\.?[ :#=]*)?"
    r"(?:0?[1-9]|1[0-2]) ?[/\-.] ?(?:20)?[0-9]{2}(?![0-9]))?"
    r"(?:[ ,;:/|]*(?:(?:cvv2?|cvc2?|csc|cid|cv2|security code|code|pr[üu]fnummer|cryptogramme)"
    r"\.?[ :#=]*)?[0-9]{3,4}(?![0-9]|[ .\-/][0-9]))?",
    re.I,
)
# Dates, the commonest run of seven digits in a log, told at C speed
_DATE = re.compile(
    r"(?:19|20)\d\d([-/. ])(?:0?[1-9]|1[0-2])\1(?:0?[1-9]|[12]\d|3[01])"
    r"|(?:0?[1-9]|[12]\d|3[01])([-/. ])(?:0?[1-9]|1[0-2])\2(?:19|20)\d\d"
    r"|(?:0?[1-9]|1[0-2])([-/. ])(?:0?[1-9]|[12]\d|3[01])\3(?:19|20)\d\d"
)
_Y, _M, _D = r"(?:19|20)\d\d", r"(?:0?[1-9]|1[0-2])", r"(?:0?[1-9]|[12]\d|3[01])"
_DATES_C = (
    rf"{_Y}(?:-{_M}-{_D}|/{_M}/{_D}|\.{_M}\.{_D}| {_M} {_D})"
    rf"|{_D}(?:-{_M}-{_Y}|/{_M}/{_Y}|\.{_M}\.{_Y}| {_M} {_Y})"
    rf"|{_M}(?:-{_D}-{_Y}|/{_D}/{_Y}|\.{_D}\.{_Y}| {_D} {_Y})"
)
# Where a number worth reading starts, found at C speed in one pass: the first character
# of a run (not inside one) with six more digits ahead, that is not a date standing alone
# (the lookahead inside the one-character lookbehind reads from the run's first character)
_CAND = re.compile(
    r"[0-9(+](?<![0-9][0-9(+])(?<![0-9][.\-/][0-9(+])(?=(?:[ ().\-/+]{0,2}[0-9]){6})"
    rf"(?<=(?!(?:{_DATES_C})(?![ .\-/]?[0-9(]|[0-9@]))[0-9(+])"
)
_TIME_PART = re.compile(r"[0-9]:\Z")  # "23:00.377016": the seconds of a time
_ISBN_X = re.compile(r"[- ]?[Xx](?![A-Za-z0-9])")


def _card_head(t: str, start: int, end: int) -> int | None:
    """Where a card number ends that opens the run t[start:end] and is followed by more
    of it ("4111 1111 1111 1111 123": a security code). Whole groups, longest first."""
    gaps, before, digits = [], start, 0
    for m in _GROUP_GAP.finditer(t, start, end):
        digits += sum(ch.isdigit() for ch in t[before : m.start()])
        if digits > 19:
            break
        if digits >= 12:
            gaps.append(m.start())
        before = m.start()
    for gap in reversed(gaps):
        run = t[start:gap]
        if is_card(run, _NON_DIGIT.sub("", run)):
            return gap
    return None


def _overlaps(start: int, end: int, taken: list[Hit]) -> bool:
    return any(a < end and start < b for a, b, _ in taken)


class Detector:
    """Finds personal data. ``region``: where numbers written without a country code are
    dialled (``"US"``); ``any_national``: also call 7-12 digits a phone number when no
    context keeps them (the ingest default); ``ip``: report IPv4 addresses as ``ip``."""

    def __init__(
        self, region: str | None = None, *, any_national: bool = False, ip: bool = False
    ) -> None:
        self.region, self.any_national, self.ip = region, any_national, ip

    def find(self, text: str) -> list[Hit]:
        """Spans of personal data in ``text``, in order, none overlapping. A URL's escapes
        are read decoded ("028%209018%200950"), a hit covering the escapes it spans."""
        t = fold(text)
        if len(t) == 36 and _UUID.fullmatch(t):  # a conversation's or passage's id, often
            return []
        if "%" in t or ("+" in t and "=" in t):
            view = url_view(t)
            if view is not None:  # e-mails as written: a form's "+" is part of one
                decoded, starts, ends = view
                hits = _emails(t) if "@" in t or "%40" in t else []
                for a, b, kind in self._find(decoded, []):
                    if kind != EMAIL and not _overlaps(starts[a], ends[b - 1], hits):
                        hits.append((starts[a], ends[b - 1], kind))
                hits.sort()
                return hits
        return self._find(t, _emails(t) if "@" in t or "%40" in t else [])

    def _find(self, t: str, hits: list[Hit]) -> list[Hit]:
        hint = _ALNUM_HINT.search(t)
        if hint is not None:  # every IBAN and id starts at most 16 characters before it
            hits += _ibans(t, hits, max(0, hint.start() - 16))
            hits += _alnum_ids(t, hits, max(0, hint.start() - 16))
        hits += self._numbers(t, hits)
        if len(hits) > 1:
            hits.sort()
        return hits

    def _numbers(self, t: str, taken: list[Hit]) -> list[Hit]:
        found: list[Hit] = []
        pos = 0
        for cand in _CAND.finditer(t):
            if cand.start() < pos:
                continue
            m = _RUN.search(t, cand.start())
            while m is not None:
                m, pos = self._read(t, m, taken, found)
        return found

    def _read(
        self, t: str, m: re.Match[str], taken: list[Hit], found: list[Hit]
    ) -> tuple[re.Match[str] | None, int]:
        """Classify the run ``m`` into ``found``: the part of it to read again (or None)
        and where reading goes on."""
        start, end = m.span()
        main_end = m.start("ext") if m.group("ext") else end
        if _overlaps(start, end, taken) or _DATE.fullmatch(t, start, main_end):
            return None, end
        left = start and (
            _WORD.match(t, start - 1)
            or _CODE_DASH.match(t, max(0, start - 2))
            or _TIME_PART.match(t, max(0, start - 2), start)
        )
        if left or _WORD.match(t, end):
            # glued to a word: an identifier's part (SKU-1234567, A1234567B) unless a
            # card number (Card#4111...exp, visa4111...); what follows a first group
            # glued on the left is read again ("v1 (415) 555-2671")
            card = self._card(t, start, main_end) if main_end - start >= 12 else []
            if card:
                found += card
                return None, max(end, card[0][1])
            if left and not _IBAN_HEAD.match(t, max(0, start - 3), start + 2):
                gap = _GROUP_GAP.search(t, start, main_end)
                if gap and not (t[gap.start()] == "." and t[start - 1] == ":"):  # 10:30:00.123
                    return _RUN.search(t, gap.end(), end), end
            return None, end
        if main_end - start >= 7 and _GLUED_ON.match(t, end) is None:
            hits = self._classify(t, start, main_end, end)
            if hits:
                found += hits
                return None, max(end, hits[-1][1])
        return None, end

    def _card(self, t: str, start: int, main_end: int, digits: str = "") -> list[Hit]:
        """The card number t[start:main_end] with the expiry and code after it, or []."""
        run = t[start:main_end]
        if not is_card(run, digits or _NON_DIGIT.sub("", run)):
            return []
        after = _AFTER_CARD.match(t, main_end)
        return [(start, after.end() if after else main_end, CARD)]

    def _classify(self, t: str, start: int, main_end: int, end: int) -> list[Hit]:
        run = t[start:main_end]
        bare = run.isdigit()  # the commonest run: read without splitting it
        digits = run if bare else _NON_DIGIT.sub("", run)
        n = len(digits)
        if n < 7:
            return []
        head = run if bare else run.lstrip("(")
        if head[0] == "+":
            return self._international(t, start, end, n)
        if head.startswith("00") and n > 9 and digits[2] != "0":
            if bare and label_flags(t, start) & PRODUCT and product_code(digits, [n], True):
                return []  # "EAN 0052756904682"
            return self._international(t, start, end, n)
        if not bare and ip_shaped(run):
            return [(start, main_end, IP)] if self.ip else []
        card = self._card(t, start, main_end, digits) if n >= 12 else []
        if card:
            return card
        if bare:
            groups, sizes, seps = [run], [n], set()
        else:
            groups = [g for g in _NON_DIGIT.split(run) if g]
            sizes = [len(g) for g in groups]
            seps = {ch for ch in run if ch in " .-/"}
            if shaped_id(digits, sizes, seps):
                return [(start, main_end, ID)]
        if n > 12 and len(groups) > 1 and (sizes[0] == 4 or sizes[0] >= 12):  # a card's head
            gap = _card_head(t, start, main_end)
            if gap is not None:  # what follows: an expiry and a code, or a number of its own
                after = _AFTER_CARD.match(t, gap, main_end)
                rest = after.end() if after and after.end() > gap else gap
                more = self._classify(t, rest + 1, main_end, end) if rest + 1 < main_end else []
                return [(start, rest, CARD), *more]
        flags = label_flags(t, start)
        dialled = flags & DIAL
        if not dialled and kept_by_context(t, start, main_end, groups, seps, flags):
            return []
        check = "X" if _ISBN_X.match(t, main_end) else ""
        if flags & PRODUCT and product_code(digits, sizes, True, check):
            return []
        if bare and bare_id(digits):
            return [(start, main_end, ID)]
        if not dialled and product_code(digits, sizes, False, check):
            return []
        if bare and 11 <= n <= 15 and e164_valid(digits):
            return [(start, end, PHONE)]
        if bare and not dialled and digits[0] != "0" and flags & ORDER:
            return []  # an order, invoice or other reference under its label
        if self.region is not None:
            spans = phone_matches(t[start:end], self.region)
            if spans:
                return [(start + a, start + b, PHONE) for a, b in spans]
        epoch = bare and digits[0] == "1" and n in (10, 13) and not dialled  # s, ms since 1970
        if self.any_national and (7 <= n <= 12 or (dialled and n <= 15)) and not epoch:
            return [(start, end, PHONE)]
        return []

    def _international(self, t: str, start: int, end: int, n: int) -> list[Hit]:
        """+44 20 7946 0958, (+44) 20..., 0044 20 ...: read with the country code."""
        window = t[start:end]
        lead = len(window) - len(window.lstrip("("))
        if window[lead:].startswith("00"):  # "00" as "+" and a space: offsets hold
            window = window[:lead] + " +" + window[lead + 2 :]
        spans = phone_matches(window, None)
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
        if t[start] not in '"“”':
            while start > last and _LOCAL.match(t, start - 1):
                start -= 1
        found.append((start, m.end(), EMAIL))
        last = m.end()
    return found


def _ibans(t: str, taken: list[Hit], pos: int) -> list[Hit]:
    found: list[Hit] = []
    for m in _IBAN_RUN.finditer(t, pos):
        if _overlaps(m.start(), m.end(), taken):
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
        if count >= 15 and at_gap and valid("iban", run[: i + 1]):
            return i + 1
    return 0


def _alnum_ids(t: str, taken: list[Hit], pos: int) -> list[Hit]:
    found: list[Hit] = []
    for m in _ALNUM_ID.finditer(t, pos):
        if _overlaps(m.start(), m.end(), taken):
            continue
        kind = m.lastgroup or ""
        value = m.group(0).replace(" ", "").upper()
        if kind == "nino":
            ok = value[:2] not in _NINO_NOT
        else:
            ok = valid(_ID_MODULES[kind], value if kind == "hetu" else value.replace("-", ""))
        if ok:
            found.append((m.start(), m.end(), ID))
    return found
