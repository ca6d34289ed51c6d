"""Why a question failed: a cause per failing case, and where missed facts really are.

Causes, in the order they are tried (the first that applies is the cause):

- ``error``: the system or model call failed;
- ``should have said it doesn't know``: an uncovered question got an answer;
- ``fact cut across chunks``: a needed fact is in a source article but split
  between two chunks, so no chunk contains it;
- ``retrieval miss``: a needed fact was not retrieved (ranked below k, below
  the minimum score, or absent);
- ``answer missed a retrieved fact``: every missing fact was retrieved, the
  answer left it out;
- ``wrong or unknown citation``; ``unsupported claim``; ``code check``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragrail.golden import Case
from ragrail.results import CaseResult, MissedFact
from ragrail.scoring.answers import normalise

if TYPE_CHECKING:
    from ragrail.pipeline import Pipeline

CAUSES = (
    "error",
    "should have said it doesn't know",
    "fact cut across chunks",
    "retrieval miss",
    "answer missed a retrieved fact",
    "wrong or unknown citation",
    "unsupported claim",
    "code check",
)


def locate_missed_facts(case: Case, found: Sequence[str], pipeline: Pipeline) -> list[MissedFact]:
    """For each fact retrieval missed: the chunk that holds it and its rank, or the
    two chunks it is cut across, or that it is not in the sources or the corpus."""
    missed = [f for f in case.facts if f not in found]
    if not missed:
        return []
    chunks = pipeline.chunks
    texts = [normalise(c.text) for c in chunks]
    scores = None
    out = []
    for fact in missed:
        needle = normalise(fact)
        holders = [
            i for i, c in enumerate(chunks) if c.source in case.sources and needle in texts[i]
        ]
        if holders:
            if scores is None:
                scores = pipeline.retriever.all_scores(case.question)
            ranks = {i: pipeline.retriever.rank_of(scores, i) for i in holders}
            best = min(holders, key=lambda i: ranks[i])
            score = round(float(scores[best]), 4)
            cut = _sentence_cut(chunks, texts, best, needle)
            if cut is not None:
                # The fact is whole, but the chunker cut its sentence: the fragment
                # holding it lost the words that would have matched the question.
                out.append(
                    MissedFact(fact=fact, where="cut", chunks=cut, rank=ranks[best], score=score)
                )
                continue
            below = score < pipeline.settings.min_score or score <= 0
            out.append(
                MissedFact(
                    fact=fact,
                    where="below_min_score" if below else "below_k",
                    chunks=[chunks[best].id],
                    rank=ranks[best],
                    score=score,
                )
            )
            continue
        cut = _cut_between(chunks, texts, case.sources, needle)
        if cut is not None:
            out.append(MissedFact(fact=fact, where="cut", chunks=cut))
        elif any(needle in t for t in texts):
            others = [chunks[i].id for i, t in enumerate(texts) if needle in t][:3]
            out.append(MissedFact(fact=fact, where="not_in_sources", chunks=others))
        else:
            out.append(MissedFact(fact=fact, where="not_in_corpus"))
    return out


_END = (".", "!", "?", ":")


def _sentence_cut(chunks, texts: list[str], i: int, needle: str) -> list[str] | None:
    """[previous, holder] or [holder, next] when the sentence holding the fact in chunk i
    runs over a chunk boundary of the same document; None when it is whole."""
    text = texts[i]
    at = text.find(needle)
    before, after = text[:at], text[at + len(needle) :]
    if i > 0 and chunks[i - 1].source == chunks[i].source:
        starts_inside = any(p in before for p in _END[:3])
        if not starts_inside and not texts[i - 1].rstrip().endswith(_END):
            return [chunks[i - 1].id, chunks[i].id]
    if i + 1 < len(chunks) and chunks[i + 1].source == chunks[i].source:
        ends_inside = any(p in after for p in _END[:3])
        if not ends_inside and not text.rstrip().endswith(_END):
            return [chunks[i].id, chunks[i + 1].id]
    return None


def _cut_between(chunks, texts: list[str], sources: Sequence[str], needle: str) -> list[str] | None:
    """The ids of two consecutive chunks of one source whose joined text holds the fact."""
    for i in range(len(chunks) - 1):
        a, b = chunks[i], chunks[i + 1]
        if a.source == b.source and a.source in sources and needle in f"{texts[i]} {texts[i + 1]}":
            return [a.id, b.id]
    return None


def describe_missed(m: MissedFact, min_score: float) -> str:
    if m.where == "cut" and m.rank is not None:
        return (
            f'"{m.fact}" lost its sentence: the chunker cut it between {m.chunks[0]} and '
            f"{m.chunks[1]}, and the fragment ranked {m.rank} (score {m.score:.2f})"
        )
    if m.where == "cut":
        return f'"{m.fact}" is cut between {m.chunks[0]} and {m.chunks[1]}'
    if m.where == "below_k":
        return f'"{m.fact}" is in {m.chunks[0]}, ranked {m.rank} (score {m.score:.2f})'
    if m.where == "below_min_score" and not m.score:
        return f'"{m.fact}" is in {m.chunks[0]}, which scores 0 for this question (no match)'
    if m.where == "below_min_score":
        return (
            f'"{m.fact}" is in {m.chunks[0]}, ranked {m.rank}, score {m.score:.2f} '
            f"below the {min_score:g} minimum"
        )
    if m.where == "not_in_sources":
        return f'"{m.fact}" is only in other articles ({", ".join(m.chunks)})'
    return f'"{m.fact}" is in no document'


def assign_cause(result: CaseResult, min_score: float = 0.0) -> None:
    """Set ``cause`` and ``cause_detail`` on a failing case (answer failed or errored)."""
    if not result.errored and result.answer_pass is not False:
        result.cause = result.cause_detail = None
        return
    if result.errored:
        result.cause, result.cause_detail = "error", None
        return
    if not result.sources:
        result.cause, result.cause_detail = "should have said it doesn't know", None
        return
    missing = [f for f in result.facts if f'missing "{f}"' in result.problems]
    unretrieved = [f for f in missing if f not in result.facts_retrieved]
    by_fact = {m.fact: m for m in result.missed_facts}
    if unretrieved:
        located = [by_fact[f] for f in unretrieved if f in by_fact]
        cut = [m for m in located if m.where == "cut"]
        if cut:
            result.cause = "fact cut across chunks"
            result.cause_detail = "; ".join(describe_missed(m, min_score) for m in cut)
        else:
            result.cause = "retrieval miss"
            result.cause_detail = "; ".join(describe_missed(m, min_score) for m in located) or (
                ", ".join(f'"{f}" not retrieved' for f in unretrieved)
            )
        return
    if missing:
        result.cause = "answer missed a retrieved fact"
        parts = []
        for fact in missing:
            where = _retrieved_rank(result, fact)
            parts.append(
                f'"{fact}" was retrieved at rank {where[0]} ({where[1]})' if where else f'"{fact}"'
            )
        result.cause_detail = "; ".join(parts)
        return
    if any("cite" in p or "citation" in p for p in result.problems):
        result.cause, result.cause_detail = "wrong or unknown citation", None
    elif any(p.startswith("unsupported claim") for p in result.problems):
        result.cause = "unsupported claim"
        result.cause_detail = "; ".join(
            f'"{c.text}": {c.reason}' for c in result.claims if not c.supported
        )
    elif result.check_problems:
        result.cause, result.cause_detail = "code check", "; ".join(result.check_problems)
    else:
        result.cause, result.cause_detail = "other", "; ".join(result.problems)


def _retrieved_rank(result: CaseResult, fact: str) -> tuple[int, str] | None:
    needle = normalise(fact)
    for chunk in result.trace.retrieved:
        if chunk.source in result.sources and needle in normalise(chunk.text):
            return chunk.rank, chunk.id
    return None
