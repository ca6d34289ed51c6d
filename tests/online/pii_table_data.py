"""The PII table test's data, written by hand for ragrail (no generator): personal data
as people in many countries write it, the places it stands in a log (after ":", ",",
"/", "=", "tel:", inside URLs, glued to CJK text, under a label), and numbers that look
like it but are not personal data and must be kept verbatim.

Phone numbers and IBANs follow each country's published formats; cards are the card
networks' published test numbers; identity numbers are the validators' documented
examples. None belongs to a person.
"""

from __future__ import annotations

EMAILS = [
    "ana.perez@example.com",
    "Ana.Pérez+tag@ex-ample.co.uk",
    "bob_99@mail.example.org",
    "jürgen.müller@beispiel.de",
    "wang.li@example.cn",
    "o'connor@example.ie",
    "first.last@sub.domain.example.travel",
    "x@y.io",
    "support-team+billing@example.com.br",
    "yamada.taro@example.co.jp",
    "kim.minsu@example.co.kr",
    "ivan.petrov@example.ru",
    "priya.k@example.in",
    "marie-claire.dupont@exemple.fr",
    "john＠example.com",
    "user%40example.com",
    # issue 25's review: a quoted local part (also full-width), an apostrophe, an
    # ideographic full stop, an address literal
    '"Danielle Singleton"@example.com',
    "＂Ana Pérez＂＠example.com",
    "o'brien@example.ie",
    "ana﹫example。com",
    "bob@[192.168.1.1]",
]

PHONES = [
    # US, CA
    "(415) 555-2671", "415-555-2671", "415.555.2671", "+1 415 555 2671", "+1-636-208-3778x35337",
    "1-800-555-0199", "(415) 555-2671 ext. 12", "+14155552671", "001 415 555 2671",
    "+1 (604) 555-0142",
    # UK
    "+44 20 7946 0958", "020 7946 0958", "07700 900123", "+44 (0)20 7946 0958",
    "0044 20 7946 0958", "+44 7700 900123",
    # DE, AT, CH
    "030 1234567", "+49 30 1234567", "0049 30 1234567", "030/1234567", "0151 23456789",
    "+49 (0)151 23456789", "+43 1 5123456", "0664 1234567", "+41 44 668 18 00", "044 668 18 00",
    # FR, BE
    "06 12 34 56 78", "+33 6 12 34 56 78", "06.12.34.56.78", "0612345678", "+32 2 123 45 67",
    # ES, PT, IT
    "612 345 678", "+34 612 34 56 78", "91 123 45 67", "+351 912 345 678", "912 345 678",
    "+39 06 1234 5678", "347 123 4567", "06 1234 5678",
    # NL, SE, PL
    "06-12345678", "+31 6 12345678", "020 123 4567", "070-123 45 67", "+46 70 123 45 67",
    "+48 512 345 678", "512 345 678",
    # BR, MX, AR
    "(11) 91234-5678", "+55 11 91234-5678", "+52 55 1234 5678", "55 1234 5678",
    "+54 9 11 1234-5678",
    # IN
    "+91 98765 43210", "098765 43210", "98765 43210", "+91-9876543210",
    # JP, CN, KR
    "090-1234-5678", "03-1234-5678", "+81 90-1234-5678", "０９０－１２３４－５６７８",
    "138 1234 5678", "13812345678", "+86 138 1234 5678", "010-12345678", "010-1234-5678",
    "+82 10-1234-5678", "02-123-4567",
    # RU, TR, ZA, AU, others
    "+7 912 345-67-89", "8 (912) 345-67-89", "+90 532 123 45 67", "0532 123 45 67",
    "+27 82 123 4567", "082 123 4567", "0412 345 678", "+61 412 345 678", "(02) 9876 5432",
    "+971 50 123 4567", "+20 10 1234 5678", "+234 803 123 4567",
    # other scripts' digits
    "٠٥٠١٢٣٤٥٦٧", "०९८७६५४३२१०",
    # issue 25's review: German mobiles whose digits pass an EAN check (kept as product
    # codes before), numbers in E.164 without their "+", a tel: link's epoch-like digits
    "0176 66972510", "0174 92589913", "0177 52515669", "017417186159",
    "5491123452648", "5491146200585", "244923127431", "393526650430", "447475018770",
]  # fmt: skip
# Digits a bare figure could be (seconds since 1970, 13 digits) but a link or a label
# says are dialled: read in DIAL_PLACES
DIALLED_PHONES = ["1689674642", "1705312200", "1234567890123", "4226.4982", "8618.1640"]
DIAL_PLACES = ["tel:{v}", "sms:{v}", "https://wa.me/{v}", "phone: {v}", "Tel. {v}",
               "mobile={v}&x=1", "Handy: {v}", "téléphone : {v}"]  # fmt: skip
# Phone numbers as a URL's query writes them (percent escapes, a form's "+"), read in
# ENCODED_PLACES
ENCODED_PHONES = [
    "028%209018%200950", "%2B49+151+23456789", "+49%20151%2012345678", "0151+23456789",
    "%28415%29%20555-2671", "%2B44%2020%207946%200958", "06%2012%2034%2056%2078",
    "%2B1-636-208-3778x35337", "030%2F1234567", "%2B81+90-1234-5678",
]  # fmt: skip
ENCODED_PLACES = [
    "https://ex.com/cb?phone={v}", "https://ex.com/cb?phone={v}&lang=en", "?q={v}&page=2",
    "/search?q=call+me+{v}", "see https://ex.com/?a=1&tel={v}#top",
]  # fmt: skip

CARDS = [
    "4111 1111 1111 1111", "4111111111111111", "4111-1111-1111-1111", "4012888888881881",
    "5555 5555 5555 4444", "5105-1051-0510-5100", "2223 0031 2200 3222", "3782 822463 10005",
    "371449635398431", "6011 1111 1111 1117", "6011000990139424", "3530 1113 3330 0000",
    "3566002020360505", "3056 930902 5904", "30569309025904", "6200000000000005",
    "6759 6498 2643 8453", "4917 6100 0000 0000 003", "5019717010103742", "36227206271667",
    # Maestro's 12 digits
    "501885455243", "6759 5126 4976", "630468631506",
]  # fmt: skip
# A card glued to words, and followed by its expiry and security code
CARD_PLACES = [
    "Card#{v}exp", "card{v}", "Visa{v}", "{v}exp12/26", "cc: {v} 09/27 123",
    "pay with {v} exp 09/2027 CVV 123 please", "カード番号{v}有効期限09/27",
]  # fmt: skip

IBANS = [
    "DE89 3704 0044 0532 0130 00", "DE89370400440532013000", "GB82 WEST 1234 5698 7654 32",
    "gb82west12345698765432", "FR14 2004 1010 0505 0001 3M02 606", "ES91 2100 0418 4502 0005 1332",
    "IT60 X054 2811 1010 0000 0123 456", "NL91 ABNA 0417 1643 00", "BE71 0961 2345 6769",
    "CH93 0076 2011 6238 5295 7", "AT61 1904 3002 3457 3201", "PL61 1090 1014 0000 0712 1981 2874",
    "PT50 0002 0123 1234 5678 9015 4", "SE45 5000 0000 0583 9825 7466", "NO93 8601 1117 947",
    "DK50 0040 0440 1162 43", "FI21 1234 5600 0007 85", "IE29 AIBK 9311 5212 3456 78",
    "LU28 0019 4006 4475 0000", "BR97 0036 0305 0000 1000 9795 493P 1",
    "SA03 8000 0000 6080 1016 7519", "TR33 0006 1005 1978 6457 8413 26",
    "GR16 0110 1250 0000 0001 2300 695", "CZ65 0800 0000 1920 0014 5399",
    "HU42 1177 3016 1111 1018 0000 0000", "RO49 AAAA 1B31 0075 9384 0000",
    "HR12 1001 0051 8630 0016 0", "AE07 0331 2345 6789 0123 456", "IL62 0108 0000 0009 9999 999",
]  # fmt: skip

IDS = [
    "123-45-6789",  # US SSN
    "36574261809",  # DE IdNr / Steuer-ID
    "2 95 10 99 126 111 93",  # FR NIR
    "54362315K",  # ES DNI
    "X2482300W",  # ES NIE
    "RCCMNL83S18D969H",  # IT codice fiscale
    "390.533.447-05",  # BR CPF
    "2341 2341 2346",  # IN Aadhaar
    "ACUPA7085R",  # IN PAN
    "1234 5678 9018",  # JP My Number
    "AB 12 34 56 C",  # UK NINO
    "971013-9019902",  # KR resident registration number
    "360426199101010071",  # CN resident id
    "1234.56.782",  # NL BSN
    "111222333",  # NL BSN, bare
    "983383775158",  # IN Aadhaar, bare
    "718301782150",  # JP My Number, bare
    "756.9402.3379.14",  # CH AHV
    "7569402337914",  # CH AHV, bare (its check is an EAN-13's)
    "131052-308T",  # FI HETU
    "250320A642D",  # FI HETU, born in the 2000s
]

# Where a value stands: {v} is the value. One row per value and place.
PLACES = [
    "{v}",
    "you can reach me at {v} after 6pm",
    "Contact: {v}",
    "phone:{v}",
    "tel:{v}",
    "a,{v},b",
    "see /{v}/ here",
    "?q={v}&page=2",
    "Customer ID: {v}",
    "WhatsApp ID: {v}",
    "Mein Konto: {v}.",
    "私の連絡先は{v}です",
    "联系方式：{v}",
    "연락처는 {v} 입니다",
    '{{"contact": "{v}"}}',
    "- {v}\n- next",
    "Llámame al {v}, gracias",
    "| Ana | {v} |",
    "(my number: {v})",
]
# Only for values without spaces (a URL has none)
URL_PLACES = ["https://example.com/u/{v}?ref=mail", "mailto:{v}", "https://wa.me/{v}"]
# Labels that protect nothing personal (issue 25's review): a label keeps only bare
# digits not starting with 0 that are no card, IBAN or valid id; every card, IBAN, id and
# e-mail in them, and every phone number not written as such bare digits, is redacted
LABEL_PLACES = [
    "Order {v}", "ref {v} for user", "case {v}", "room {v}", "table {v}", "seat {v}",
    "page {v}", "Auftragsnummer {v}", "n° de commande {v}", "ご注文番号は{v}です",
]  # fmt: skip

# Not personal data: every row must come out of redaction exactly as it went in.
LOOKALIKES = [
    # dates and times
    "on 2024-01-15 at 10:30", "am 15.01.2024 um 10:30 Uhr", "due 01/15/2024", "2024/01/15 10:30:15",
    "le 15/01/2024", "2024年1月15日", "at 2024-01-15T10:30:00Z", "at 2024-01-15T10:30:00+02:00",
    "compact 20240115 and 202401151030 and 20240115103002", "epoch 1705312200 and 1705312200000",
    "between 2019 and 2024: 2019 2020 2021 2022 2023", "season 2023/2024", "years 2020-2024",
    "15 Jan 2024, 10:30:45.123", "el 15-01-2024 a las 10:30",
    # prices and amounts, currency on either side
    "USD 12345678", "1500000円", "727 785 824 euros", "$1,299.99 or 1.299,99 €", "€ 1.250.000",
    "prize: 1 000 000 € in total", "EUR 4155552671", "₹ 98765 43210", "R$ 1.234.567,89",
    "CHF 1234567", "12345678 USD", "JPY 12345678", "¥12345678", "12345678元", "12345678원",
    "£1234567", "Rs. 9876543", "1234567 dollars", "7654321 pesos", "98765432 kr",
    "GBP 7946 0958", "zł 12345678",
    # quantities
    "12345678 ms", "1500000 tokens", "3600000 seconds", "86400000 Sekunden", "1234567 rows",
    "2048000 bytes", "1234567件", "12345678 requests", "10000000 km", "99.95%",
    "took 1234567 µs", "5000000 users", "1234567 views", "8000000 words", "1234567 times",
    # versions, builds
    "Windows 10.0.19045.3803", "version 10.2.1234567", "v2.1.1234567", "Chrome 120.0.6099.129",
    "Android 14.0.0.12345678", "build 12345678", "kernel 5.15.0.1234567", "macOS 14.2.1",
    "Version 4.1.1111111111111111",
    # network
    "server 192.168.100.200", "from 10.0.0.1 to 172.16.254.1", "ports 8000-8080",
    "port range 49152-65535", "pages 1234-1256", "255.255.255.0",
    # ZIP+4, table figures
    "Springfield, IL 62704-1234", "ZIP 90210-1234", "| 2023 | 1234567 | 89012345 |",
    "| Q1 | 12345678 | 23456789 |", "year\t1234567\t7654321",
    # product codes that validate
    "ISBN 978-3-16-148410-0", "ISBN 9780306406065", "see 9780306406065 on the shelf",
    "0-306-40615-2", "ISBN 0-306-40615-2", "UPC 036000291452",
    "EAN 4006381333931", "4006381333931", "EAN-13 5901234123457", "GTIN 10614141000019",
    "ISSN 0317-8471",
    # order numbers and references, in many languages
    "Order #4155552671", "order no. 12345678", "invoice 98765432", "tracking no. 9876543210",
    "ticket 12345678", "booking ref 87654321", "confirmation 12345678", "shipment 9876543210",
    "Bestellnummer 12345678", "Bestell-Nr. 4155552671", "Rechnungsnummer 98765432",
    "Sendungsnummer 00340434161234567890",
    "numéro de commande 12345678", "facture 98765432",
    "numéro de suivi 6A12345678901", "número de pedido 12345678", "pedido 612345678",
    "factura 98765432", "referencia 87654321", "numero d'ordine 12345678", "fattura 3471234567",
    "número do pedido 12345678", "nota fiscal 12345678", "rastreamento 123456789",
    "bestelnummer 12345678", "注文番号 12345678",
    "追跡番号：123456789012", "订单号：13812345678", "运单号 1234567890",
    "송장번호 123456789012", "ABC1234567 and A1234567B",
    # identifiers glued to words, codes, hashes
    "commit a1b2c3d4e5f6", "uuid 123e4567-e89b-12d3-a456-426614174000", "sha 9f86d081884c7d65",
    "doc-12.md#3", "model XJ-1234567",
    # decimals, ratios, numbers too short to be anything
    "pi is 3.14159265", "ratio 0.4111111111111111", "e = 2.7182818", "refunds within 130 days",
    "call 911", "room 1234", "flight LH 4567", "a 10% refund, capped at ₹150",
    "Die Rückerstattung dauert 14 Tage. 返金は14日以内です。",
    # more references and figures
    "1.234.567", "12,345,678", "1 234 567 €", "Q3 revenue 12,345,678", "batch 20240115-001",
    "lot 1234567", "case 12345678", "PO 4500012345", "PNR 1234567", "receipt 987654321",
    "claim 12345678", "incident INC1234567", "request 12345678", "bug 1234567",
    "issue #1234567", "PR #12345678", "release 2024.01.15", "1234567 items",
    "CVE-2024-1234567", "ISO 8601:2004", "HTTP 503", "RFC 9110", "13:45:30",
    "total: EUR 1234567.89", "1,234,567.89 USD", "₩12345678", "12.345.678 €", "$ 4155552671",
    "the call lasted 1234567 seconds", "stock: 1234567 units", "the 1234567th visitor",
    "balance 1234567.89", "population of 13,960,000",
    "part no. 1234567890", "bestelnummer 612345678",
    # issue 25's review: order labels in more languages, "nº" "n°" "n." before the number
    "Pedido nº 12345678", "facture n° 98765432", "ordine n. 12345678", "N.º de pedido 1234567",
    "numer zamówienia 12345678", "sipariş no 12345678", "номер заказа 12345678",
    "Ticket-ID 12345678", "invoice no: 87654321", "Auftragsnr. 4155552671",
    # product codes: labelled (a UPC or EAN-8 starting with 0 is kept only so), an ISBN-10
    # with its X, an EAN after "00"; bare EAN-13 that are no number in E.164
    "UPC-A 036000291452", "barcode 036000291452", "EAN-8 96385074", "EAN 0052756904682",
    "GTIN 00012345600012", "JAN 4901234567894", "ISBN 0-07-166923-X", "0-07-166923-X",
    "007166923X", "ISBN 0306406152", "ISBN-10: 0306406152", "ISSN 2434-561X",
    "EAN 5901234123457", "5901234123457", "GTIN-14 10614141000019",
    # times with fractions of a second, timestamps in ms
    "at 2024-01-15T10:30:00.377016Z", "23:59:00.123456", "ts 1705312200123",
    "created 1705312200123 ms", "at 13:45:30.1234567",
    # a bare figure in prose, with nothing to say what it is: redacted by design (a phone
    # number looks the same), and counted here as damage
    "population 8336817", "a score of 98765432",
]  # fmt: skip
# Frames the look-alikes are also read in: a label, brackets, Japanese, a list item
LOOKALIKE_FRAMES = ["{v}", "Note: {v}.", "({v})", "回答：{v}", "- {v}\n"]
