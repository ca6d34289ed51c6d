"""The judge's settings (``[judge]``), its prompt files, and what identifies a judge
(the key a validation vouches for)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ragrail.errors import InputError

PROMPTS_DIR = Path(__file__).parent.parent / "judge_prompts"
PROMPT_NAMES = ("claims", "rubric", "pairwise")


class CriterionConfig(BaseModel):
    """One rubric criterion: pass/fail, or a 1-5 scale that passes at ``pass_threshold``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    scale: Literal["pass_fail", "1-5"] = "pass_fail"
    pass_threshold: int = Field(default=4, ge=1, le=5)
    gate: bool = False  # a failing verdict fails the answer (needs a validated judge)


class JudgeConfig(BaseModel):
    """``[judge]`` in ragrail.toml. Writing the table (with a provider) turns the judge on."""

    model_config = ConfigDict(extra="forbid")

    provider: Literal["anthropic", "openai"] | None = None
    model: str | None = None
    base_url: str | None = None
    concurrency: int = Field(default=8, ge=1)
    timeout: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=2, ge=0)
    max_tokens: int = Field(default=1024, ge=1)
    temperature: float | None = Field(default=0.0, ge=0.0)
    repeats: int = Field(default=1, ge=1, le=1000)  # as --repeats: a typo, not a plan
    # Rate limits of the judge's calls (calls.limiter); None: no limit.
    rpm: float | None = Field(default=None, gt=0, allow_inf_nan=False, strict=True)
    tpm: float | None = Field(default=None, gt=0, allow_inf_nan=False, strict=True)
    batch: bool = False  # the calls as one provider batch, at its price (calls.batch)
    faithfulness: bool = True  # claim-level faithfulness by the judge
    criteria: list[CriterionConfig] = Field(default_factory=list)
    min_kappa: float = Field(default=0.6, ge=-1.0, le=1.0)
    prompts_dir: str | None = None  # a folder with claims.txt / rubric.txt / pairwise.txt

    @model_validator(mode="after")
    def _criteria_named_once(self) -> JudgeConfig:
        # a verdict, a validation and a total are found by the criterion's name
        seen: set[str] = set()
        for c in self.criteria:
            if c.name == "faithfulness":
                raise ValueError(
                    "criteria: 'faithfulness' is the claim-level judge's name "
                    "([judge] faithfulness = true); give the rubric criterion another name"
                )
            if c.name in seen:
                raise ValueError(f"criteria: {c.name!r} is defined twice")
            seen.add(c.name)
        return self


@dataclass(frozen=True)
class Prompts:
    claims: str
    rubric: str
    pairwise: str

    @classmethod
    def load(cls, folder: Path | None = None) -> Prompts:
        """The package's prompts, each replaced by ``folder/NAME.txt`` when that exists."""
        texts = {}
        for name in PROMPT_NAMES:
            custom = folder / f"{name}.txt" if folder else None
            path = (
                custom if custom is not None and custom.is_file() else PROMPTS_DIR / f"{name}.txt"
            )
            texts[name] = path.read_text(encoding="utf-8")
        if folder is not None and not folder.is_dir():
            raise InputError("judge.prompts_dir: folder not found", str(folder))
        return cls(**texts)


def judge_key(provider: str, model: str, prompt: str, criterion: CriterionConfig | None) -> str:
    """What a validation vouches for: this model, this prompt, this criterion's definition."""
    payload = json.dumps(
        {
            "provider": provider,
            "model": model,
            "prompt": prompt,
            "criterion": criterion.model_dump() if criterion else "faithfulness",
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def model_family(model: str | None) -> str | None:
    """A coarse model family, to warn when a judge grades its own family's answers."""
    if not model:
        return None
    m = model.lower()
    for family, prefixes in (
        ("claude", ("claude",)),
        ("gpt", ("gpt", "o1", "o3", "o4", "chatgpt")),
        ("gemini", ("gemini",)),
        ("llama", ("llama", "meta-llama")),
        ("mistral", ("mistral", "mixtral", "codestral")),
        ("qwen", ("qwen",)),
    ):
        if m.startswith(prefixes) or any(f"/{p}" in m for p in prefixes):
            return family
    return re.split(r"[-_:/.]", m)[0]


def criteria_text(criteria: Sequence[CriterionConfig]) -> str:
    lines = []
    for c in criteria:
        scale = "pass/fail" if c.scale == "pass_fail" else "score 1-5"
        lines.append(f"- {c.name} ({scale}): {c.description}")
    return "\n".join(lines)
