"""Citation markers in an answer: which chunks it cites, read as models and apps write them.

Citations are chunk ids in brackets: ``[refund-policy#2]``. Models write them loosely, so
whitespace inside the brackets (``[sso #1]``), full-width brackets (``［sso#1］``,
``【sso#1】``), several ids in one pair (``[sso#1, plans#2]``) and the document's name
in place of its slug (``[Refund Policy#2]``) are all read; an id is compared by its slug
(:func:`citation_key`). Given the contexts' ids, a bracket may also name a context by its
own id written whole or by its position (``[2]``), as framework apps number their sources.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from functools import lru_cache

from ragrail.scoring import scan
from ragrail.scoring.memo import ScoringCache
from ragrail.text.matching import PLAIN_SLUG, slug

# A bracket pair, ASCII or full-width; its content is read as ids when every part is one.
_BRACKETS = re.compile(r"[\[［【]([^\[\]［］【】\n]{1,500})[\]］】]")
_CITE_ID = re.compile(r"\s*([^#]*?[^#\s])\s*#\s*(\d+)\s*")
_PARTS = re.compile(r"[,;、，；]")
_POSITION = re.compile(r"[1-9][0-9]{0,2}")  # [1] .. [999]: a source's number
# Code, where brackets index: a fenced block (to the end when left open) or an inline span.
CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]+`", re.DOTALL)


class CodeSpans:
    """Where a text's code is (:data:`CODE`), asked position by position: a bisect over
    the spans, so an answer of many code spans and brackets is read in n log n."""

    def __init__(self, text: str) -> None:
        spans = [m.span() for m in CODE.finditer(text)] if "`" in text else []
        self._starts = [a for a, _ in spans]
        self._ends = [b for _, b in spans]

    def __contains__(self, pos: int) -> bool:
        i = bisect_right(self._starts, pos) - 1  # the last span starting at or before pos
        return i >= 0 and pos < self._ends[i]

# An id that is its own citation key: a plain slug, "#", a number without leading zeros.
_PLAIN_ID = re.compile(rf"{PLAIN_SLUG}#(?:0|[1-9][0-9]*)")


@lru_cache(maxsize=16_384)
def citation_key(chunk_id: str) -> str:
    """How a chunk id is compared with a citation: ``<slug>#<n>``, or the id as it is
    when it has no ``#<n>`` (an id from another system)."""
    if _PLAIN_ID.fullmatch(chunk_id):
        return chunk_id
    m = _CITE_ID.fullmatch(chunk_id)
    return f"{slug(m.group(1))}#{int(m.group(2))}" if m else chunk_id


def citations(answer: str, cache: ScoringCache | None = None, ids: Sequence[str] = ()) -> list[str]:
    """The chunk ids the answer cites, in order, as :func:`citation_key` reads them;
    with a run's ``cache``, read once per distinct answer.

    A bracket cites when every part of it (split at ``,`` or ``;``) is an id
    ``<name>#<n>``. With ``ids``, the contexts the model was given in order, a part may
    also be a context's own id written whole (``[9f2c1e...]``: a framework's node id) or a
    position, ``[2]`` naming the second context, as LlamaIndex's CitationQueryEngine
    numbers its sources; a position past the last context is cited as written (``7``),
    a chunk the model was never given."""
    if ids and ("[" in answer or "［" in answer or "【" in answer):
        return list(_citations_of(answer, tuple(ids)))  # a copy: the cache's stays as it is
    if cache is not None:
        memo = cache.table("citations")
        seen = memo.get(answer)
        if seen is None:
            seen = memo.put(answer, tuple(citations(answer)))
        return list(seen)
    out: list[str] = []
    for bracket in scan.finditer(_BRACKETS, answer, "[［【"):
        parts = [_CITE_ID.fullmatch(p) for p in _PARTS.split(bracket.group(1))]
        if all(parts):
            out.extend(f"{slug(m.group(1))}#{int(m.group(2))}" for m in parts if m)
    return out


@lru_cache(maxsize=4096)
def _citations_of(answer: str, ids: tuple[str, ...]) -> tuple[str, ...]:
    """:func:`citations` with the contexts' ids (cached: an answer is read for its
    check, the run's citation rule and the report). In code (a `` `span` `` or a fenced
    block) a bracket is an index, ``args[1]``, not a position or an id: only ``id#n``."""
    whole = {i.strip(): i for i in ids}
    code = CodeSpans(answer)
    out: list[str] = []
    for bracket in scan.finditer(_BRACKETS, answer, "[［【"):
        keys = []
        in_code = bracket.start() in code
        for part in _PARTS.split(bracket.group(1)):
            m = _CITE_ID.fullmatch(part)
            text = part.strip()
            if m:
                keys.append(f"{slug(m.group(1))}#{int(m.group(2))}")
            elif in_code:
                break
            elif text in whole:
                keys.append(citation_key(whole[text]))
            elif _POSITION.fullmatch(text):
                at = int(text)
                keys.append(citation_key(ids[at - 1]) if at <= len(ids) else text)
            else:
                break
        else:
            out.extend(keys)
    return tuple(out)


def cites(
    answers: Iterable[str | None],
    cited: Sequence[str] | None = None,
    cache: ScoringCache | None = None,
    ids: Sequence[str] = (),
) -> bool:
    """Whether any of ``answers`` cites something (an ``[id]`` read by :func:`citations`
    with the contexts' ``ids``, valid or not) or the system named a context its answer
    used (``cited``)."""
    return bool(cited) or any(a and citations(a, cache, ids) for a in answers)
