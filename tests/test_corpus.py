from __future__ import annotations

import pytest

from ragrail.corpus import (
    Document,
    chunk_by_section,
    chunk_by_words,
    load_documents,
    make_chunks,
    split_sections,
)
from ragrail.errors import InputError


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
