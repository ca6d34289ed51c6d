"""The project file (``ragrail.toml``): what to evaluate and how.

Paths in the file are relative to the file's own folder. Every setting can be
overridden by a CLI flag; the CLI merges flags over the file and hands the
library a resolved ``Project``.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragrail.errors import InputError
from ragrail.fileio import read_text
from ragrail.judge import JudgeConfig
from ragrail.pipeline import DEFAULT_MIN_SCORE, DEFAULT_TOP_K
from ragrail.scoring.checks import CheckSpec

CONFIG_NAME = "ragrail.toml"
EXAMPLES_DIR = Path(__file__).parent / "examples"


class PipelineConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    chunk_words: int = Field(default=0, ge=0)
    top_k: int = Field(default=DEFAULT_TOP_K, ge=1)
    min_score: float = Field(default=DEFAULT_MIN_SCORE, ge=0.0, le=1.0)
    retriever: str = "standin"


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
    repeats: int = Field(default=1, ge=1)


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
    answer_field: str = "answer"  # http: dotted path to the answer in the reply
    contexts_field: str = "contexts"  # http: dotted path to the list of retrieved passages
    context_id_field: str = "id"
    context_source_field: str = "source"
    context_text_field: str = "text"
    context_score_field: str = "score"
    timeout: float = Field(default=30.0, gt=0)
    max_retries: int = Field(default=3, ge=0)
    concurrency: int = Field(default=8, ge=1)


class ScoringConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    require_faithful: bool = False  # an unsupported claim fails the answer


class ReportConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    metrics: bool = False  # print the per-question metrics table


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


def load_config(path: Path) -> Project:
    text = read_text(path, "config file")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"invalid TOML: {exc}", str(path)) from None
    try:
        config = ProjectConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            raise InputError(f"unknown key {key!r}", str(path)) from None
        raise InputError(f"key {key!r}: {err['msg']}", str(path)) from None
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
