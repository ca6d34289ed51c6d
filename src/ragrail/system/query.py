"""The built-in pipeline's search query for a turn of a conversation.

A follow-up ("And on the Pro plan?", "Does it include SSO?") does not name what it is
about: searched alone, it finds the wrong article. The pipeline searches instead for
the turn together with the earlier questions it follows, by a fixed rule that needs no
model (deterministic, offline):

- A turn is a **follow-up** when it has at most ``SHORT_WORDS`` words (tokens of
  :func:`ragrail.text.tokens.tokens`), opens with a word that continues the previous
  question (``and``, ``or``, ``also``, ``what about``, ``how about``...), or holds a
  word that points back (``it``, ``that``, ``they``, ``them``, ``there``, ``one``...).
  The word lists are English; in other languages only the length rule applies.
- The **query** of a follow-up is the earlier questions from the last one that was not
  itself a follow-up (the topic) up to the previous one, at most ``MAX_EARLIER`` of them,
  then the turn itself, joined by spaces in the order they were asked. A turn that is
  not a follow-up, and every first turn or single question, is searched as it is.

Only the user's questions are used, never the answers: the query is the same whatever
the system answered, so retrieval scores compare across runs and answerers. The prompt
still carries the turn's own question; a model answerer sees the earlier turns as chat
messages.
"""

from __future__ import annotations

from collections.abc import Sequence

SHORT_WORDS = 4
MAX_EARLIER = 3

# Words that refer back to something said before (English).
POINTING = frozenset(
    "it its it's itself that those these this they them their theirs there then one ones "
    "he she him her his same such former latter above".split()
)
# Openings that continue the previous question rather than ask a new one (English).
CONTINUING = ("and", "or", "also", "but", "so", "plus", "then")
CONTINUING_PAIRS = (("what", "about"), ("how", "about"), ("what", "if"), ("same", "for"))


def is_follow_up(question: str) -> bool:
    """Whether ``question`` reads as a follow-up of what came before (the module's rule)."""
    from ragrail.text.tokens import tokens

    words = tokens(question)
    if len(words) <= SHORT_WORDS:
        return True
    if words[0] in CONTINUING or tuple(words[:2]) in CONTINUING_PAIRS:
        return True
    return any(w in POINTING for w in words)


def search_query(question: str, earlier: Sequence[str]) -> str:
    """What the pipeline searches for: ``question`` alone, or for a follow-up, the earlier
    questions it follows (``earlier``: the conversation's questions before it, in order)
    and then ``question``, as the module says."""
    if not earlier or not is_follow_up(question):
        return question
    start = len(earlier) - 1
    while start > 0 and is_follow_up(earlier[start]) and len(earlier) - start < MAX_EARLIER:
        start -= 1
    return " ".join(q.strip() for q in (*earlier[start:], question))
