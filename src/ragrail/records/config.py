"""What was run: a run's configuration, as its results and a baseline record it."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ragrail.records.base import Count, Model
from ragrail.records.trace import Setting as Setting


class RunConfig(Model):
    """What was run: enough to say what changed between two runs."""

    name: str
    chunking: str
    chunk_words: int | None = Field(default=None, ge=0)
    top_k: int = Field(ge=1)  # no upper bound: --top-k 10**21 is a (silly) valid run
    min_score: float
    retriever: str
    answerer: str
    answerer_label: str
    model: str | None = None
    repeats: int = Field(default=1, ge=1, le=2**53)
    n_chunks: Count  # a user's system: the distinct chunks its contexts held
    n_cases: Count
    # A user's system may report these (ragrail.run.system_config): its index's size in
    # chunks, and its own settings ({"chunk_size": 512, "top_k": 3}), shown when they change
    index_size: Count | None = Field(default=None, exclude_if=lambda n: n is None)
    settings: dict[str, Setting] = Field(default_factory=dict, exclude_if=lambda s: not s)
    # Whether an answer had to cite a source: "required" (every run before [scoring]
    # require_citation, and one that cites), "off" (require_citation = false) or
    # "none cited" ("auto", and no answer of the run cited anything)
    citations: Literal["required", "off", "none cited"] = Field(
        default="required", exclude_if=lambda c: c == "required"
    )

    def describe(self) -> str:
        return f"{self.chunking}, top_k={self.top_k}"
