"""What makes a number *not* personal data, read from the number's shape and the words
around it: a date, a year list, an amount, a price with its currency on either side, a
quantity with its unit, a version string, an IP address, a ZIP+4 code, a range of ports
or pages, a figure in a table cell, or a label naming an order, invoice, shipment or
other business reference (in English, German, French, Spanish, Italian, Portuguese,
Dutch, Japanese, Chinese and Korean).

A label naming a person's identifier ("ID", "customer", "account", "member", "phone")
is not in the list: labels never protect personal data, only context that says what
the number is. ragrail.text.pii_detect applies these before it calls a number a phone
number; cards, IBANs, identity numbers in their own shape and numbers written with a
country code are redacted whatever the label (see there).
"""

from __future__ import annotations

import re

_LATIN_WORD_END = r"(?![^\W\d_])"  # a unit is a whole word: "5 min" yes, "5 minty" no

# "Order #", "Bestellnummer", "numéro de commande", "注文番号": a business reference.
_ORDER_WORDS = (
    # en
    r"orders?|invoices?|inv|tracking|ticket|booking|confirmation|reference|ref|transaction|"
    r"txn|shipment|parcel|package|consignment|waybill|awb|sku|serial|s/n|case|po|pnr|"
    r"receipt|isbn(?:-1[03])?|issn|upc|ean(?:-1[03]|-8)?|gtin|asin|model|part|article|"
    r"item|batch|lot|claim|request|incident|bug|issue|pr|build|release|"
    # de
    r"bestellnummer|bestell-?nr|bestellung|auftragsnummer|auftrags-?nr|auftrag|"
    r"rechnungsnummer|rechnungs-?nr|rechnung|sendungsnummer|sendungsverfolgungsnummer|"
    r"sendung|paketnummer|artikelnummer|art\.?-?nr|vorgangsnummer|vorgang|ticketnummer|"
    r"buchungsnummer|buchung|referenznummer|referenz|aktenzeichen|lieferscheinnummer|"
    r"belegnummer|beleg|"
    # fr
    r"(?:num[ée]ro|n[°º]|no)\s+de\s+(?:commande|facture|suivi|colis|r[ée]servation|"
    r"dossier|billet|transaction|r[ée]f[ée]rence)|commande|facture|colis|r[ée]servation|"
    r"r[ée]f[ée]rence|r[ée]f|dossier|billet|suivi|"
    # es, pt
    r"(?:n[úu]mero|n[°º]|no|c[óo]digo)\s+d[eo]l?\s+(?:pedido|factura|fatura|seguimiento|"
    r"rastreamento|rastreio|reserva|referencia|refer[êe]ncia|env[íi]o|envio|encomenda|"
    r"billete|bilhete|expediente)|pedido|factura|fatura|nota\s+fiscal|seguimiento|"
    r"rastreamento|rastreio|reserva|referencia|refer[êe]ncia|env[íi]o|encomenda|billete|"
    r"bilhete|expediente|localizador|"
    # it
    r"numero\s+d(?:'|i\s+|ell')(?:ordine|fattura|tracciamento|spedizione|prenotazione|"
    r"riferimento|pratica)|ordine|fattura|spedizione|tracciamento|prenotazione|"
    r"riferimento|biglietto|pratica|"
    # nl
    r"bestelnummer|bestelling|ordernummer|factuurnummer|factuur|trackingnummer|"
    r"zendingnummer|zending|boekingsnummer|boeking|referentienummer|referentie|kenmerk|"
    r"pakketnummer|"
    # pl, tr, ru
    r"numer\s+zam[óo]wienia|zam[óo]wieni[ea]|faktura|przesy[łl]ka|sipari[şs]|fatura|"
    r"kargo\s+takip|номер\s+заказа|заказа?|сч[её]т|накладная|трек-номер"
)
_ORDER_CJK = (
    # ja
    r"ご?注文番号|ご?注文|請求書番号|追跡番号|お?問い?合わせ番号|予約番号|伝票番号|"
    r"受付番号|品番|型番|管理番号|商品番号|"
    # zh
    r"订单号|订单编号|訂單號碼?|订单|訂單|发票号|發票號|运单号|運單號|快递单号|物流单号|"
    r"跟踪号|追踪号|预订号|預訂號|参考号|工单号|"
    # ko
    r"주문\s?번호|송장\s?번호|운송장\s?번호|예약\s?번호|참조\s?번호|청구서\s?번호|접수\s?번호"
)
# Matched whole against the last one to four words before the number (a search over
# the 48 characters before it would try every alternative at every position: 25 µs)
_ORDER_LABEL = re.compile(
    rf"(?:{_ORDER_WORDS})\.?(?:[\s-]*(?:number|num|nr|nº|n°|no|n|nummer|número|numero|numarası|code|id)\.?)?",
    re.I,
)
_ORDER_LABEL_CJK = re.compile(rf"(?:{_ORDER_CJK})[はがをの：:]?\Z")
_LABEL_END = " \t#:：=№.°º"

_CURRENCY_SIGNS = "$€£¥₹₩₽¢₺₪฿₫₱₴₦"
_CODES = (
    r"USD|EUR|GBP|JPY|CHF|INR|CNY|RMB|KRW|BRL|MXN|CAD|AUD|SEK|NOK|DKK|PLN|CZK|HUF|RUB|TRY|"
    r"ZAR|HKD|SGD|NZD|TWD|THB|IDR|PHP|VND|ARS|CLP|COP|PEN|AED|SAR|ILS|EGP|NGN|Rs\.?|Rp|R\$|"
    r"zł|kr|Kč|Ft|lei"
)
_CURRENCY_BEFORE = re.compile(rf"(?:[{_CURRENCY_SIGNS}]|(?<![^\W\d_])(?:{_CODES}))\s?\Z")
_CURRENCY_AFTER = re.compile(
    rf"\s?(?:[{_CURRENCY_SIGNS}円元원圓]|(?:{_CODES}|yen|euros?|dollars?|pounds?|rupees?|"
    r"reais|real|pesos?|francs?|kronor|kroner|kronen?|złotych|zlotys?|zł|kr|yuan|won|"
    r"rubles?|roubles?|lire|lira|rand|baht|ringgit|dirhams?|Euro)"
    rf"{_LATIN_WORD_END})",
    re.I,
)
# A quantity: "12345678 ms", "1500000 tokens", "3600000 Sekunden", "1234567件"
_UNIT_AFTER = re.compile(
    r"\s?(?:(?:ms|µs|us|ns|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?|weeks?|"
    r"months?|years?|yrs?|bytes?|[kKMGTP]i?B|bits?|bps|[kMG]bps|tokens?|words?|chars?|"
    r"characters?|rows?|lines?|records?|requests?|reqs?|calls?|users?|visits?|visitors?|"
    r"views?|downloads?|times|items?|units?|pieces?|pcs|km|cm|mm|m|mi|kg|mg|g|lbs?|oz|"
    r"px|pt|dpi|Hz|kHz|MHz|GHz|mAh|kWh|W|V|"
    r"Tage?n?|Stunden?|Sekunden?|Minuten?|Jahre?n?|Stück|jours?|heures?|secondes?|"
    r"minutes?|ans|días?|horas?|segundos?|minutos?|años?|giorni|ore|secondi|minuti|anni|"
    r"dias?|anos?|dagen|uur|seconden|minuten|jaar)"
    rf"{_LATIN_WORD_END}|[%‰]|(?:秒|分|時間|日|件|回|個|人|次|天|小时|年|초|분|시간|일|명|건|개|번))",
)
_NEXT_WORD = re.compile(r"\s?(?:[^\W\d_]+|[^\w\s])")
_AFTER_MEMO: dict[str, bool] = {}


def _unit_or_currency_after(text: str, end: int) -> bool:
    """Whether a currency or a unit follows the number ending at ``end``. The answer
    is a function of the next word (and one character past it), remembered by it: a log
    follows its numbers with the same few words."""
    m = _NEXT_WORD.match(text, end)
    if m is None:
        return False
    key = text[end : min(m.end(), end + 16) + 1]
    known = _AFTER_MEMO.get(key)
    if known is None:
        known = bool(_CURRENCY_AFTER.match(key) or _UNIT_AFTER.match(key))
        if len(_AFTER_MEMO) >= 20_000:
            _AFTER_MEMO.clear()
        _AFTER_MEMO[key] = known
    return known


_VERSION_WORDS = frozenset(
    "v ver version versión versão versione build release firmware kernel windows macos ios "
    "ipados android chrome firefox safari edge python node java bios patch rev revision sdk "
    "api".split()
)
_PORT_RANGE_BEFORE = re.compile(
    r"\b(?:ports?|range|pages?|pp?\.|seiten|s\.|lines?|rows?|puertos|porte|poorten)\s*\Z", re.I
)
_ZIP_BEFORE = re.compile(r"(?:\b[A-Z]{2}|\bzip(?:\s*code)?\W{0,3})\s?\Z", re.I)
_TABLE_BEFORE = re.compile(r"(?:\A|[|\t\n(\[])[ \t]*\Z")
_TABLE_AFTER = re.compile(r"[ \t]*(?:[|\t\n.)\]]|\Z)")


def date_shaped(groups: list[str], separators: set[str]) -> bool:
    """2024-01-15, 15.01.2024, 01/15/2024, 2024 01 15, or a compact 20240115[hhmm[ss]]."""
    if len(separators) > 1:
        return False
    sizes = [len(g) for g in groups]
    if sizes == [4, 2, 2] or sizes == [4, 1, 1] or (sizes[:3] == [4, 2, 2] and len(sizes) <= 5):
        year, month, day = groups[:3]
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


def years_listed(groups: list[str]) -> bool:
    """2019 2020 2021, 2023/2024, 2020-2024: years, not one number."""
    return len(groups) >= 2 and all(len(g) == 4 and g[:2] in ("19", "20") for g in groups)


def amount_shaped(groups: list[str], separators: set[str]) -> bool:
    """1.000.000 or 1,000 (thousands), or 1 000 000 with a short first group."""
    if len(groups) < 2 or len(separators) != 1 or any(len(g) != 3 for g in groups[1:]):
        return False
    sep = next(iter(separators))
    first = len(groups[0])
    return (sep == "." and first <= 3) or (sep == " " and first <= 2)


def ip_shaped(run: str) -> bool:
    """192.168.1.20: four dotted numbers of 0-255."""
    parts = run.split(".")
    return len(parts) == 4 and all(p.isdigit() and len(p) <= 3 and int(p) <= 255 for p in parts)


def version_shaped(run: str) -> bool:
    """10.0.19045.3803: dotted, with a one-digit part after the first (a dotted phone
    number has none: 1.800.555.1234); after a version word any number is a version."""
    parts = run.split(".")
    if len(parts) < 3 or not all(p.isdigit() for p in parts):
        return False
    return any(len(p) == 1 for p in parts[1:])


def kept_by_context(
    text: str, start: int, end: int, groups: list[str], seps: set[str], flags: int
) -> bool:
    """Whether the number text[start:end] (written without a country code) is a date,
    an amount, a price, a quantity, a version, a range, a ZIP+4 code or a table figure;
    ``flags``: what the words before it say (:func:`label_flags`). IP addresses are
    decided by the caller (kept or redacted by an option)."""
    run = text[start:end]
    if len(groups) == 1:  # bare digits: a compact date or none of the shapes below
        if len(run) in (8, 12, 14) and date_shaped(groups, seps):
            return True
    elif date_shaped(groups, seps) or amount_shaped(groups, seps) or years_listed(groups):
        return True
    if len(groups) > 1 and len(groups[0]) == 8 and date_shaped(groups[:1], set()):
        return True  # 20240115-001: a reference that starts with its date
    if seps == {"."} and len(groups) == 2 and (groups[0] == "0" or groups[0][0] != "0"):
        return True  # 3.14159265: a decimal (a number never starts with 0 but 0.5)
    if flags & VERSION or (seps == {"."} and version_shaped(run)):
        return True
    # a currency code or sign is at most four characters and a space before the number
    if _CURRENCY_BEFORE.search(text, max(0, start - 6), start):
        return True
    if _unit_or_currency_after(text, end):
        return True
    if len(groups) == 2 and seps == {"-"}:
        before = text[max(0, start - 40) : start]
        a, b = groups
        if (len(a), len(b)) == (5, 4) and _ZIP_BEFORE.search(before):
            return True
        if len(a) == len(b) and int(a) < int(b) and _PORT_RANGE_BEFORE.search(before):
            return True
    if len(groups) != 1 or len(run) > 9 or run[0] == "0":
        return False
    # a figure in a table cell (Markdown or tab-separated), bare and not dialled (no 0)
    cell_start = _TABLE_BEFORE.search(text, max(0, start - 40), start)
    cell_end = _TABLE_AFTER.match(text, end)
    return (
        cell_start is not None
        and cell_end is not None
        and any(ch in "|\t" for ch in cell_start.group(0) + cell_end.group(0))
    )


_WORD_GAP = re.compile(r"[\s()\[\]{}\"“”«»「」『』【】：:,;]+")


def _last_words(before: str, strip: str) -> list[str]:
    """The last four words of ``before`` (brackets, quotes and colons part them too)."""
    return [w for w in _WORD_GAP.split(before.rstrip(strip)) if w][-4:]


VERSION, ORDER, PRODUCT, DIAL = 1, 2, 4, 8
_DIAL_WORDS = frozenset(
    "tel sms callto fax phone mobile cell handy whatsapp telefon téléphone telephone "
    "teléfono telefono telefone".split()
)
_LABEL_MEMO: dict[str, int] = {}


def label_flags(text: str, start: int) -> int:
    """What the last words before the number at ``start`` say it is: a version
    (``VERSION``: "Windows", "build"), a business reference (``ORDER``), a product code
    (``PRODUCT``: "EAN", "ISBN"), a number to dial (``DIAL``: "tel:", "phone:",
    "wa.me/"). Remembered by those words: a log writes the same few labels again and
    again, and the label regular expressions are long."""
    words = _last_words(text[max(0, start - 48) : start], _LABEL_END)
    if not words:
        return 0
    key = "\n".join(words)
    flags = _LABEL_MEMO.get(key)
    if flags is None:
        last = words[-1].lower().rstrip(".")
        flags = (
            (VERSION if last in _VERSION_WORDS else 0)
            | (DIAL if last in _DIAL_WORDS or last.endswith("wa.me/") else 0)
            | (ORDER if _order_labelled(words) else 0)
            | (PRODUCT if _product_labelled(words) else 0)
        )
        if len(_LABEL_MEMO) >= 20_000:
            _LABEL_MEMO.clear()
        _LABEL_MEMO[key] = flags
    return flags


_PRODUCT_LABEL = re.compile(
    r"(?:isbn(?:-?1[03])?|issn|ean(?:-?(?:8|13))?|upc(?:-?[ae])?|gtin(?:-?(?:8|12|13|14))?|jan|"
    r"barcode|bar\s?code|code[-\s]barres?|strichcode|c[óo]digo\s+de\s+barras|"
    r"codice\s+a\s+barre)(?:[\s-]*(?:code|nr|no|number|nummer))?\.?",
    re.I,
)
_PRODUCT_LABEL_CJK = re.compile(r"(?:JANコード|JAN|バーコード|条形码|條碼|바코드)[はがをの：:]?\Z")


def _product_labelled(words: list[str]) -> bool:
    """Whether the last words name a product code (EAN, UPC, GTIN, ISBN, barcode): the
    one thing that keeps an EAN-8 or a UPC starting with 0."""
    if _PRODUCT_LABEL_CJK.search(words[-1][-8:]) is not None:
        return True
    return any(
        _PRODUCT_LABEL.fullmatch(" ".join(words[-k:])) is not None
        for k in range(1, min(3, len(words)) + 1)
    )


def _order_labelled(words: list[str]) -> bool:
    """Whether the last words name a business reference."""
    if _ORDER_LABEL_CJK.search(words[-1][-12:]) is not None:
        return True
    return any(
        _ORDER_LABEL.fullmatch(" ".join(words[-k:])) is not None for k in range(1, len(words) + 1)
    )
