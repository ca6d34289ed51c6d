"""Documents and chunkers.

A document's name is its file name without the extension (``two-factor.md``
is the source ``two-factor``); chunk ids are ``<source>#<n>``, counted from 1
within each document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from ragrail.errors import InputError

DOC_SUFFIXES = (".md", ".markdown", ".txt", ".html", ".htm")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


@dataclass(frozen=True)
class Document:
    name: str
    text: str


@dataclass(frozen=True)
class Chunk:
    id: str
    source: str
    text: str


def load_documents(folder: Path) -> list[Document]:
    """Read every Markdown or text file directly in ``folder``, sorted by name."""
    if not folder.is_dir():
        raise InputError("documents folder not found", str(folder))
    docs = []
    for path in sorted(folder.iterdir()):
        if path.suffix.lower() in DOC_SUFFIXES and path.is_file():
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                raise InputError("document is not UTF-8 text", str(path)) from None
            if path.suffix.lower() in (".html", ".htm"):
                text = html_to_markdown(text)
            docs.append(Document(name=path.stem, text=text))
    if not docs:
        raise InputError(f"no documents ({', '.join(DOC_SUFFIXES)}) in folder", str(folder))
    names = [d.name for d in docs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise InputError(f"two documents share the name {dupes[0]!r}", str(folder))
    return docs


class _HTMLText(HTMLParser):
    """Headings become Markdown headings, block elements paragraphs; script and style go."""

    BLOCKS = frozenset("p div li tr br section article blockquote pre table ul ol dd dt".split())
    SKIP = frozenset(("script", "style", "head", "template", "noscript"))

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self.skip += 1
        elif len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            self.parts.append("\n\n" + "#" * int(tag[1]) + " ")
        elif tag in self.BLOCKS:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self.skip = max(0, self.skip - 1)
        elif (len(tag) == 2 and tag[0] == "h" and tag[1] in "123456") or tag in self.BLOCKS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.parts.append(re.sub(r"\s+", " ", data))


def html_to_markdown(html: str) -> str:
    """Plain text of an HTML page with its headings kept as Markdown headings,
    so section chunking works the same on HTML help centers."""
    parser = _HTMLText()
    parser.feed(html)
    parser.close()
    lines = [line.strip() for line in "".join(parser.parts).splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip() + "\n"


def split_sections(text: str) -> list[str]:
    """Split Markdown into blocks that each start at a heading.

    Text before the first heading, if any, is a block of its own. Heading
    markers are dropped and the heading text kept, since it often carries the
    words a question uses ("Backup codes").
    """
    blocks: list[list[str]] = [[]]
    for line in text.splitlines():
        m = _HEADING.match(line)
        if m:
            blocks.append([m.group(2)])
        else:
            blocks[-1].append(line)
    out = []
    for block in blocks:
        body = "\n".join(block).strip()
        body = re.sub(r"\n{3,}", "\n\n", body)
        if body:
            out.append(body)
    return out


def plain_words(text: str) -> list[str]:
    """The document's words in order, heading markers removed."""
    lines = []
    for line in text.splitlines():
        m = _HEADING.match(line)
        lines.append(m.group(2) if m else line)
    return " ".join(lines).split()


def chunk_by_section(docs: list[Document]) -> list[Chunk]:
    """One chunk per Markdown section."""
    return [
        Chunk(id=f"{doc.name}#{i}", source=doc.name, text=block)
        for doc in docs
        for i, block in enumerate(split_sections(doc.text), start=1)
    ]


def chunk_by_words(docs: list[Document], size: int) -> list[Chunk]:
    """Consecutive chunks of ``size`` words per document, ignoring structure.

    This is the naive fixed-size chunker: it can cut a sentence, and a fact
    with it, across two chunks.
    """
    if size < 1:
        raise ValueError("chunk size must be at least 1 word")
    chunks = []
    for doc in docs:
        words = plain_words(doc.text)
        for i, start in enumerate(range(0, len(words), size), start=1):
            chunks.append(
                Chunk(
                    id=f"{doc.name}#{i}",
                    source=doc.name,
                    text=" ".join(words[start : start + size]),
                )
            )
    return chunks


def make_chunks(docs: list[Document], chunk_words: int | None) -> list[Chunk]:
    """Chunk by section when ``chunk_words`` is None or 0, else by fixed word count."""
    if not chunk_words:
        return chunk_by_section(docs)
    return chunk_by_words(docs, chunk_words)


def describe_chunking(chunk_words: int | None) -> str:
    return "chunks by section" if not chunk_words else f"{chunk_words}-word chunks"
