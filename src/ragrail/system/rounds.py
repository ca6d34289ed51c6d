"""Conversations asked as a user would: turn by turn, each after the previous answer.

A golden conversation is one case per turn (``Case.conversation``, ``Case.turn``). The
system gets each turn with the conversation so far on a per-run copy of the case
(``Case.history``: each earlier turn's ``{"question", "answer"}``, the answers the system
itself gave). So the questions go in **rounds**: round k asks every conversation's turn k
together (single questions, and every first turn, in round 1), once every answer of
round k-1 is in. Within a round the system answers concurrently as before.

- **Repeats** (``--repeats N``): each repeat of a conversation follows its own answers:
  repeat r of turn k is asked with repeat r's answers to turns 1..k-1, as N users would
  each have had their own chat.
- An earlier turn whose call failed is in the history with an empty answer (the user
  saw no answer); the conversation goes on.
- The history holds the earlier turns asked in this run, in turn order: a golden set
  cut down to some of a conversation's turns gives the later ones only those.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ragrail.records.case import Case
from ragrail.records.trace import Trace

if TYPE_CHECKING:
    from ragrail.system.answerers.base import Answerer, AnswerRequest
    from ragrail.system.pipeline import Pipeline

History = tuple[tuple[str, str], ...]


def turns_of(case: Case) -> History:
    """The earlier turns a case carries (``Case.history``) as (question, answer) pairs."""
    return tuple((t.get("question", ""), t.get("answer", "")) for t in case.history)


def rounds(cases: Sequence[Case]) -> list[list[int]]:
    """The cases' indexes by round: round k holds every turn k (single questions are
    round 1), each round in golden-set order."""
    by_round: dict[int, list[int]] = {}
    for i, case in enumerate(cases):
        by_round.setdefault(case.turn or 1, []).append(i)
    return [by_round[k] for k in sorted(by_round)]


def answer_of(trace: Trace, repeat: int) -> str:
    """Repeat ``repeat``'s answer in ``trace`` ("" for none: a failed call). A question
    that never reached the answerer has one answer for every repeat."""
    if repeat == 0 or not trace.samples:
        return trace.answer or ""
    if repeat - 1 < len(trace.samples):
        return trace.samples[repeat - 1].answer or ""
    return ""


class _Said:
    """Each conversation's turns so far, per repeat: what the next turn is asked with."""

    def __init__(self, repeats: int) -> None:
        self.repeats = repeats
        self.turns: dict[tuple[str, int], list[tuple[str, str]]] = {}

    def history(self, case: Case, repeat: int) -> History:
        if case.conversation is None:
            return ()
        return tuple(self.turns.get((case.conversation, repeat), ()))

    def questions(self, case: Case) -> list[str]:
        return [q for q, _ in self.history(case, 0)]

    def add(self, case: Case, trace: Trace) -> None:
        if case.conversation is None:
            return
        for r in range(self.repeats):
            said = self.turns.setdefault((case.conversation, r), [])
            said.append((case.question, answer_of(trace, r)))


def with_history(case: Case, history: History) -> Case:
    """The per-run copy of ``case`` that carries ``history`` (a turn of a conversation;
    a single question is asked as it is)."""
    if case.conversation is None:
        return case
    turns = [{"question": q, "answer": a} for q, a in history]
    return case.model_copy(update={"history": turns})


def _in_rounds(
    cases: Sequence[Case], repeats: int, ask: Callable[[list[Case], _Said], list[Trace]]
) -> list[Trace]:
    """``ask`` each round's cases (with what was said so far); the traces in case order."""
    said = _Said(repeats)
    traces: list[Trace | None] = [None] * len(cases)
    for round_ in rounds(cases):
        part = [cases[i] for i in round_]
        for i, case, trace in zip(round_, part, ask(part, said), strict=True):
            traces[i] = trace
            said.add(case, trace)
    return [t for t in traces if t is not None]


def ask_in_rounds(system: Any, cases: Sequence[Case], repeats: int = 1) -> list[Trace]:
    """A user's own system (``traces(cases)``) asked every question, conversations in
    rounds (the module's rules), each ``repeats`` times (:func:`ask_repeatedly`)."""
    from ragrail.system.adapters.repeats import ask_repeatedly

    def ask(part: list[Case], said: _Said) -> list[Trace]:
        asked = [[with_history(c, said.history(c, r)) for c in part] for r in range(repeats)]
        return ask_repeatedly(system, asked[0], repeats, asked)

    return _in_rounds(cases, repeats, ask)


def run_in_rounds(
    pipeline: Pipeline, cases: Sequence[Case], answerer: Answerer, repeats: int = 1
) -> list[Trace]:
    """The built-in pipeline over every question, conversations in rounds: a turn is
    searched by :func:`ragrail.system.query.search_query` over its conversation's
    earlier questions, and answered with its earlier turns (``AnswerRequest.history``,
    each repeat its own)."""
    from ragrail.system.query import search_query

    def ask(part: list[Case], said: _Said) -> list[Trace]:
        ids, questions = [c.id for c in part], [c.question for c in part]
        queries = [search_query(c.question, said.questions(c)) for c in part]
        traces = pipeline.prepare(ids, questions, queries)
        by_id = {c.id: c for c in part}
        requests = [
            replace(r, history=said.history(by_id[r.case_id], r.repeat))
            for r in pipeline.requests(traces, questions, repeats)
        ]
        pipeline.record_answers(traces, requests, answerer.answer_all(requests))
        return traces

    return _in_rounds(cases, repeats, ask)


def search_queries(cases: Sequence[Case]) -> list[str]:
    """What the built-in pipeline searches for each case (in order): a turn's query from
    its conversation's earlier questions (:func:`ragrail.system.query.search_query`)."""
    from ragrail.system.query import search_query

    said, out = _Said(1), {}
    for i in (i for round_ in rounds(cases) for i in round_):
        out[i] = search_query(cases[i].question, said.questions(cases[i]))
        said.add(cases[i], Trace(case_id=cases[i].id))
    return [out[i] for i in range(len(cases))]


def with_first_histories(
    requests: Sequence[AnswerRequest], cases: Sequence[Case], traces: Sequence[Trace]
) -> list[AnswerRequest]:
    """``requests`` (re-asks of some questions: --rerun-failures) each with its
    conversation's earlier turns as the run's first answers gave them (``traces``: the
    run's, in ``cases`` order)."""
    said, history = _Said(1), {}
    for i in (i for round_ in rounds(cases) for i in round_):
        history[cases[i].id] = said.history(cases[i], 0)
        said.add(cases[i], traces[i])
    return [replace(r, history=history.get(r.case_id, ())) for r in requests]
