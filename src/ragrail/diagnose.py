"""Why a question failed: a cause per failing case, and where missed facts really are.

Causes, in the order they are tried (the first that applies is the cause):

- ``error``: the system or model call failed;
- ``should have said it doesn't know``: an uncovered question got an answer;
- ``wrong behaviour``: a reply that should refuse or escalate did not, or one that
  should answer refused or escalated (``ragrail.scoring.behaviour``);
- ``fact split across chunks``: the fact's own text is cut between two chunks of a
  source article, so no chunk contains it;
- ``fact's sentence split from its context``: the fact is whole in one chunk, but
  the chunker cut the sentence holding it, and that chunk ranked too low (the
  words that would have matched the question went to the neighbouring chunk);
- ``retrieval miss``: a needed fact was not retrieved (ranked below k, below
  the minimum score, or absent); when the system's retrieval ran in stages
  (``Trace.stages``) and one of them held the fact, the detail names the stage and rank
  that had it and the stage that dropped it ("retrieved at rank 17 by bm25, dropped by
  rerank");
- ``answer missed a retrieved fact``: every missing fact was retrieved, the
  answer left it out;
- ``wrong or unknown citation``; ``unsupported claim``; ``code check``.

Only a fixed-size chunker cuts text. Section chunks (``chunk_words`` 0) are whole
sections, so neither split is ever said of them, even when a section's text does
not end with a full stop; a fact that runs from one section into the next is
reported as held by no single chunk.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal

from ragrail.records.case import Case
from ragrail.records.results import CaseResult, MissedFact
from ragrail.scoring.behaviour import expected_of
from ragrail.system.corpus import Chunk
from ragrail.text.matching import as_fact, find, find_all, normalise

if TYPE_CHECKING:
    from ragrail.system.pipeline import Pipeline

SPLIT_FACT = "fact split across chunks"
SPLIT_SENTENCE = "fact's sentence split from its context"

CAUSES = (
    "error",
    "should have said it doesn't know",
    "wrong behaviour",
    SPLIT_FACT,
    SPLIT_SENTENCE,
    "retrieval miss",
    "answer missed a retrieved fact",
    "wrong or unknown citation",
    "unsupported claim",
    "code check",
)

# A sentence ends at . ! ? (or their full-width forms) before a space or the end of the
# text, or at a CJK or Devanagari full stop anywhere.
_SENTENCE_END = re.compile(r"[.!?．！？](?=\s|$)|[。！？।॥]")
# A chunk that ends with one of these does not run on into the next one.
_CHUNK_END = (".", "!", "?", ":", "。", "！", "？", "．", "：", "।", "॥")


def locate_missed_facts(case: Case, found: Sequence[str], pipeline: Pipeline) -> list[MissedFact]:
    """For each fact retrieval missed: the chunk that holds it and its rank, or the
    two chunks it (or its sentence) is split between, or that it is not in the
    sources or the corpus."""
    missed = [f for f in case.facts if f not in found]
    if not missed:
        return []
    retriever = pipeline.retriever
    scores = None

    def ranked(i: int) -> tuple[int, float]:
        nonlocal scores
        if scores is None:
            scores = retriever.all_scores(case.question)
        return retriever.rank_of(scores, i), round(float(scores[i]), 4)

    return locate_facts(
        missed,
        case.sources,
        pipeline.chunks,
        ranked,
        pipeline.settings.min_score,
        cuts_text=bool(pipeline.settings.chunk_words),
    )


def locate_facts(
    facts: Sequence[str],
    sources: Sequence[str],
    chunks: Sequence[Chunk],
    ranked: Callable[[int], tuple[int, float]],  # chunk index -> (rank, score) for the question
    min_score: float,
    cuts_text: bool,
) -> list[MissedFact]:
    """Where each of ``facts`` is in a chunking. ``cuts_text`` says the chunks are
    consecutive pieces of each document (a fixed-size chunker), so a chunk boundary
    may cut a sentence or a fact; section chunks never cut anything."""
    texts = [normalise(c.text) for c in chunks]
    out = []
    for fact in map(as_fact, facts):
        holders = [
            i
            for i, c in enumerate(chunks)
            if c.source in sources and find(fact, texts[i]) is not None
        ]
        if holders:
            ranks = {i: ranked(i) for i in holders}
            best = min(holders, key=lambda i: ranks[i][0])
            rank, score = ranks[best]
            split = sentence_split(chunks, texts, best, fact) if cuts_text else None
            if split is not None:
                out.append(
                    MissedFact(
                        fact=fact, where="sentence_split", chunks=split, rank=rank, score=score
                    )
                )
                continue
            below = score < min_score or score <= 0
            out.append(
                MissedFact(
                    fact=fact,
                    where="below_min_score" if below else "below_k",
                    chunks=[chunks[best].id],
                    rank=rank,
                    score=score,
                )
            )
            continue
        across = fact_split(chunks, texts, sources, fact)
        if across is not None:
            where: Literal["cut", "across_sections"] = "cut" if cuts_text else "across_sections"
            out.append(MissedFact(fact=fact, where=where, chunks=across))
        elif any(find(fact, t) is not None for t in texts):
            others = [chunks[i].id for i, t in enumerate(texts) if find(fact, t) is not None][:3]
            out.append(MissedFact(fact=fact, where="not_in_sources", chunks=others))
        else:
            out.append(MissedFact(fact=fact, where="not_in_corpus"))
    return out


def _ends_sentence(text: str) -> bool:
    return text.rstrip().endswith(_CHUNK_END)


def sentence_split(
    chunks: Sequence[Chunk], texts: Sequence[str], i: int, fact: str
) -> list[str] | None:
    """[holder, neighbour] when the sentence holding the fact, which is whole in chunk
    ``i`` (the holder), runs over a boundary into the previous or next chunk of the same
    document; None when the sentence is whole. For fixed-size chunks only: ``texts``
    are the chunks' normalised texts, consecutive pieces of each document."""
    text = texts[i]
    span = find(fact, text)
    if span is None:
        return None
    before, after = text[: span[0]], text[span[1] :]
    # The sentence began in the previous chunk: none ends before the fact here, and the
    # previous chunk does not end with one.
    prev = i - 1
    if (
        prev >= 0
        and chunks[prev].source == chunks[i].source
        and not _SENTENCE_END.search(before)
        and not _ends_sentence(texts[prev])
    ):
        return [chunks[i].id, chunks[prev].id]
    nxt = i + 1
    if (
        nxt < len(chunks)
        and chunks[nxt].source == chunks[i].source
        and not _SENTENCE_END.search(after)
        and not _ends_sentence(text)
    ):
        return [chunks[i].id, chunks[nxt].id]
    return None


def fact_split(
    chunks: Sequence[Chunk], texts: Sequence[str], sources: Sequence[str], fact: str
) -> list[str] | None:
    """The ids of two consecutive chunks of one source article whose boundary cuts the
    fact itself: it is found in their joined text, across the join, and in neither."""
    for i in range(len(chunks) - 1):
        a, b = chunks[i], chunks[i + 1]
        if a.source != b.source or a.source not in sources:
            continue
        joined = f"{texts[i]} {texts[i + 1]}"
        cut_at = len(texts[i])
        if any(start < cut_at < end for start, end in find_all(fact, joined)):
            return [a.id, b.id]
    return None


def describe_missed(m: MissedFact, min_score: float) -> str:
    if m.where == "sentence_split":
        return (
            f'"{m.fact}" is whole in {m.chunks[0]}, ranked {m.rank} (score {m.score:.2f}), '
            f"but the chunker cut its sentence, leaving part of it in {m.chunks[1]}"
        )
    if m.where == "cut" and m.rank is not None:  # recorded before the two were told apart
        return (
            f'"{m.fact}" lost its sentence: the chunker cut it between {m.chunks[0]} and '
            f"{m.chunks[1]}, and the fragment ranked {m.rank} (score {m.score:.2f})"
        )
    if m.where == "cut":
        return f'"{m.fact}" is split between {m.chunks[0]} and {m.chunks[1]}'
    if m.where == "across_sections":
        return (
            f'"{m.fact}" runs from {m.chunks[0]} into {m.chunks[1]}, so no section '
            "chunk holds it whole"
        )
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


# an answer case's first problem when its reply refused or escalated
_MISBEHAVED = (["escalated instead of answering"], ["refused instead of answering"])


def assign_cause(
    result: CaseResult,
    min_score: float = 0.0,
    normalised: Callable[[str], str] = normalise,
) -> None:
    """Set ``cause`` and ``cause_detail`` on a failing case (answer failed or errored).
    ``normalised``: how a chunk's text is normalised (a run's memo of
    :func:`~ragrail.text.matching.normalise`, ``ScoringOptions.cache.memoised``)."""
    if not result.errored and result.answer_pass is not False:
        result.cause = result.cause_detail = None
        return
    if result.errored:
        result.cause, result.cause_detail = "error", None
        return
    expected = expected_of(result.sources, result.expect)
    if expected in ("refuse", "escalate") or result.problems[:1] in _MISBEHAVED:
        result.cause, result.cause_detail = "wrong behaviour", "; ".join(result.problems)
        return
    if expected == "abstain":
        result.cause, result.cause_detail = "should have said it doesn't know", None
        return
    missing = [f for f in result.facts if f'missing "{f}"' in result.problems]
    unretrieved = [f for f in missing if f not in result.facts_retrieved]
    by_fact = {m.fact: m for m in result.missed_facts}
    lost = _stage_losses(result, unretrieved, normalised)
    if lost:  # a stage of the system's retrieval held the fact and a later one dropped it
        result.cause = "retrieval miss"
        result.cause_detail = "; ".join(
            f'"{f}" {lost[str(f)]}'
            if str(f) in lost
            else describe_missed(by_fact[f], min_score)
            if f in by_fact
            else f'"{f}" not retrieved'
            for f in unretrieved
        )
        return
    if unretrieved:
        located = [by_fact[f] for f in unretrieved if f in by_fact]
        split = [m for m in located if m.where == "cut" and m.rank is None]
        sentence = [
            m for m in located if m.where == "sentence_split" or (m.where == "cut" and m.rank)
        ]
        if split:
            result.cause = SPLIT_FACT
            result.cause_detail = "; ".join(describe_missed(m, min_score) for m in split)
        elif sentence:
            result.cause = SPLIT_SENTENCE
            result.cause_detail = "; ".join(describe_missed(m, min_score) for m in sentence)
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
            where = _retrieved_rank(result, fact, normalised)
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


def _stage_losses(
    result: CaseResult, facts: Sequence[str], normalised: Callable[[str], str]
) -> dict[str, str]:
    """For each of ``facts`` some retrieval stage held: where it was, and which stage
    dropped it (:func:`ragrail.scoring.stages.where_lost`)."""
    stages = result.trace.stages
    if not stages or not facts:
        return {}
    from ragrail.scoring.stages import where_lost

    out = {}
    for fact in facts:
        where = where_lost(fact, result.sources, stages, normalised)
        if where is not None:
            out[str(fact)] = where
    return out


def _retrieved_rank(
    result: CaseResult, fact: str, normalised: Callable[[str], str] = normalise
) -> tuple[int, str] | None:
    for chunk in result.trace.retrieved:
        if chunk.source in result.sources and find(fact, normalised(chunk.text)) is not None:
            return chunk.rank, chunk.id
    return None
