"""The flags of ``ragrail run`` and ``ragrail demo`` (and the judge's call flags, which
``ragrail judge`` shares)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from ragrail.cli.common import OUT_PATH, FiniteFloat, json_option


def _not_blank(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """An empty value given on purpose (``--base-url ''``) is a mistake, not "use the default"."""
    if value is not None and not value.strip():
        raise click.BadParameter("is empty; leave the option out to use the default")
    return value


# A rate limit: a positive finite number of requests (or tokens) per minute.
RATE = FiniteFloat(min=0.0, min_open=True)

# The most answers per question a flag may ask for: a typo of 10**11 would otherwise build
# requests until memory runs out (or, with a paid model, spend without bound).
MAX_REPEATS = 1000


@dataclass
class RunOptions:
    config: Path | None
    docs: Path | None
    golden: Path | None
    baseline: Path | None
    top_k: int | None
    chunk_words: int | None
    min_score: float | None
    save_baseline: bool
    json_path: Path | None
    claude: bool
    answerer: str | None
    model: str | None
    base_url: str | None
    concurrency: int | None
    timeout: float | None
    max_retries: int | None
    max_tokens: int | None
    rpm: float | None
    tpm: float | None
    repeats: int | None
    rerun_failures: int
    no_cache: bool
    dry_run: bool
    example: str | None
    metrics: bool
    retriever: str | None
    junit: Path | None
    markdown: Path | None
    no_history: bool
    judge: str | None
    judge_model: str | None
    judge_base_url: str | None
    judge_repeats: int | None
    judge_concurrency: int | None
    judge_timeout: float | None
    judge_max_retries: int | None
    judge_rpm: float | None
    judge_tpm: float | None
    trust_unvalidated: bool
    backend: str | None = None  # --backend local|ray
    address: str | None = None  # --address: the Ray cluster's
    shard: Any = None  # ragrail.shards.Shard: --shard I/N


class ShardType(click.ParamType):
    """``I/N``: shard I of N (``ragrail.shards.parse_shard``)."""

    name = "I/N"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from ragrail.errors import InputError
        from ragrail.shards import Shard, parse_shard

        if isinstance(value, Shard):
            return value
        try:
            return parse_shard(str(value))
        except InputError as exc:
            self.fail(exc.message, param, ctx)


def judge_call_options() -> list[Any]:
    """How the judge calls its model; each defaults to [judge] in the config when written
    there, else to the run's own flag (--concurrency, --timeout, --max-retries, --rpm,
    --tpm)."""
    return [
        click.option(
            "--judge-concurrency",
            type=click.IntRange(min=1),
            metavar="N",
            help="Judge calls in flight at once (default: [judge] concurrency, else "
            "--concurrency, else 8).",
        ),
        click.option(
            "--judge-timeout",
            type=FiniteFloat(min=0.001),
            metavar="SECONDS",
            help="Per-call timeout of the judge (default: [judge] timeout, else --timeout, "
            "else 60).",
        ),
        click.option(
            "--judge-max-retries",
            type=click.IntRange(min=0),
            metavar="N",
            help="Retries of a failed or malformed judge call (default: [judge] max_retries, "
            "else --max-retries, else 2).",
        ),
        click.option(
            "--judge-rpm",
            type=RATE,
            metavar="N",
            help="Most judge requests per minute, retries included (default: [judge] rpm, "
            "else --rpm, else no limit).",
        ),
        click.option(
            "--judge-tpm",
            type=RATE,
            metavar="N",
            help="Most judge tokens per minute (default: [judge] tpm, else --tpm, else no limit).",
        ),
    ]


def run_options(func: Any) -> Any:
    path = click.Path(path_type=Path)
    out_path = OUT_PATH
    options = [
        click.option("--config", "-c", type=path, help="Project file (default: ./ragrail.toml)."),
        click.option("--docs", type=path, help="Folder of documents (Markdown, text or HTML)."),
        click.option(
            "--golden", "-g", type=path, help="Golden set file (JSON, JSONL, YAML or CSV)."
        ),
        click.option(
            "--baseline",
            "-b",
            type=path,
            help="Baseline to compare with and to --save-baseline to.",
        ),
        click.option(
            "--top-k",
            "-k",
            type=click.IntRange(min=1),
            metavar="K",
            help="Chunks search returns per question (default 3).",
        ),
        click.option(
            "--chunk-words",
            type=click.IntRange(min=0),
            metavar="N",
            help="Fixed N-word chunks instead of one per section (0: by section).",
        ),
        click.option(
            "--min-score",
            type=FiniteFloat(min=0.0),
            metavar="S",
            help="Chunks scoring below S are never returned (default 0.2), on the "
            "retriever's own scale: standin 0-1, bm25 0 and up (unbounded, often 0-20), "
            "dense -1 to 1 (cosine).",
        ),
        click.option(
            "--save-baseline",
            is_flag=True,
            help="Accept this run: write it as the new baseline (atomically).",
        ),
        json_option("the full results (every question, trace and score)"),
        click.option(
            "--claude",
            is_flag=True,
            help="Real answers from Claude: --answerer anthropic --model claude-opus-5.",
        ),
        click.option(
            "--answerer",
            type=click.Choice(["standin", "anthropic", "openai"]),
            help="Who answers: the offline stand-in (default), Claude, or any "
            "OpenAI-compatible server.",
        ),
        click.option("--model", metavar="NAME", help="Model name for --answerer."),
        click.option(
            "--base-url",
            metavar="URL",
            callback=_not_blank,
            help="API base URL (default: the SDK's, or ANTHROPIC_BASE_URL / OPENAI_BASE_URL).",
        ),
        click.option(
            "--concurrency",
            type=click.IntRange(min=1),
            metavar="N",
            help="Model calls in flight at once (default 8).",
        ),
        click.option(
            "--timeout",
            type=FiniteFloat(min=0.001),
            metavar="SECONDS",
            help="Per-call timeout (default 60).",
        ),
        click.option(
            "--max-retries",
            type=click.IntRange(min=0),
            metavar="N",
            help="Retries of a failed call: 429, 529, 5xx, timeouts, dropped "
            "connections (default 4).",
        ),
        click.option(
            "--max-tokens",
            type=click.IntRange(min=1),
            metavar="N",
            help="Longest answer, in tokens (default 512).",
        ),
        click.option(
            "--rpm",
            type=RATE,
            metavar="N",
            help="Most model requests per minute, retries included, spread evenly "
            "(default: [answerer] rpm, else no limit).",
        ),
        click.option(
            "--tpm",
            type=RATE,
            metavar="N",
            help="Most model tokens per minute: each request counts its prompt and "
            "max-tokens until its reply reports usage (default: [answerer] tpm, else no limit).",
        ),
        click.option(
            "--repeats",
            type=click.IntRange(min=1, max=MAX_REPEATS),
            metavar="N",
            help="Answer every question N times; cases that sometimes pass are flaky.",
        ),
        click.option(
            "--rerun-failures",
            type=click.IntRange(min=0, max=MAX_REPEATS),
            default=0,
            metavar="N",
            help="After the run, answer each failing question N more times and print the answers.",
        ),
        click.option(
            "--no-cache",
            is_flag=True,
            help="Call the models (answerer and judge) even for cached prompts, and encode "
            "every chunk again with the dense retriever (no cache is read or written).",
        ),
        click.option(
            "--dry-run",
            is_flag=True,
            help="Print the calls a model run would make and their estimated cost; send nothing.",
        ),
        click.option(
            "--example",
            metavar="NAME",
            help="Run a bundled example (kitebase, late-refund, multilingual) "
            "instead of ./ragrail.toml.",
        ),
        click.option(
            "--judge",
            type=click.Choice(["claude", "anthropic", "openai"]),
            help="Also grade answers with an LLM judge: claim-level faithfulness and the "
            "[judge] rubric (opt-in; default: off, or the config's [judge]). Its totals are "
            "corrected by the human labels of `ragrail judge validate` when stored, else "
            "marked uncorrected.",
        ),
        click.option(
            "--judge-model", metavar="NAME", help="The judge's model (claude: claude-opus-5)."
        ),
        click.option(
            "--judge-base-url", metavar="URL", callback=_not_blank, help="The judge's API base URL."
        ),
        click.option(
            "--judge-repeats",
            type=click.IntRange(min=1, max=MAX_REPEATS),
            metavar="N",
            help="Judge each case N times; criteria whose verdicts disagree are unstable.",
        ),
        *judge_call_options(),
        click.option(
            "--trust-unvalidated",
            is_flag=True,
            help="Let gated judge criteria fail answers without a stored validation.",
        ),
        click.option(
            "--junit",
            type=out_path,
            metavar="PATH",
            help="Write JUnit XML: one test case per question (for CI test reports).",
        ),
        click.option(
            "--markdown",
            type=out_path,
            metavar="PATH",
            help="Write a Markdown summary, regressions first (PR comment, job summary).",
        ),
        click.option(
            "--no-history", is_flag=True, help="Do not record this run in .ragrail/history.sqlite."
        ),
        click.option(
            "--backend",
            type=click.Choice(["local", "ray"]),
            help="Where the questions are answered and scored: here (local, default) or as "
            "Ray tasks (ray: needs ragrail[ray]); the results are the same (default: [run] backend).",
        ),
        click.option(
            "--address",
            metavar="ADDR",
            callback=_not_blank,
            help="The Ray cluster to join, host:port (default: [run] address, else a Ray "
            "instance started on this machine for the run).",
        ),
        click.option(
            "--retriever",
            type=click.Choice(["standin", "bm25", "dense"]),
            help="standin (word matching, default), bm25, or dense (needs ragrail[semantic]).",
        ),
        click.option(
            "--shard",
            type=ShardType(),
            metavar="I/N",
            help="Evaluate only shard I of N (0 to N-1; by a hash of each case id) and write "
            "its --json results for `ragrail merge`; compares, saves and records nothing.",
        ),
        click.option(
            "--metrics",
            is_flag=True,
            help="Also print per-question context precision, recall, MRR, faithfulness and "
            "correctness.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func
