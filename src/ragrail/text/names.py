"""A document as apps name it: by its name, a file name, a path or a URL.

Frameworks return a passage's source as they stored it: LlamaIndex's
``metadata["file_name"]`` (``npm-ci.md``), a path (``docs/npm-ci.md``), a URL
(``https://docs.example.com/cli/npm-ci.html#usage``), or a title in other case
(``NPM-CI``). :class:`DocumentNames` reads each back as the document it names
(``npm-ci``), or None when it names none. Importers place passages by it, and a
user's system's returned sources are read by it before scoring.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ragrail.text.matching import slug

_QUERY = re.compile(r"[?#]")
_FOLDERS = re.compile(r"[/\\]")


def name_keys(hint: str) -> tuple[str, ...]:
    """The ways ``hint`` may name a document, most exact first: as given; its last path
    part (query, fragment and trailing ``/`` dropped); that part without its extension;
    the same in case-folded and in slug form (as chunk ids spell names)."""
    given = hint.strip()
    tail = _FOLDERS.split(_QUERY.split(given, maxsplit=1)[0].rstrip("/"))[-1]
    stem = tail.rsplit(".", 1)[0] if "." in tail else tail
    return (given, tail, stem, stem.casefold(), slug(stem))


class DocumentNames:
    """Documents' names, ready to read the name an app gave one of them."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = tuple(dict.fromkeys(names))
        self._names = frozenset(self.names)
        # each name by itself first (an exact name always wins: "logs" is logs, not LOGS),
        # then case-folded and as a slug; the first name keeps a shared key
        self._by_key: dict[str, str] = {name: name for name in self.names}
        for name in self.names:
            for key in (name.casefold(), slug(name)):
                self._by_key.setdefault(key, name)

    def __len__(self) -> int:
        return len(self.names)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def find(self, hint: str | None) -> str | None:
        """The document ``hint`` names (:func:`name_keys`, the first key a document has),
        or None: ``npm-ci``, ``npm-ci.md``, ``docs/npm-ci.md``,
        ``https://x.org/docs/npm-ci.html?v=2`` and ``NPM-CI`` all name ``npm-ci``."""
        if not hint or not hint.strip():
            return None
        known = self._by_key.get(hint)  # most sources are a document's own name
        if known is not None:
            return known
        for key in name_keys(hint):
            if key in self._by_key:
                return self._by_key[key]
        return None
