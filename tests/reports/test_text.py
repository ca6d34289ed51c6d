"""Untrusted text in every output: control characters and bidi overrides made visible,
no fake lines, JUnit still valid XML 1.0."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from ragrail.diff import compare
from ragrail.reports.junit import junit_xml
from ragrail.reports.markdown import code, markdown_summary
from ragrail.reports.terminal import diff_text, scorecard
from ragrail.text.guard import visible
from tests.helpers import DATA
from tests.test_diff import case, errored, run

# XML 1.0 section 2.2: the characters a document may contain
XML_CHAR = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
HOSTILE_ID = "evil\nWORSE:  fake: retrieval 100% -> 0%"


def test_visible_shows_controls_and_bidi_and_keeps_plain_text():
    assert visible("plain text, ₹150 — ok\tTAB") == "plain text, ₹150 — ok\tTAB"
    assert visible("a\nb\rc\x1b[31md\x00e\x7ff\x85g") == "a\\nb\\rc\\x1b[31md\\x00e\\x7ff\\x85g"
    assert visible("pay \u202eusd01\u202c now") == "pay <U+202E>usd01<U+202C> now"
    assert visible("\u2066x\u2069\u200f\u200e\u061c") == "<U+2066>x<U+2069><U+200F><U+200E><U+061C>"
    assert visible("line\u2028sep") == "line<U+2028>sep"
    # answers and documents keep their line breaks; a carriage return still shows
    assert visible("one\ntwo\r", one_line=False) == "one\ntwo\\r"


def test_visible_output_is_always_xml_1_0_and_one_line():
    every = "".join(map(chr, range(0x110000)))
    shown = visible(every)
    assert XML_CHAR.search(shown) is None
    assert "\n" not in shown and "\r" not in shown
    assert XML_CHAR.search(visible(every, one_line=False)) is None


def test_an_id_with_a_newline_prints_no_line_of_its_own():
    base = run([case(HOSTILE_ID, 1.0, True), case("b", 1.0, True)])
    new = run(
        [case(HOSTILE_ID, 1.0, False, ['missing "x"\nWORSE:  b: fake']), case("b", 1.0, True)]
    )
    diff = compare(new, base)
    for text in (scorecard(new), diff_text(diff)):
        assert not [ln for ln in text.splitlines() if ln.lstrip().startswith("WORSE:  fake")]
        assert not [ln for ln in text.splitlines() if ln.lstrip().startswith("WORSE:  b")]
    shown = diff_text(diff)
    assert "WORSE: evil\\nWORSE: fake: retrieval 100% -> 0%: answer now fails" in " ".join(
        shown.split()
    )
    assert "1 question got worse" in shown  # only the real one


def test_no_escape_sequence_or_bidi_override_reaches_the_terminal():
    bad = case("id\u202ekcab", 1.0, False, ['missing "\x1b[2J\x1b[32mall green"'])
    text = scorecard(run([bad]))
    assert "\x1b" not in text and "\u202e" not in text
    assert "id<U+202E>kcab" in text and "\\x1b[2J" in text


def test_an_esc_in_a_reason_gives_valid_junit_xml(tmp_path):
    xmlschema = pytest.importorskip("xmlschema")
    base = run([case("a", 1.0, True), case("b\x00\u202e", 1.0, True)])
    broken = errored("a", "HTTP 500: \x1b[31mboom\x0c\ufffe\ud800")
    failing = case("b\x00\u202e", 1.0, False, ['missing "\x1b]8;;http://x\x07"'])
    failing.trace.answer = "line one\nline two \x1b[0m\x08"
    failing.question = "what\x1b?"
    xml = junit_xml(run([broken, failing]), compare(run([broken, failing]), base))
    assert XML_CHAR.search(xml) is None
    out = tmp_path / "j.xml"
    out.write_text(xml, encoding="utf-8")
    xmlschema.XMLSchema(str(DATA / "junit.xsd")).validate(str(out))
    cases = {c.get("name"): c for c in ET.parse(out).getroot().iter("testcase")}
    assert set(cases) == {"a", "b\\x00<U+202E>"}
    error = cases["a"].find("error")
    assert error.get("message") == (
        "passed in the baseline, now errors: HTTP 500: \\x1b[31mboom\\x0c<U+FFFE><U+D800>"
    )
    failure = cases["b\\x00<U+202E>"].find("failure")
    assert failure.get("message").startswith('missing "\\x1b]8;;http://x\\x07"; WORSE vs')
    assert "question: what\\x1b?" in failure.text
    assert (
        cases["b\\x00<U+202E>"]
        .find("system-out")
        .text.endswith("A: line one\nline two \\x1b[0m\\x08")
    )


def test_markdown_ids_in_tables_keep_the_table_and_the_code_span():
    assert code("a|b") == "`a\\|b`"
    assert code("tick`s") == "``tick`s``"
    assert code("`edge`") == "`` `edge` ``"
    assert code(HOSTILE_ID) == "`evil\\nWORSE:  fake: retrieval 100% -> 0%`"
    base = run([case("x`|y\n| z |", 1.0, True)])
    new = run([case("x`|y\n| z |", 0.0, False, ["[click](http://evil) *now*\x1b"])])
    text = markdown_summary(new, compare(new, base))
    rows = [ln for ln in text.splitlines() if ln.startswith("| ``x")]
    # every row of the table has exactly its two (or three) cells: no pipe escaped the cell
    assert rows and all(len(re.split(r"(?<!\\)\|", r)) in (4, 5) for r in rows)
    assert "\\[click\\](http://evil) \\*now\\*\\\\x1b" in text
    assert "\u202e" not in markdown_summary(run([case("r\u202el", 1.0, True)]))


def test_html_shows_bidi_overrides_and_controls():
    from ragrail.reports.html import html_report

    page = html_report(run([case("r\u202el\x1b", 1.0, False, ["missing \u2067x"])]))
    assert "\u202e" not in page and "\x1b" not in page and "\u2067" not in page
    assert "r&lt;U+202E&gt;l\\x1b" in page
