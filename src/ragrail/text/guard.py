"""Make untrusted text safe to print: every control character and bidi override visible.

Case ids, facts, reasons, answers and document text come from golden sets, documents,
models and the system under test. Printed raw, a newline in a case id prints a fake
``WORSE:`` line, an ESC starts a terminal escape sequence, a right-to-left override
reorders what a reviewer reads, and most C0 characters make a JUnit file invalid XML.
Every report passes such text through :func:`visible` before it reaches the reader.
"""

from __future__ import annotations

# Bidi embeddings, overrides, isolates and marks: they reorder or hide how text reads.
BIDI = (
    0x061C,  # ALM
    0x200E,  # LRM
    0x200F,  # RLM
    *range(0x202A, 0x202F),  # LRE RLE PDF LRO RLO
    *range(0x2066, 0x206A),  # LRI RLI FSI PDI
)
_NAMED = {0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"}


def _hex(code: int) -> str:
    return _NAMED.get(code, f"\\x{code:02x}")


def _table(keep: tuple[int, ...]) -> dict[int, str]:
    table: dict[int, str] = {}
    for code in [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)]:
        if code not in keep:
            table[code] = _hex(code)
    # Line and paragraph separators break lines in some viewers; lone surrogates
    # cannot be encoded for a terminal or a file; U+FFFE/U+FFFF are not XML characters.
    for code in [*BIDI, 0x2028, 0x2029, *range(0xD800, 0xE000), 0xFFFE, 0xFFFF]:
        table[code] = f"<U+{code:04X}>"
    return table


_ONE_LINE = _table(keep=(0x09,))
_MULTI_LINE = _table(keep=(0x09, 0x0A))


def visible(text: str, one_line: bool = True) -> str:
    """``text`` with control characters (C0 but tab, DEL, C1) written as ``\\x1b``, ``\\n``,
    ``\\r``, and bidi controls, line separators and lone surrogates as ``<U+202E>``.

    ``one_line`` (ids, reasons, facts: anything printed on one line) also shows newlines;
    otherwise (an answer, a document) newlines are kept. The result is always valid
    XML 1.0 character data and can never move the cursor, start a new line (when
    ``one_line``) or change the reading direction.
    """
    return text.translate(_ONE_LINE if one_line else _MULTI_LINE)


def escape(text: str) -> str:
    """HTML-escaped text, control characters and bidi overrides shown (line breaks kept):
    what every page ragrail writes does with text it did not write."""
    from html import escape as html_escape

    return html_escape(visible(text, one_line=False))
