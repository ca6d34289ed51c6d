"""Asking a user's own system each question more than once (``--repeats``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragrail.errors import InputError
from ragrail.records.case import Case
from ragrail.records.trace import Sample, Trace


def ask_repeatedly(
    system: Any,
    cases: Sequence[Case],
    repeats: int,
    asked: Sequence[Sequence[Case]] | None = None,
) -> list[Trace]:
    """Each question asked ``repeats`` times, all in one ``traces`` call (so an HTTP
    service or an async function answers them concurrently): the first answer is the
    trace, its retrieval is the one scored; the others are its ``samples``, each answer
    checked against the first call's contexts with its own citations and hand-off flag.
    A system whose retrieval varies from call to call is scored on its first call's.
    ``asked``: the cases as put to the system in each repeat, in ``cases`` order (a turn
    of a conversation carries that repeat's own history); by default ``cases`` each time."""
    if asked is None:
        asked = [cases] * max(repeats, 1)
    if repeats <= 1:
        return list(system.traces(list(asked[0])))
    n = len(cases)
    every = list(system.traces([c for batch in asked for c in batch]))
    if len(every) != n * repeats:
        raise InputError(
            f"the system returned {len(every)} traces for {n * repeats} questions asked"
        )
    traces = every[:n]
    for i, trace in enumerate(traces):
        trace.samples = [
            Sample(
                answer=t.answer,
                error=t.error,
                latency_ms=t.latency_ms,
                usage=t.usage,
                cited=t.cited,
                escalated=t.escalated,
            )
            for t in every[n + i :: n]
        ]
    return traces
