"""Where a passage came from: the document whose text holds it.

Other tools record a retrieved passage as its text, seldom with a name ragrail
knows. ragrail scores retrieval by article, so every imported passage is
*placed*: the documents folder is searched for the passage's text, compared as
facts are (:func:`ragrail.text.matching.normalise`: Unicode NFKC, case
folding, one space for any run of white space). A passage whose Markdown or
punctuation differs from the document's (``**30 days**`` against ``30 days``)
is found by its words alone. When several documents hold it, or none does, a
name the tool recorded (a file name, a URL, ``deepeval_source``) decides.

Placing maps a passage to a document; it does not rename it. A passage the tool
recorded with an id keeps it (the importer writes it), so an answer citing its
system's own ids still cites them; that id also names a document where the text
alone cannot decide (``refunds#7``, ``docs/refunds.md``). A passage without an id
gets the id of the section chunk that holds it, as ragrail's own chunker names it
(``refunds#2``); one that spans sections keeps the section it starts in.

Every passage found in several documents and named by nothing is listed: where
it was, its first words, the documents holding it and the one taken (the first,
in the folder's order).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ragrail.system.corpus import chunk_by_section, load_documents
from ragrail.text.matching import find, normalise, slug
from ragrail.text.names import DocumentNames

_WORD = re.compile(r"\w+")
HEAD_WORDS = 8  # most words of a passage's start that find its section when none holds it all


def words(text: str) -> str:
    """The normalised text's words, one space apart: Markdown and punctuation dropped."""
    return " ".join(_WORD.findall(normalise(text)))


@dataclass(frozen=True)
class Placement:
    source: str  # the document's name
    chunk_id: str  # the section chunk's id (``refunds#2``), or the document's slug
    how: str  # "text", "words" (punctuation or Markup differs) or "hint" (a recorded name)


EXCERPT_WORDS = 8  # words of a passage that name it in the report


def excerpt(text: str) -> str:
    """A passage's first words, quoted (``"Refunds go back to the original payment
    method within..."``), to name it in a report line."""
    ws = text.split()
    more = "..." if len(ws) > EXCERPT_WORDS else ""
    return '"' + " ".join(ws[:EXCERPT_WORDS]) + more + '"'


@dataclass
class Several:
    """A passage found in several documents, none of them named by the tool."""

    where: str  # where it was first seen (file:line, which context)
    text: str
    documents: list[str]  # the documents holding it, in the folder's order
    taken: str  # the one it was placed in
    seen: int = 1  # how many times it was placed (a passage recurs across questions)

    def line(self) -> str:
        """``FILE:LINE (retrieved context 2) "first words..." is in returns, account:
        placed in returns``."""
        again = f" (and {self.seen - 1} more times)" if self.seen > 1 else ""
        return (
            f"{self.where} {excerpt(self.text)} is in {', '.join(self.documents)}: "
            f"placed in {self.taken}{again}"
        )


@dataclass
class Tally:
    """How many passages were placed, and where the others were."""

    total: int = 0
    placed: int = 0
    ambiguous: int = 0  # found in several documents, none named: the first was taken
    by_hint: int = 0  # not found, placed by the name the tool recorded
    unplaced: list[str] = field(default_factory=list)  # where each one was (file:line)
    several: dict[str, Several] = field(default_factory=dict)  # by passage text

    def ambiguities(self) -> list[str]:
        """One line per distinct passage found in several documents (:meth:`Several.line`)."""
        return [s.line() for s in self.several.values()]

    def line(self) -> str:
        """``placed N of M contexts; K could not be placed``."""
        missed = self.total - self.placed
        text = f"placed {self.placed} of {self.total} contexts; {missed} could not be placed"
        extra = []
        if self.ambiguous:
            extra.append(f"{self.ambiguous} found in several documents (the first was taken)")
        if self.by_hint:
            extra.append(f"{self.by_hint} placed by the source name the tool recorded")
        return text + (f" ({'; '.join(extra)})" if extra else "")


class Placer:
    """The documents of one folder, ready to place passages in."""

    def __init__(self, folder: Path) -> None:
        docs = load_documents(folder)
        self.folder = folder
        self.names = [d.name for d in docs]
        self._text = {d.name: normalise(d.text) for d in docs}
        self._words = {d.name: words(d.text) for d in docs}
        # word trigram -> the documents holding it: a passage is only searched for in the
        # documents holding a few of its inner trigrams (its first and last words may be
        # cut mid-word, the inner ones never are), not in every document
        self._grams: dict[str, set[str]] = {}
        for name, text in self._words.items():
            ws = text.split()
            for i in range(len(ws) - 2):
                self._grams.setdefault(" ".join(ws[i : i + 3]), set()).add(name)
        self._chunks: dict[str, list[tuple[str, str, str]]] = {d.name: [] for d in docs}
        for chunk in chunk_by_section(docs):
            self._chunks[chunk.source].append((chunk.id, normalise(chunk.text), words(chunk.text)))
        self._named = DocumentNames(self.names)
        self.tally = Tally()
        self._found: dict[str, tuple[list[str], str]] = {}  # a passage recurs across questions

    def document_named(self, hint: str | None) -> str | None:
        """The document a recorded name points at: ``refunds``, ``docs/refunds.md``,
        ``https://help.example.com/refunds.html?x=1``, ``Refunds``; None when none."""
        return self._named.find(hint)

    def candidates(self, text: str) -> tuple[list[str], str]:
        """The documents holding the passage, and how it was found (``text`` or ``words``)."""
        if text not in self._found:
            self._found[text] = self._search(text)
        found, how = self._found[text]
        return list(found), how

    def _search(self, text: str) -> tuple[list[str], str]:
        needle = normalise(text)
        if not needle:
            return [], "text"
        names = self._may_hold(text)
        found = [n for n in names if needle in self._text[n]]
        if found:
            return found, "text"
        needle = words(text)
        if not needle:
            return [], "words"
        return [n for n in names if needle in self._words[n]], "words"

    def _may_hold(self, text: str) -> list[str]:
        """The documents that hold three of the passage's inner word trigrams (every
        document when it has too few words to tell), in the folder's order."""
        inner = words(text).split()[1:-1]
        if len(inner) < 3:
            return self.names
        picks = {0, (len(inner) - 3) // 2, len(inner) - 3}
        holding: set[str] | None = None
        for i in picks:
            docs = self._grams.get(" ".join(inner[i : i + 3]), set())
            holding = docs if holding is None else holding & docs
        return [n for n in self.names if n in (holding or set())]

    def place(self, text: str, hint: str | None = None, where: str = "") -> Placement | None:
        """The document (and section) holding ``text``, counted in :attr:`tally`; None
        (and ``where`` noted) when no document holds it and ``hint`` names none. When
        several hold it, the one ``hint`` names, else the first (noted with ``where``)."""
        self.tally.total += 1
        found, how = self.candidates(text)
        named = self.document_named(hint)
        if named is not None and (named in found or not found):
            source = named
            if named not in found:
                how = "hint"
                self.tally.by_hint += 1
        elif found:
            source = found[0]
            if len(found) > 1:
                self.tally.ambiguous += 1
                noted = self.tally.several.get(text)
                if noted is None:
                    self.tally.several[text] = Several(where, text, found, source)
                else:
                    noted.seen += 1
        else:
            self.tally.unplaced.append(where)
            return None
        self.tally.placed += 1
        return Placement(source=source, chunk_id=self._chunk_id(source, text), how=how)

    def _chunk_id(self, source: str, text: str) -> str:
        """The id of the section of ``source`` that holds the passage, or the one its
        first words (8 down to 3) are in; the document's slug when neither is found."""
        needle, needle_words = normalise(text), words(text)
        chunks = self._chunks.get(source, [])
        for chunk_id, chunk_text, chunk_words in chunks:
            if (needle and needle in chunk_text) or (needle_words and needle_words in chunk_words):
                return chunk_id
        first = needle_words.split()
        for n in range(min(HEAD_WORDS, len(first)), 2, -1):  # a shorter head may not cross over
            head = " ".join(first[:n])
            for chunk_id, _, chunk_words in chunks:
                if head in chunk_words:
                    return chunk_id
        return slug(source)

    def documents_with(self, fact: str) -> list[str]:
        """The documents that hold a fact, as scoring finds facts (token boundaries,
        alternatives, regexes)."""
        return [n for n in self.names if find(fact, self._text[n]) is not None]
