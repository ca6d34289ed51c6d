"""``ragrail sample``: a stratified sample of logged conversations, for labelling.

Strata, in order; a conversation in several is counted once, in the first:

1. ``thumbs-down``: the user voted the answer down;
2. ``escalated``: the conversation went to a human;
3. ``re-asked``: the user asked a close paraphrase again soon after
   (:func:`ragrail.online.reask.reasked_ids` with ``[logs] reask_minutes`` and
   ``reask_similarity``);
4. ``flagged``: ``ragrail logs score`` flagged the answer (any flag but the
   informational ``abstained``);
5. ``random``: every other conversation.

Shares, for a sample of n: each of the four signal strata gets up to ⌊n/5⌋ places and
the random slice gets the rest. A stratum with fewer conversations than its share
leaves its unused places to the random slice; if the random slice runs short too, the
places still free go to the signal strata, in the order above, up to what each holds.
So the sample has n rows whenever the log holds n conversations.

Within a stratum the conversations are drawn uniformly at random (reservoir sampling
with ``seed``, over the log in (time, id) order): the same log and seed give the same
sample, and memory holds at most n conversations per stratum, never the whole log.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from ragrail.online.record import Conversation
from ragrail.online.score import ABSTAINED

STRATA = ("thumbs-down", "escalated", "re-asked", "flagged", "random")
# The columns a labeller fills in: the golden set's labels, the expected behaviour
# (answer, abstain, refuse, escalate) and free notes.
LABEL_COLUMNS = ("facts", "sources", "expect", "notes")
COLUMNS = ("id", "stratum", "version", "date", "question", "answer", "contexts", *LABEL_COLUMNS)
SUFFIXES = (".csv", ".jsonl")


def iso_date(at: float) -> str:
    """Seconds since the epoch as an ISO 8601 UTC time: ``2024-05-01T09:30:00Z``."""
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def stratum_of(conversation: Conversation, reasked: set[str]) -> str:
    """The first stratum (module docstring) the conversation belongs to."""
    if conversation.thumbs is not None and conversation.thumbs < 0:
        return "thumbs-down"
    if conversation.escalated:
        return "escalated"
    if conversation.id in reasked:
        return "re-asked"
    if any(f != ABSTAINED for f in conversation.flags):
        return "flagged"
    return "random"


def shares(n: int, available: dict[str, int]) -> dict[str, int]:
    """How many places each stratum gets in a sample of ``n`` (module docstring), given
    how many conversations each holds."""
    quota = n // len(STRATA)
    signal = STRATA[:-1]
    taken = {s: min(quota, available.get(s, 0)) for s in signal}
    taken["random"] = min(n - sum(taken.values()), available.get("random", 0))
    free = n - sum(taken.values())
    for s in signal:
        if free <= 0:
            break
        more = min(free, available.get(s, 0) - taken[s])
        taken[s] += more
        free -= more
    return taken


@dataclass(frozen=True)
class Drawn:
    """One sampled conversation and the stratum it was drawn for."""

    stratum: str
    conversation: Conversation


def draw(
    conversations: Iterable[Conversation], n: int, seed: int, reasked: set[str]
) -> list[Drawn]:
    """A stratified sample of ``n`` (fewer when the log holds fewer), in stratum order,
    each stratum's conversations oldest first."""
    rng = random.Random(seed)
    seen = dict.fromkeys(STRATA, 0)
    pools: dict[str, list[tuple[int, Conversation]]] = {s: [] for s in STRATA}
    for position, c in enumerate(conversations):
        stratum = stratum_of(c, reasked)
        seen[stratum] += 1
        pool = pools[stratum]
        if len(pool) < n:  # reservoir sampling (Algorithm R): each kept with chance n/seen
            pool.append((position, c))
        else:
            j = rng.randrange(seen[stratum])
            if j < n:
                pool[j] = (position, c)
    places = shares(n, seen)
    out: list[Drawn] = []
    for stratum in STRATA:
        pool = pools[stratum]
        # the reservoir is a uniform sample; a uniform subset of it is one too
        chosen = rng.sample(pool, places[stratum]) if places[stratum] < len(pool) else pool
        out.extend(Drawn(stratum, c) for _, c in sorted(chosen, key=lambda pc: pc[0]))
    return out


def row(drawn: Drawn) -> dict[str, object]:
    """One labelling row: the conversation, its contexts, and empty label columns."""
    c = drawn.conversation
    return {
        "id": c.id,
        "stratum": drawn.stratum,
        "version": c.version,
        "date": iso_date(c.at),
        "question": c.question,
        "answer": c.answer,
        "contexts": [{"id": x.id, "source": x.source, "text": x.text} for x in c.contexts],
        **dict.fromkeys(LABEL_COLUMNS, ""),
    }


# A cell a spreadsheet would run as a formula (users' text is in these cells); some
# spreadsheets drop a leading tab or line break first
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")


def inert(cell: str) -> str:
    """A CSV cell a spreadsheet shows as text: one that opens like a formula gets a leading
    apostrophe (OWASP's advice against CSV injection), which spreadsheets do not display."""
    return "'" + cell if cell.startswith(_FORMULA_START) else cell


def render(sample: list[Drawn], suffix: str) -> Iterator[str]:
    """The labelling file's text, in pieces: CSV (contexts as JSON text in their cell)
    or JSON Lines."""
    if suffix == ".jsonl":
        for drawn in sample:
            yield json.dumps(row(drawn), ensure_ascii=False) + "\n"
        return
    import csv
    import io

    buf = io.StringIO()
    # RFC 4180's CRLF: the csv module quotes a cell holding any character of the line
    # ending, so with "\n" alone a bare CR went out unquoted, and a spreadsheet broke the
    # row there, opening a new one with whatever followed (a formula, unneutralised)
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    for drawn in sample:
        values = row(drawn)
        values["contexts"] = json.dumps(values["contexts"], ensure_ascii=False)
        writer.writerow([inert(str(values[c])) for c in COLUMNS])
        yield buf.getvalue()
        buf.seek(0)
        buf.truncate()
    yield buf.getvalue()
