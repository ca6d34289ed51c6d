from __future__ import annotations

import pytest

from ragrail.errors import InputError
from ragrail.system.corpus import (
    Document,
    chunk_by_section,
    chunk_by_words,
    html_to_markdown,
    load_documents,
    make_chunks,
    plain_words,
    split_sections,
)


def test_kitebase_has_13_section_chunks(kitebase):
    chunks = chunk_by_section(load_documents(kitebase / "docs"))
    assert len(chunks) == 13
    two_factor = [c for c in chunks if c.source == "two-factor"]
    assert [c.id for c in two_factor] == ["two-factor#1", "two-factor#2"]
    assert two_factor[0].text.startswith("Turn on two-factor\n")
    assert two_factor[1].text.startswith("Backup codes\n")


def test_split_sections_keeps_intro_and_drops_markers():
    text = "Intro line\n\n# Title\nbody\n\n\n\nmore\n## Sub ##\nsub body\n## Empty heading\n"
    assert split_sections(text) == [
        "Intro line",
        "Title\nbody\n\nmore",
        "Sub\nsub body",
        "Empty heading",
    ]


def test_chunk_by_words_counts_words_per_document():
    docs = [Document("a", "# Head\none two three four five"), Document("b", "x y")]
    chunks = chunk_by_words(docs, 4)
    assert [(c.id, c.text) for c in chunks] == [
        ("a#1", "Head one two three"),
        ("a#2", "four five"),
        ("b#1", "x y"),
    ]
    with pytest.raises(ValueError):
        chunk_by_words(docs, 0)
    assert make_chunks(docs, 0) == chunk_by_section(docs)


def test_load_documents_errors(tmp_path):
    with pytest.raises(InputError, match="documents folder not found"):
        load_documents(tmp_path / "missing")
    with pytest.raises(InputError, match="no documents"):
        load_documents(tmp_path)
    (tmp_path / "a.md").write_text("x")
    (tmp_path / "a.txt").write_text("y")
    with pytest.raises(InputError, match="share the name 'a'"):
        load_documents(tmp_path)


# ------------------------------------------------------ Markdown sections (CommonMark)


@pytest.mark.parametrize(
    ("text", "sections"),
    [
        (  # a "#" comment in a fenced code block is code, not a heading
            "# Install\nRun:\n\n```bash\n# fetch it\npip install kite\n```\nDone.\n# Next\nx",
            ["Install\nRun:\n\n```bash\n# fetch it\npip install kite\n```\nDone.", "Next\nx"],
        ),
        ("# A\n~~~\n# not a heading\n~~~\n", ["A\n~~~\n# not a heading\n~~~"]),
        ("# A\n    # indented code\n", ["A\n    # indented code"]),
        (  # setext headings, both levels; the underline goes like a "#" marker
            "Plans\n=====\n\nFree and Pro.\n\nDowngrade\n---------\nAt period end.",
            ["Plans\n\nFree and Pro.", "Downgrade\nAt period end."],
        ),
        ("> # quoted\n\n# Real\nbody", ["> # quoted", "Real\nbody"]),
        ("# C# tips\nx", ["C# tips\nx"]),  # a closing "#" needs a space before it
        ("   # Indented heading\nx", ["Indented heading\nx"]),
        ("a\r\n# b\r\nc", ["a", "b\nc"]),
        (  # front matter is not a setext heading over its closing ---
            "---\ntitle: Plans\n---\n# Plans\nbody",
            ["---\ntitle: Plans\n---", "Plans\nbody"],
        ),
        ("#hashtag is text\n", ["#hashtag is text"]),
    ],
)
def test_markdown_sections_follow_commonmark(text, sections):
    assert split_sections(text) == sections


def test_word_chunks_drop_heading_markers_but_keep_code():
    doc = Document("a", "Title\n=====\none two\n```\n# three\n```\n")
    assert chunk_by_words([doc], 10)[0].text == "Title one two ``` # three ```"
    assert plain_words(doc.text) == "Title one two ``` # three ```".split()


def test_kitebase_sections_are_unchanged(kitebase):
    # the section texts the bundled figures rest on: heading, blank line, paragraph
    docs = load_documents(kitebase / "docs")
    chunks = {c.id: c.text for c in chunk_by_section(docs)}
    assert chunks["plans#2"] == (
        "Downgrade your plan\n\nOwners can downgrade in Settings > Billing. Old plan features "
        "switch off; your pages stay. Downgrades apply at the end of the billing period."
    )
    # every word of every document is in exactly one section, "#" markers aside
    words = [w for d in docs for w in d.text.split() if set(w) != {"#"}]
    assert " ".join(chunks.values()).split() == words


# ------------------------------------------------------ HTML pages


def html_doc(tmp_path, html: str) -> Document:
    (tmp_path / "page.html").write_text(html, encoding="utf-8")
    [doc] = load_documents(tmp_path)
    return doc


def test_html_table_cells_and_blocks_stay_apart(tmp_path):
    doc = html_doc(
        tmp_path,
        "<h1>Plans</h1><table><tr><th>Plan</th><th>Price</th></tr>"
        "<tr><td>Pro</td><td>$10</td></tr><tr><td></td><td>Free</td></tr></table>"
        "<ul><li>one</li><li>two</li></ul><div>a</div><div>b<br>c</div>",
    )
    assert doc.text.splitlines()[:3] == ["# Plans", "", "Plan | Price"]
    [section] = chunk_by_section([doc])
    assert section.text == "Plans\n\nPlan | Price\n\nPro | $10\n\nFree\n\none\n\ntwo\n\na\n\nb\n\nc"
    assert "Pro$10" not in doc.text and "onetwo" not in doc.text


def test_html_sections_come_from_heading_tags_not_text(tmp_path):
    doc = html_doc(
        tmp_path,
        "<html><head><title>Kitebase help</title><style>h1{color:red}</style>"
        "<body><p>Intro</p><h2>Install <small>(CLI)</small></h2>"
        "<pre># fetch it\npip install kite</pre><script>var x = '<h1>no</h1>';</script>"
        "<h3></h3><noscript>Turn on JS</noscript><h2>Use</h2><p>Run <code>kite</code>.</p>",
    )
    assert [c.text for c in chunk_by_section([doc])] == [
        "Intro",
        "Install (CLI)\n\n# fetch it pip install kite",
        "Use\n\nRun kite.",
    ]
    assert [c.id for c in chunk_by_section([doc])] == ["page#1", "page#2", "page#3"]
    for gone in ("Kitebase help", "color", "var x", "Turn on JS"):
        assert gone not in doc.text
    # word chunks read the same sections: the heading tag's text, no "#" from <pre> dropped
    words = chunk_by_words([doc], 100)[0].text
    assert words == "Intro Install (CLI) # fetch it pip install kite Use Run kite."


def test_html_to_markdown_keeps_headings_and_entities():
    text = html_to_markdown("<h2>SSO &amp; SAML</h2><p>Ask&nbsp;IT</p><h4>Note</h4>")
    assert text == "## SSO & SAML\n\nAsk IT\n\n#### Note\n"
