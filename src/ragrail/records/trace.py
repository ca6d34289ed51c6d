"""What the system under test did for one question: the chunks it retrieved, its answer,
the calls it made; and where each fact retrieval missed really is."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, StrictBool, StrictFloat, StrictInt, StrictStr

from ragrail.records.base import Count, Rate
from ragrail.records.base import Model as _Model
from ragrail.text.matching import FactField

# One of a system's own settings: a scalar, as a flat JSON object holds it.
Setting = StrictBool | StrictInt | StrictFloat | StrictStr


class RetrievedChunk(_Model):
    id: str
    source: str
    rank: int = Field(ge=1, le=2**53)
    score: float
    text: str


class CallUsage(_Model):
    """One model call as the API reported it (tokens from its usage fields)."""

    input_tokens: Count | None = 0  # None: the server did not report usage
    output_tokens: Count | None = 0
    cost_usd: float | None = Field(default=None, ge=0.0)
    cached: bool = False
    attempts: Count = 0


class Sample(_Model):
    """A further answer to the same question (``--repeats``). A user's own system asked
    again may also say again which contexts it cited and whether it handed the question
    to a person; None: not said (the built-in pipeline's repeats never say)."""

    answer: str | None = None
    error: str | None = None
    latency_ms: float = Field(default=0.0, ge=0.0)
    usage: CallUsage | None = None
    cited: list[str] | None = Field(default=None, exclude_if=lambda c: c is None)
    escalated: bool | None = Field(default=None, exclude_if=lambda e: e is None)


class Stage(_Model):
    """One step of a retrieval pipeline (retrieve -> rerank -> ...): its name and the
    contexts it kept, in rank order. The last step's are usually the answer's contexts."""

    name: str
    contexts: list[RetrievedChunk] = Field(default_factory=list)


class Trace(_Model):
    """What the system under test did for one question."""

    case_id: str
    retrieved: list[RetrievedChunk] = Field(default_factory=list)
    prompt: str | None = None
    prompt_tokens: Count | None = None
    answer: str | None = None
    escalated: bool | None = Field(default=None, exclude_if=lambda e: e is None)  # it said so
    # the contexts (ids) the system says its answer used, as a LlamaIndex response's
    # source_nodes: scored as citations are (ragrail.scoring.answers.check_answer)
    cited: list[str] | None = Field(default=None, exclude_if=lambda c: c is None)
    error: str | None = None
    latency_ms: float = Field(default=0.0, ge=0.0)
    usage: CallUsage | None = None
    samples: list[Sample] = Field(default_factory=list)
    # the retrieval pipeline's steps, in order (ragrail.scoring.stages scores each)
    stages: list[Stage] = Field(default_factory=list, exclude_if=lambda s: not s)
    # What the system said about itself with this answer: its index's size in chunks and
    # its own settings ({"chunk_size": 512}). The run's config keeps them
    # (ragrail.run.system_config); never saved per question.
    index_size: Count | None = Field(default=None, exclude=True)
    settings: dict[str, Setting] | None = Field(default=None, exclude=True)

    def all_samples(self) -> list[Sample]:
        """The first answer and every repeat, in order."""
        first = Sample(
            answer=self.answer, error=self.error, latency_ms=self.latency_ms, usage=self.usage
        )
        return [first, *self.samples]


class Claim(_Model):
    text: str
    supported: bool
    reason: str = ""


class ArticleScores(_Model):
    """Ranking metrics at article level: the documents of the retrieved chunks
    (first occurrence kept) against the case's sources, cut at k."""

    precision_at_k: Rate | None = None
    recall_at_k: Rate | None = None
    success_at_k: Rate | None = None
    reciprocal_rank: Rate | None = None
    average_precision: Rate | None = None
    ndcg_at_k: Rate | None = None


class StageScores(_Model):
    """Retrieval scores of one stage's contexts, as the final contexts are scored
    (:mod:`ragrail.scoring.stages`); None where the case has no facts."""

    name: str
    n_contexts: Count = 0
    facts_retrieved: list[FactField] = Field(default_factory=list)
    hit: bool | None = None
    recall: Rate | None = None
    reciprocal_rank: Rate | None = None


class MissedFact(_Model):
    """Where a fact that retrieval missed actually is."""

    fact: FactField
    # cut: the fact's text is split between two chunks; sentence_split: it is whole in
    # chunks[0], but its sentence runs on into chunks[1]; across_sections: it runs from one
    # section chunk into the next
    where: Literal[
        "cut",
        "sentence_split",
        "across_sections",
        "below_k",
        "below_min_score",
        "not_in_sources",
        "not_in_corpus",
    ]
    chunks: list[str] = Field(default_factory=list)
    rank: int | None = None
    score: float | None = None
