"""The project file (``ragrail.toml``): what to evaluate and how.

Paths in the file are relative to the file's own folder. Every setting can be
overridden by a CLI flag; the CLI merges flags over the file and hands the
library a resolved ``Project``.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from ragrail.errors import InputError
from ragrail.fileio import read_text
from ragrail.judge.config import JudgeConfig
from ragrail.scoring.answers import DEFAULT_ABSTAIN_PHRASES
from ragrail.scoring.behaviour import DEFAULT_ESCALATE_PHRASES, DEFAULT_REFUSE_PHRASES
from ragrail.scoring.checks import CheckSpec, error_field, resolve_functions
from ragrail.system.adapters.records import DEFAULT_TIMEOUT
from ragrail.system.defaults import DEFAULT_MIN_SCORE, DEFAULT_TOP_K

CONFIG_NAME = "ragrail.toml"
EXAMPLES_DIR = Path(__file__).parent / "examples"


class PipelineConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    chunk_words: int = Field(default=0, ge=0)
    top_k: int = Field(default=DEFAULT_TOP_K, ge=1)
    retriever: str = "standin"  # before min_score, whose scale it sets
    # On the retriever's own scale: standin 0-1, bm25 0 and up (unbounded), dense cosine,
    # hybrid 0-1 (reciprocal rank fusion of bm25 and dense: ragrail.system.hybrid).
    min_score: float = Field(default=DEFAULT_MIN_SCORE, ge=0.0, allow_inf_nan=False)
    # "dense": re-score the first stage's `candidates` best chunks by the dense cosine
    rerank: Literal["none", "dense"] = "none"
    candidates: int = Field(default=20, ge=1, le=10_000)  # the lists hybrid fuses or rerank reads
    # Stop words and stemming of the stand-in and BM25, and of the claim check and lint:
    # en, de, fr, es, hi, ja, auto (each word by its script) or none.
    language: str = "en"

    @field_validator("language")
    @classmethod
    def _language_is_known(cls, value: str) -> str:
        from ragrail.text.tokens import check_language

        return check_language(value)

    @field_validator("min_score")
    @classmethod
    def _min_score_on_the_retrievers_scale(cls, value: float, info: ValidationInfo) -> float:
        from ragrail.system.retrieval import min_score_problem

        problem = min_score_problem(info.data.get("retriever", "standin"), value)
        if problem is not None:
            raise ValueError(problem)
        return value


class AnswererConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Literal["standin", "anthropic", "openai"] = "standin"
    model: str | None = None
    base_url: str | None = None
    concurrency: int = Field(default=8, ge=1)
    timeout: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=4, ge=0)
    max_tokens: int = Field(default=512, ge=1)
    temperature: float | None = Field(default=None, ge=0.0)
    repeats: int = Field(default=1, ge=1, le=1000)  # as --repeats: a typo, not a plan
    # Rate limits (calls.limiter): requests and tokens per minute; None: no limit.
    rpm: float | None = Field(default=None, gt=0, allow_inf_nan=False, strict=True)
    tpm: float | None = Field(default=None, gt=0, allow_inf_nan=False, strict=True)
    batch: bool = False  # the calls as one provider batch, at its price (calls.batch)


class PriceConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0.0, description="USD per million input tokens")
    output: float = Field(ge=0.0, description="USD per million output tokens")


class SystemConfig(BaseModel):
    """The system under test: the built-in pipeline, a Python callable, an HTTP
    endpoint, or a precomputed outputs file."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["pipeline", "python", "http", "outputs"] = "pipeline"
    path: str | None = None  # outputs: the JSONL file
    target: str | None = None  # python: "package.module:function"
    url: str | None = None  # http: where to POST
    headers: dict[str, str] = Field(default_factory=dict)  # http: "${VAR}" reads the environment
    body: dict[str, Any] = Field(default_factory=dict)  # http: fixed fields sent with each question
    question_field: str = "question"  # http: where the question goes in the request body
    # http: where a turn of a conversation sends the earlier turns ("" sends none), as
    # [{"question", "answer"}] ("pairs") or [{"role", "content"}] chat messages ("chat")
    messages_field: str = "history"
    messages_format: Literal["pairs", "chat"] = "pairs"
    answer_field: str = "answer"  # http: dotted path to the answer in the reply
    contexts_field: str = "contexts"  # http: dotted path to the list of retrieved passages
    context_id_field: str = "id"
    context_source_field: str = "source"
    context_text_field: str = "text"
    context_score_field: str = "score"
    # http: dotted path to the reply's own true/false "I handed this to a person"; absent
    # in a reply: not said. "" reads no such field.
    escalated_field: str = "escalated"
    # http: dotted paths to what a reply may add (absent in a reply: not said; "" reads
    # nothing): the ids of the contexts its answer used, scored as citations; its
    # index's size in chunks; its own settings, a flat object ({"chunk_size": 512})
    cited_field: str = "cited"
    stages_field: str = "stages"  # http: the retrieval's steps, [{name, contexts}] in order
    index_size_field: str = "index_size"
    settings_field: str = "settings"
    # Seconds per question: a request (http), or one call of the function (python),
    # after which the question is an ERROR and the run moves on.
    timeout: float = Field(default=DEFAULT_TIMEOUT, gt=0)
    max_retries: int = Field(default=3, ge=0)
    concurrency: int = Field(default=8, ge=1)  # http, async python; sync python runs one at a time
    # python, http: ask each question this many times (as --repeats): answers that vary
    # from call to call are judged by the noise-aware gate (ragrail.diff.noise)
    repeats: int = Field(default=1, ge=1, le=1000)

    @model_validator(mode="after")
    def _kind_has_its_settings(self) -> SystemConfig:
        """Each kind's required setting, checked as the file loads (before any state is
        touched), not when the system is first built."""
        needs = {
            "outputs": ("path", 'path = "FILE.jsonl"'),
            "python": ("target", 'target = "package.module:function"'),
            "http": ("url", 'url = "http://..."'),
        }.get(self.kind)
        if needs is not None and not getattr(self, needs[0]):
            raise ValueError(f'[system] kind = "{self.kind}" needs {needs[1]}')
        if self.kind == "outputs" and self.repeats > 1:
            raise ValueError(
                "[system] repeats needs a system that can be asked again: an outputs file "
                "holds one answer per question"
            )
        if self.kind == "python" and self.target:
            module, _, func = self.target.partition(":")
            if not module or not func:
                raise ValueError(
                    f"system.target {self.target!r} must look like package.module:function"
                )
        return self

    @field_validator("url")
    @classmethod
    def _url_is_http(cls, url: str | None) -> str | None:
        """An unusable URL is a configuration error now, not a network failure per question."""
        from ragrail.calls.urls import url_problem

        problem = url_problem(url) if url is not None else None
        if problem is not None:
            raise ValueError(problem)
        return url


class ScoringConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    require_faithful: bool = False  # an unsupported claim fails the answer
    # Whether an answer must cite a source ([id] in its text, or the system's `cited`):
    # "auto" requires it unless no answer of the run cites anything (apps built on
    # LlamaIndex or LangChain defaults write no markers); see ragrail.scoring.citing.
    require_citation: StrictBool | Literal["auto"] = "auto"
    # Phrases an abstention opens with ("...X": ends its first sentence with X); they
    # replace the defaults (English, German, French, Spanish, Hindi, Japanese).
    abstain_phrases: list[str] = Field(default_factory=lambda: list(DEFAULT_ABSTAIN_PHRASES))
    # The same for refusals ("I can't help with that") and escalations ("I've escalated
    # this to our support team"); see ragrail.scoring.behaviour.
    refuse_phrases: list[str] = Field(default_factory=lambda: list(DEFAULT_REFUSE_PHRASES))
    escalate_phrases: list[str] = Field(default_factory=lambda: list(DEFAULT_ESCALATE_PHRASES))

    @field_validator("require_citation", mode="before")
    @classmethod
    def _true_false_or_auto(cls, value: object) -> object:
        if not isinstance(value, bool) and value != "auto":
            raise ValueError(f'must be true, false or "auto", not {value!r}')
        return value

    @field_validator("abstain_phrases", "refuse_phrases", "escalate_phrases")
    @classmethod
    def _phrases_not_blank(cls, value: list[str]) -> list[str]:
        from ragrail.text.matching import normalise

        for phrase in value:
            if not normalise(phrase).strip(" .…"):
                raise ValueError(f"{phrase!r} is not a phrase (empty once normalised)")
        return value


class ReportConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    metrics: bool = False  # print the per-question metrics table


class LogsConfig(BaseModel):
    """``[logs]``: where each field of a production-log row is (``ragrail logs ingest``).

    Each field is a dotted path into a JSON Lines row (``meta.user.id``, ``contexts.0.text``)
    or, in a CSV file, a column name (whose cells for contexts and turns hold JSON text).
    """

    model_config = ConfigDict(extra="forbid")

    format: Literal["auto", "jsonl", "csv"] = "auto"  # auto: by extension (.jsonl/.ndjson, .csv)
    id: str = "id"
    timestamp: str = "timestamp"
    timestamp_unit: Literal["s", "ms"] = "s"  # numeric timestamps; ISO 8601 strings read as such
    version: str = "version"
    user: str = "user"
    question: str = "question"
    answer: str = "answer"
    contexts: str = "contexts"
    context_id: str = "id"  # inside each context object
    context_source: str = "source"
    context_text: str = "text"
    thumbs: str = "thumbs"
    escalated: str = "escalated"
    resolved: str = "resolved"
    latency_ms: str = "latency_ms"
    tokens_in: str = "tokens_in"
    tokens_out: str = "tokens_out"
    cost: str = "cost"
    turns: str = "turns"  # follow-up questions, each an object or a string
    turn_question: str = "question"  # inside each turn object
    turn_timestamp: str = "timestamp"
    # Regular expressions for more personal data to redact ("[redacted]") before storing
    redact: list[str] = Field(default_factory=list)
    # Where the users' phone numbers written without a country code are dialled ("DE",
    # "US"): phonenumbers then reads their national formats whole, extension included.
    # Unset: any 7-12 digit number no context keeps is redacted anyway.
    region: str | None = None
    redact_ip: bool = False  # IPv4 addresses become [ip] (kept otherwise)
    # A re-ask: the same user asking a close paraphrase within this many minutes
    reask_minutes: float = Field(default=30.0, gt=0, allow_inf_nan=False)
    reask_similarity: float = Field(default=0.5, gt=0, le=1, allow_inf_nan=False)
    period: Literal["week", "day"] = "week"  # the signals' time buckets

    @field_validator(
        "id", "timestamp", "version", "user", "question", "answer", "contexts", "context_id",
        "context_source", "context_text", "thumbs", "escalated", "resolved", "latency_ms",
        "tokens_in", "tokens_out", "cost", "turns", "turn_question", "turn_timestamp",
    )  # fmt: skip
    @classmethod
    def _path_not_blank(cls, value: str) -> str:
        if not value or any(not part for part in value.split(".")):
            raise ValueError(f"{value!r} is not a field path (dotted names, none empty)")
        return value

    @field_validator("region")
    @classmethod
    def _known_region(cls, value: str | None) -> str | None:
        if value is None:
            return None
        from phonenumbers import SUPPORTED_REGIONS

        if value.upper() not in SUPPORTED_REGIONS:
            raise ValueError(f"{value!r} is not a region code phonenumbers knows (e.g. DE, US)")
        return value.upper()

    @field_validator("redact")
    @classmethod
    def _patterns_compile(cls, value: list[str]) -> list[str]:
        import re

        for pattern in value:
            try:
                compiled = re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"{pattern!r} is not a regular expression ({exc})") from None
            if compiled.search("") is not None:  # would "redact" between every character
                raise ValueError(f"{pattern!r} matches the empty string")
        return value


class RunTableConfig(BaseModel):
    """``[run]``: where the per-question work runs (``ragrail run --backend``)."""

    model_config = ConfigDict(extra="forbid")

    backend: Literal["local", "ray"] = "local"  # ray: the optional extra ragrail[ray]
    address: str | None = None  # the Ray cluster's (None: a Ray instance for the run)

    @field_validator("address")
    @classmethod
    def _address_not_blank(cls, value: str | None) -> str | None:
        from ragrail.calls.urls import address_problem

        if value is not None and not value.strip():
            raise ValueError("is empty; leave it out to start Ray on this machine")
        problem = address_problem(value) if value is not None else None
        if problem is not None:
            raise ValueError(problem)
        return value


class ProjectConfig(BaseModel):
    """The schema of ``ragrail.toml``."""

    model_config = ConfigDict(extra="forbid")

    name: str = "RAG bot"
    product: str = "our product"
    docs: str = "docs"
    golden: str = "golden.json"
    baseline: str = "baseline.json"
    pipeline: PipelineConfig = Field(default_factory=PipelineConfig)
    answerer: AnswererConfig = Field(default_factory=AnswererConfig)
    prices: dict[str, PriceConfig] = Field(default_factory=dict)
    system: SystemConfig = Field(default_factory=SystemConfig)
    scoring: ScoringConfig = Field(default_factory=ScoringConfig)
    report: ReportConfig = Field(default_factory=ReportConfig)
    checks: list[CheckSpec] = Field(default_factory=list)
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    logs: LogsConfig = Field(default_factory=LogsConfig)
    run: RunTableConfig = Field(default_factory=RunTableConfig)


class Project(BaseModel):
    """A loaded project file with its paths resolved."""

    model_config = ConfigDict(frozen=True)

    root: Path
    config: ProjectConfig
    config_path: Path | None = None

    @property
    def docs(self) -> Path:
        return self.root / self.config.docs

    @property
    def golden(self) -> Path:
        return self.root / self.config.golden

    @property
    def baseline(self) -> Path:
        return self.root / self.config.baseline

    @property
    def state_dir(self) -> Path:
        """Where the cache and run history live: ``.ragrail/`` beside the project file.

        A bundled example lives inside the installed package, so its state goes
        in the current folder instead.
        """
        if self.root.resolve().is_relative_to(EXAMPLES_DIR.resolve()):
            return Path.cwd() / ".ragrail"
        return self.root / ".ragrail"


def non_finite(data: Any, prefix: str = "") -> tuple[str, float] | None:
    """The first dotted key holding nan or inf (TOML allows both), or None."""
    import math

    if isinstance(data, float) and not math.isfinite(data):
        return prefix, data
    items: Any = ()
    if isinstance(data, dict):
        items = data.items()
    elif isinstance(data, list):
        items = enumerate(data)
    for key, value in items:
        found = non_finite(value, f"{prefix}.{key}" if prefix else str(key))
        if found is not None:
            return found
    return None


def load_config(path: Path) -> Project:
    # a BOM is how Windows editors save UTF-8; TOML itself does not allow one
    text = read_text(path, "config file").removeprefix("\ufeff")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"invalid TOML: {exc}", str(path)) from None
    except RecursionError:
        raise InputError(
            "invalid TOML: arrays or tables nested too deeply to read", str(path)
        ) from None
    found = non_finite(data)
    if found is not None:
        raise InputError(f"key {found[0]!r}: {found[1]} is not a finite number", str(path))
    try:
        config = ProjectConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = error_field(err["loc"])
        if err["type"] == "extra_forbidden":
            raise InputError(f"unknown key {key!r}", str(path)) from None
        msg = err["msg"].removeprefix("Value error, ")
        raise InputError(f"key {key!r}: {msg}", str(path)) from None
    # [[checks]] functions import now, from the project folder: a typo is exit 2 before any work
    try:
        resolve_functions(config.checks, path.parent)
    except InputError as exc:
        raise InputError(f"[[checks]]: {exc.message}", str(path)) from None
    return Project(root=path.parent, config=config, config_path=path)


def example_names() -> list[str]:
    return sorted(p.name for p in EXAMPLES_DIR.iterdir() if (p / CONFIG_NAME).is_file())


def example_dir(name: str) -> Path:
    folder = EXAMPLES_DIR / name
    if not (folder / CONFIG_NAME).is_file():
        raise InputError(
            f"no bundled example {name!r}; choose one of: {', '.join(example_names())}"
        )
    return folder
