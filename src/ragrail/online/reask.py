"""Re-asks: the same user asking a close paraphrase of a question again, soon after.

A conversation C (first question q, asked at time t by user u) is **re-asked** when a
later question Q by the same user, asked within ``window_minutes`` of t, is a close
paraphrase of q. The later questions that count are

- a follow-up turn of C itself (the user asked again in the same chat), and
- the first question of another conversation of the same user ``u`` (the user gave up
  and started over).

"Later" is the order (at, id): of two conversations logged at the same second, the one
with the smaller id is taken as the earlier. A follow-up turn logged without a time
counts as within the window (it is in the same conversation); one logged before t does
not count. Conversations with no user can only be re-asked through their own turns.

Similarity is the Jaccard index of the two questions' token sets, through the one
tokeniser ragrail counts words with (:func:`ragrail.text.tokens.tokens`: any script,
case-folded, CJK as character bigrams), so it needs no language setting:

    J(a, b) = |A ∩ B| / |A ∪ B|,   and J = 0 when both sets are empty

and a paraphrase is J >= ``min_similarity``.

Cost: the conversations are read oldest first (the log database streams them so; a list
is sorted), and each user's questions of the last window are kept, so memory holds one
window of conversations, not the log, and each is compared only with the same user's
earlier ones inside the window: O(n·k) for k the most conversations one user starts in
one window.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence

from ragrail.online.record import Conversation
from ragrail.text.tokens import tokens


def token_set(text: str) -> frozenset[str]:
    """The set of tokens of a question (ragrail's tokeniser)."""
    return frozenset(tokens(text))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b|; 0.0 when both are empty (no words: no paraphrase)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


PRUNE_EVERY = 10_000  # conversations between sweeps of users with nothing in the window


def reasked_ids(
    conversations: Iterable[Conversation], window_minutes: float, min_similarity: float
) -> set[str]:
    """The ids of the conversations that were re-asked (module docstring). An iterator
    must yield them oldest first, by (at, id), as ``LogStore.conversations()`` does (a
    ValueError otherwise); a list or tuple may be in any order."""
    if isinstance(conversations, Sequence):
        conversations = sorted(conversations, key=lambda c: (c.at, c.id))
    window = window_minutes * 60.0
    found: set[str] = set()
    recent: dict[str, deque[tuple[float, str, frozenset[str]]]] = {}
    last: tuple[float, str] | None = None
    for seen, c in enumerate(conversations, start=1):
        if last is not None and (c.at, c.id) < last:
            raise ValueError("conversations must come oldest first, by (at, id)")
        last = (c.at, c.id)
        first = token_set(c.question)
        for turn in c.turns:
            if turn.at is not None and not (c.at <= turn.at <= c.at + window):
                continue
            if jaccard(first, token_set(turn.question)) >= min_similarity:
                found.add(c.id)
                break
        if c.user is None:
            continue
        earlier = recent.get(c.user)
        if earlier is None:
            earlier = recent[c.user] = deque()
        while earlier and c.at - earlier[0][0] > window:
            earlier.popleft()
        for _, cid, words in earlier:  # this question re-asks each close earlier one
            if cid not in found and jaccard(words, first) >= min_similarity:
                found.add(cid)
        earlier.append((c.at, c.id, first))
        if seen % PRUNE_EVERY == 0:
            recent = {u: q for u, q in recent.items() if c.at - q[-1][0] <= window}
    return found
