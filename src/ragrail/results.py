"""Typed, versioned results: a trace per question, scores per question, a run.

Everything serialises to JSON with a stable field order (the order the fields
are declared here). Per-question scores are always kept; totals are derived.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragrail import __version__
from ragrail.errors import InputError
from ragrail.fileio import atomic_write_text, load_json

SCHEMA_VERSION = 1


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RetrievedChunk(_Model):
    id: str
    source: str
    rank: int
    score: float
    text: str


class CallUsage(_Model):
    """One model call as the API reported it (tokens from its usage fields)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    cached: bool = False
    attempts: int = 0


class Sample(_Model):
    """A further answer to the same prompt (``--repeats``)."""

    answer: str | None = None
    error: str | None = None
    latency_ms: float = 0.0
    usage: CallUsage | None = None


class Trace(_Model):
    """What the system under test did for one question."""

    case_id: str
    retrieved: list[RetrievedChunk] = Field(default_factory=list)
    prompt: str | None = None
    prompt_tokens: int | None = None
    answer: str | None = None
    error: str | None = None
    latency_ms: float = 0.0
    usage: CallUsage | None = None
    samples: list[Sample] = Field(default_factory=list)

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

    precision_at_k: float | None = None
    recall_at_k: float | None = None
    success_at_k: float | None = None
    reciprocal_rank: float | None = None
    average_precision: float | None = None
    ndcg_at_k: float | None = None


class MissedFact(_Model):
    """Where a fact that retrieval missed actually is."""

    fact: str
    where: Literal["cut", "below_k", "below_min_score", "not_in_sources", "not_in_corpus"]
    chunks: list[str] = Field(default_factory=list)
    rank: int | None = None
    score: float | None = None


class JudgeClaim(_Model):
    text: str
    supported: bool
    chunk: str | None = None


class CriterionResult(_Model):
    name: str
    passed: bool | None = None  # the majority verdict over repeats
    score: float | None = None  # the mean score, for 1-5 scales
    reason: str = ""
    verdicts: list[float] = Field(default_factory=list)  # per repeat: 1/0, or the score
    stable: bool = True  # every repeat gave the same verdict


class JudgeResult(_Model):
    """What the LLM judge said about one case."""

    faithfulness: float | None = None
    claims: list[JudgeClaim] = Field(default_factory=list)
    faithfulness_runs: list[float] = Field(default_factory=list)
    faithfulness_stable: bool = True
    criteria: list[CriterionResult] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)


class CaseResult(_Model):
    id: str
    question: str
    sources: list[str]
    facts: list[str]
    tags: list[str] = Field(default_factory=list)
    facts_retrieved: list[str] = Field(default_factory=list)
    retrieval_hit: bool | None = None
    retrieval_recall: float | None = None
    answer_pass: bool | None = None
    answer_runs: int = 0  # answers scored (1, or N with --repeats)
    answer_passes: int = 0
    problems: list[str] = Field(default_factory=list)
    context_precision: float | None = None
    context_average_precision: float | None = None
    reciprocal_rank: float | None = None
    correctness: float | None = None
    faithfulness: float | None = None
    claims: list[Claim] = Field(default_factory=list)
    articles: ArticleScores | None = None
    check_problems: list[str] = Field(default_factory=list)
    missed_facts: list[MissedFact] = Field(default_factory=list)
    cause: str | None = None
    cause_detail: str | None = None
    judge: JudgeResult | None = None
    trace: Trace

    @property
    def errored(self) -> bool:
        return any(s.error is not None for s in self.trace.all_samples())

    @property
    def answer_pass_rate(self) -> float | None:
        return self.answer_passes / self.answer_runs if self.answer_runs else None

    @property
    def flaky(self) -> bool:
        """Some repeats pass and some fail."""
        return 0 < self.answer_passes < self.answer_runs


class RunConfig(_Model):
    """What was run: enough to say what changed between two runs."""

    name: str
    chunking: str
    chunk_words: int | None = None
    top_k: int
    min_score: float
    retriever: str
    answerer: str
    answerer_label: str
    model: str | None = None
    repeats: int = 1
    n_chunks: int
    n_cases: int

    def describe(self) -> str:
        return f"{self.chunking}, top_k={self.top_k}"


class Stat(_Model):
    """A total with its n and 95% interval (Wilson for rates, bootstrap for means)."""

    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0


class Totals(_Model):
    n_cases: int
    n_retrieval: int  # cases with facts: the denominator of hit rate and recall
    hit_rate: float | None
    recall: float | None
    n_answers: int  # cases with a scored answer (errors excluded, and counted apart)
    answers_passed: int
    answer_pass_rate: float | None
    n_errors: int
    n_flaky: int = 0
    prompt_tokens_mean: float | None
    stats: dict[str, Stat] = Field(default_factory=dict)
    causes: dict[str, int] = Field(default_factory=dict)


class Usage(_Model):
    """Model calls of a run: made, served from the cache, failed; tokens and cost."""

    calls: int = 0
    cached: int = 0
    errors: int = 0
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0  # None when a model has no known price
    cached_cost_usd: float | None = 0.0


class RunResult(_Model):
    schema_version: int = SCHEMA_VERSION
    ragrail_version: str = __version__
    created_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    config: RunConfig
    totals: Totals
    usage: Usage | None = None  # None when no model was called (the stand-in)
    judge: str | None = None  # "provider model" of the LLM judge, when one ran
    judge_usage: Usage | None = None  # the judge's calls, apart from the answerer's
    judge_stats: dict[str, Stat] = Field(default_factory=dict)
    cases: list[CaseResult]

    def case(self, case_id: str) -> CaseResult | None:
        return next((c for c in self.cases if c.id == case_id), None)

    def to_json(self) -> str:
        return self.model_dump_json(indent=2) + "\n"

    def save(self, path: Path) -> None:
        atomic_write_text(path, self.to_json())


def load_run(path: Path, what: str = "baseline") -> RunResult:
    """Load a saved run (a baseline or ``--json`` output), validating its schema."""
    data = load_json(path, what)
    if not isinstance(data, dict):
        raise InputError(f"{what} must be a JSON object", str(path))
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise InputError(
            f"{what} has schema_version {version!r}; this ragrail reads {SCHEMA_VERSION}. "
            "Re-create it with --save-baseline",
            str(path),
        )
    try:
        return RunResult.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        raise InputError(f"{what} field {field!r}: {err['msg']}", str(path)) from None
