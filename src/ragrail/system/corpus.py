"""Documents and chunkers.

A document's name is its file name without the extension (``two-factor.md``
is the source ``two-factor``); chunk ids are ``<slug>#<n>``, counted from 1
within each document, where the slug is the name in lower case with spaces and
other punctuation made ``-`` (``Refund Policy.md`` gives ``refund-policy#1``), so
a model can cite any document.

Markdown (and ``.txt``) sections come from a CommonMark parser, so a ``#`` line
inside a fenced code block is code, not a heading, and setext headings
(``Title`` over ``===`` or ``---``) are headings. HTML sections come from the
page's own ``h1``-``h6`` tags; block elements and table cells stay apart
(``<td>Pro</td><td>$10</td>`` reads ``Pro | $10``), scripts and styles go.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING

from ragrail.errors import InputError
from ragrail.text.matching import slug

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

DOC_SUFFIXES = (".md", ".markdown", ".txt", ".html", ".htm")


@dataclass(frozen=True)
class Document:
    name: str
    text: str
    # Set for HTML pages: the sections their heading tags make. Markdown is
    # sectioned from its text, which an HTML page's plain text cannot be
    # trusted for (a "# comment" line from a <pre> block is not a heading).
    sections: tuple[str, ...] | None = None


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
                text, sections = html_document(text)
                docs.append(Document(name=path.stem, text=text, sections=sections))
            else:
                docs.append(Document(name=path.stem, text=text))
    if not docs:
        raise InputError(f"no documents ({', '.join(DOC_SUFFIXES)}) in folder", str(folder))
    names = [d.name for d in docs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise InputError(f"two documents share the name {dupes[0]!r}", str(folder))
    by_slug: dict[str, str] = {}
    for name in names:
        other = by_slug.setdefault(slug(name), name)
        if other != name:
            raise InputError(
                f"documents {other!r} and {name!r} would share the chunk ids "
                f"{slug(name)}#<n>; rename one",
                str(folder),
            )
    return docs


_WS = re.compile(r"\s+")
_HEADING_TAGS = {f"h{n}": n for n in range(1, 7)}


class _HTMLSections(HTMLParser):
    """An HTML page's text as blocks grouped under its heading tags.

    Each block element (and ``br``) ends a block, so its text never runs into the
    next one's; table cells in a row are kept apart by `` | ``. Script, style and
    the like are dropped; inside a heading, block tags are spaces.
    """

    BLOCKS = frozenset(
        "address article aside blockquote body br caption dd details dialog div dl dt "
        "fieldset figcaption figure footer form header hr li main nav ol p pre section "
        "summary table tbody tfoot thead tr ul".split()
    )
    CELLS = frozenset(("td", "th"))
    # Not "head": its end tag is optional, and skipping up to it could skip the page.
    SKIP = frozenset(("script", "style", "template", "noscript", "title", "svg"))

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: list[tuple[int, list[str]]] = [(0, [])]  # (level, [heading, *blocks])
        self.parts: list[str] = []  # the block (or heading) being read
        self.has_text = False  # whether the block has more than white space yet
        self.skip = 0
        self.heading = 0  # level of the heading being read; 0 outside one

    def _take(self) -> str:
        text = _WS.sub(" ", "".join(self.parts)).strip()
        self.parts, self.has_text = [], False
        return text

    def _end_block(self) -> None:
        block = self._take()
        if block:
            self.sections[-1][1].append(block)

    def _end_heading(self) -> None:
        title, level = self._take(), self.heading
        self.heading = 0
        if title:
            self.sections.append((level, [title]))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self.skip += 1
        elif self.skip:
            return
        elif self.heading:
            if tag in self.BLOCKS or tag in self.CELLS:
                self.parts.append(" ")
        elif tag in _HEADING_TAGS:
            self._end_block()
            self.heading = _HEADING_TAGS[tag]
        elif tag in self.CELLS:
            if self.has_text:
                self.parts.append(" | ")
        elif tag in self.BLOCKS:
            self._end_block()

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self.skip = max(0, self.skip - 1)
        elif self.skip:
            return
        elif self.heading:
            if tag in _HEADING_TAGS:  # any heading end tag closes one, as in a browser
                self._end_heading()
            elif tag in self.BLOCKS or tag in self.CELLS:
                self.parts.append(" ")
        elif tag in self.BLOCKS:
            self._end_block()

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.parts.append(data)
            self.has_text = self.has_text or bool(data.strip())

    def close(self) -> None:
        super().close()
        if self.heading:
            self._end_heading()
        self._end_block()


def html_document(html: str) -> tuple[str, tuple[str, ...]]:
    """An HTML page's plain text, headings written as Markdown headings, and its
    sections (each heading's text, then its blocks, one blank line apart)."""
    parser = _HTMLSections()
    parser.feed(html)
    parser.close()
    shown: list[str] = []
    sections: list[str] = []
    for level, blocks in parser.sections:
        if not blocks:
            continue
        sections.append("\n\n".join(blocks))
        shown.extend([f"{'#' * level} {blocks[0]}", *blocks[1:]] if level else blocks)
    return "\n\n".join(shown) + "\n", tuple(sections)


def html_to_markdown(html: str) -> str:
    """Plain text of an HTML page with its headings kept as Markdown headings."""
    return html_document(html)[0]


# YAML front matter is metadata, not Markdown: its closing "---" would otherwise
# make the line above it a setext heading.
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(?:.*\n)*?(?:---|\.\.\.)[ \t]*(?:\n|\Z)")


def _lines(text: str) -> list[str]:
    """Lines as a CommonMark parser counts them (only \\n, \\r\\n and \\r end one)."""
    return re.sub(r"\r\n?", "\n", text).split("\n")


@functools.cache
def _markdown_parser() -> MarkdownIt:
    """A CommonMark block parser: headings need no inline parsing, their text is
    kept as written."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").disable("inline")


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """``(first line, line after it, text)`` of each top-level heading, ATX or setext."""
    text = "\n".join(lines)
    front = _FRONT_MATTER.match(text)
    if front:  # blank it out, keeping the line numbers
        text = "\n" * front.group(0).count("\n") + text[front.end() :]
    tokens = _markdown_parser().parse(text)
    heads = []
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.level == 0 and token.map:
            heads.append((token.map[0], token.map[1], tokens[i + 1].content.strip()))
    return heads


def split_sections(text: str) -> list[str]:
    """Split Markdown into blocks that each start at a heading.

    Text before the first heading, if any, is a block of its own. Heading
    markers (``#``, a setext underline) are dropped and the heading text kept,
    since it often carries the words a question uses ("Backup codes"). Only
    headings at the top level count: not a ``#`` line in a code block, a quote
    or a list.
    """
    lines = _lines(text)
    heads = _headings(lines)
    blocks = [lines[: heads[0][0]] if heads else lines]
    for i, (_, end, title) in enumerate(heads):
        stop = heads[i + 1][0] if i + 1 < len(heads) else len(lines)
        blocks.append([title, *lines[end:stop]])
    out = []
    for block in blocks:
        body = "\n".join(block).strip()
        body = re.sub(r"\n{3,}", "\n\n", body)
        if body:
            out.append(body)
    return out


def document_sections(doc: Document) -> list[str]:
    """A document's sections: an HTML page's from its tags, others' from Markdown."""
    return list(doc.sections) if doc.sections is not None else split_sections(doc.text)


def plain_words(text: str) -> list[str]:
    """The document's words in order, heading markers removed."""
    return " ".join(split_sections(text)).split()


def chunk_by_section(docs: list[Document]) -> list[Chunk]:
    """One chunk per section (Markdown headings, or an HTML page's heading tags)."""
    return [
        Chunk(id=f"{slug(doc.name)}#{i}", source=doc.name, text=block)
        for doc in docs
        for i, block in enumerate(document_sections(doc), start=1)
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
        words = " ".join(document_sections(doc)).split()
        for i, start in enumerate(range(0, len(words), size), start=1):
            chunks.append(
                Chunk(
                    id=f"{slug(doc.name)}#{i}",
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
