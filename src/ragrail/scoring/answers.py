"""Answer checks by code: facts present, citations valid, abstaining when it should.

``check_answer`` returns a list of problems; an empty list is a pass.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

_CITATION = re.compile(r"\[([^\[\]\s]+#\d+)\]")
_SPACE = re.compile(r"\s+")
_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"'})
ABSTAIN_MARKERS = ("don't know", "do not know")


def normalise(text: str) -> str:
    """Lower-case, curly quotes made straight (models often write a curly ’ in "don’t"),
    runs of whitespace made one space (so a fact wrapped across lines still matches)."""
    return _SPACE.sub(" ", text.translate(_QUOTES).lower())


def citations(answer: str) -> list[str]:
    """Chunk ids cited as ``[source#n]``, in order of appearance."""
    return _CITATION.findall(answer)


def abstains(answer: str) -> bool:
    text = normalise(answer)
    return any(marker in text for marker in ABSTAIN_MARKERS)


def missing_facts(facts: Sequence[str], answer: str) -> list[str]:
    text = normalise(answer)
    return [f for f in facts if normalise(f) not in text]


def check_answer(
    facts: Sequence[str],
    sources: Collection[str],
    answer: str,
    given_ids: Collection[str],
) -> list[str]:
    """Problems with an answer; [] is a pass.

    - no sources (the documents don't cover it): the answer must say it doesn't know;
    - otherwise every fact must appear (case-insensitive), every cited id must be a
      chunk the model was given, and at least one citation must point at a source
      article.
    """
    if not sources:
        return [] if abstains(answer) else ["should say it doesn't know"]
    problems = [f'missing "{fact}"' for fact in missing_facts(facts, answer)]
    cited = citations(answer)
    unknown = [cid for cid in cited if cid not in given_ids]
    if unknown:
        problems.append(f"cites a chunk it was never given ({', '.join(unknown)})")
    elif not cited:
        problems.append("no citation")
    elif not any(cid.split("#")[0] in sources for cid in cited):
        problems.append("wrong article cited")
    return problems


def answer_correctness(facts: Sequence[str], answer: str) -> float | None:
    """correctness = needed facts found in the answer / needed facts; None with no facts."""
    if not facts:
        return None
    return (len(facts) - len(missing_facts(facts, answer))) / len(facts)
