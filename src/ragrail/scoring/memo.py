"""One run's memory of scoring work it would otherwise repeat.

Scoring a run meets the same texts again and again: a chunk is retrieved for many
questions, a deterministic system gives the same answer to every repeat, a chunk id
is cited by many answers. What scoring derives from such a text (its normalised
form, its terms, its numbers, an answer's claims) depends on the text alone, so a
:class:`ScoringCache` keeps it, keyed on the exact string, for as long as the cache
lives: one per :class:`ragrail.scoring.case.ScoringOptions`, so one per run, gone
with it. Nothing in it is process-wide, so a long-lived process (the pytest plugin,
a notebook) does not grow from run to run.

Memory is bounded: each table holds at most ``max_entries`` keys and at most
``max_chars`` characters of text keys. What a table derives from a text (a
normalised copy, a term set) takes a few times the text's own size, so a full table
is on the order of 50 MB; the keys themselves are the run's own strings, not
copies. A full table forgets its oldest quarter (insertion order), which costs only
the recomputation should those texts come back.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from itertools import islice
from typing import Any

MAX_ENTRIES = 65_536  # distinct keys a table remembers
MAX_CHARS = 16_000_000  # characters of text keys a table remembers


class BoundedMemo(dict[Hashable, Any]):
    """A dict that keeps within ``max_entries`` keys and ``max_chars`` characters of
    string keys (see :meth:`put`)."""

    def __init__(self, max_entries: int = MAX_ENTRIES, max_chars: int = MAX_CHARS) -> None:
        super().__init__()
        self.max_entries = max(1, max_entries)
        self.max_chars = max(1, max_chars)
        self.chars = 0  # characters of the string keys held

    def put(self, key: Hashable, value: Any) -> Any:
        """Remember ``value`` under ``key`` and return it; a full memo first forgets its
        oldest quarter."""
        size = len(key) if isinstance(key, str) else 0
        while self and (len(self) >= self.max_entries or self.chars + size > self.max_chars):
            self._forget_oldest(max(1, len(self) // 4))
        if key not in self:
            self.chars += size
        self[key] = value
        return value

    def _forget_oldest(self, count: int) -> None:
        # the keys first, in one pass: next(iter()) after deletions rescans the gaps
        for old in list(islice(iter(self), count)):
            del self[old]
            if isinstance(old, str):
                self.chars -= len(old)


class ScoringCache:
    """Named bounded memos for one run's scoring (see the module docstring).

    ``table(name)`` is the memo for one kind of derived value, e.g.
    ``("terms", "en")`` for the English term sets of texts; callers look a key up with
    ``get`` and store a miss with ``put``. ``memoised(fn)`` wraps a function of one
    text in its own table."""

    def __init__(self, max_entries: int = MAX_ENTRIES, max_chars: int = MAX_CHARS) -> None:
        self.max_entries = max_entries
        self.max_chars = max_chars
        self._tables: dict[Hashable, BoundedMemo] = {}
        self._functions: dict[Callable[[str], str], Callable[[str], str]] = {}

    def table(self, name: Hashable) -> BoundedMemo:
        """The memo called ``name``, created empty on first use."""
        memo = self._tables.get(name)
        if memo is None:
            memo = self._tables[name] = BoundedMemo(self.max_entries, self.max_chars)
        return memo

    def memoised(self, fn: Callable[[str], str]) -> Callable[[str], str]:
        """``fn`` (a pure function of one text, returning text), remembered for as long
        as this cache lives, in its own bounded table."""
        wrapped = self._functions.get(fn)
        if wrapped is None:
            memo = self.table(fn)

            def wrapped(text: str) -> str:
                found = memo.get(text)
                return memo.put(text, fn(text)) if found is None else found

            self._functions[fn] = wrapped
        return wrapped

    def __reduce__(self) -> tuple[Any, ...]:
        """A copy (pickle, deepcopy) starts empty: the memos are only ever a shortcut."""
        return (ScoringCache, (self.max_entries, self.max_chars))

    def __len__(self) -> int:
        """Entries held, over every table."""
        return sum(len(memo) for memo in self._tables.values())

    def clear(self) -> None:
        """Forget everything."""
        self._tables.clear()
        self._functions.clear()
