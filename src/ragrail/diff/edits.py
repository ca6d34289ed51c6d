"""Questions whose facts were edited in the golden set since the baseline.

A question's recall, its answer's verdict and its correctness are fractions of its facts:
a fact added, renamed or removed moves them with no change to the system (a fact added
that the app never retrieved takes the recall from 1/2 to 1/3). So such a question is
compared fact by fact, by label, as everything else is per check: a fact that retrieval
found, or the answer held, in the baseline and that is still one of the question's facts
is a regression when it is lost now; a fact the baseline did not have cannot be lost, as
a question the baseline did not have cannot. What the edit alone moved (the recall, the
verdict, correctness) is no line; the diff lists the question as edited, and a failure
it brings is an expected one (``ragrail.diff.known_failures``), as a new question's is.

What a baseline says of a question's facts: a whole saved run, their labels; a compact
one (version 3), their labels as its answers' checks (``fact: <label>``) and the labels
retrieval found; version 2, only how many there were.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragrail.records.results import FACT, CaseResult

if TYPE_CHECKING:
    from ragrail.diff.lines import BaselineCaseLike


def edited(old: BaselineCaseLike, new: CaseResult) -> bool:
    """Whether ``new``'s facts differ from those the baseline's question had (their
    order aside), as far as the baseline says (see the module docstring)."""
    if isinstance(old, CaseResult):
        if old.facts == new.facts:  # the common case, decided fast
            return False
        return sorted(str(f) for f in old.facts) != sorted(str(f) for f in new.facts)
    if old.facts != len(new.facts):
        return True
    # as many facts: edited when one the baseline names is not among them (renamed).
    # An answered question's fact checks name its facts, and the same check names on both
    # sides are the same labels (most questions, decided fast); else the facts found
    checks, found = old.checks, old.found
    named: list[str] = []
    if checks:
        if checks.keys() == new.checks.keys():
            return False
        named = [n[len(FACT) :] for n in checks if n.startswith(FACT)]
    if not named and found and found != new.facts_retrieved:  # a Fact equals its label
        named = found
    return bool(named) and not {str(f) for f in new.facts}.issuperset(named)
