"""The flags of a run, declared once.

Each :class:`Flag` of :data:`RUN_FLAGS` is one flag of ``ragrail run`` and ``ragrail demo``,
in the order ``--help`` lists them: what it takes, its help, its bounds. From this table

- the CLI makes its click options (``ragrail.cli.run_options``; ``sweep``, ``merge`` and
  ``judge`` take the ones they share from it too), and with them the environment
  variables ``RAGRAIL_RUN_<NAME>``;
- :class:`Overrides` takes the flags marked ``OVERRIDES``: :meth:`Overrides.of` keeps
  them and nothing else;
- the Python API's ``evaluate(**overrides)`` checks its keywords (:func:`check_keywords`)
  against the same bounds the click options enforce.

How the overrides and the project file then combine is :mod:`ragrail.settings`. A new run
flag is a row here and, when it overrides a setting, a field of :class:`Overrides`
(``tests/test_flags.py`` keeps the two in step).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

from ragrail.errors import InputError

#: What a flag takes: ``on`` a switch; ``int`` a whole number; ``number`` a finite
#: number; ``choice`` one of ``choices``; ``text`` a string; ``path`` a file or folder
#: read; ``output`` a file written; ``shard`` ``I/N``.
Kind = Literal["on", "int", "number", "choice", "text", "path", "output", "shard"]

#: Where a flag's value goes: an :class:`Overrides` field of its name, or the command's
#: own (which project, which outputs, what to print).
OVERRIDES, COMMAND = "overrides", "command"

# The most answers per question a flag may ask for: a typo of 10**11 would otherwise build
# requests until memory runs out (or, with a paid model, spend without bound).
MAX_REPEATS = 1000


@dataclass(frozen=True)
class Flag:
    """One run flag: ``name`` is its keyword and field (``top_k``, the flag ``--top-k``)."""

    name: str
    kind: Kind
    help: str
    short: str = ""  # "-k"
    metavar: str | None = None
    low: float | None = None  # int, number: the least value
    above: bool = False  # number: strictly above ``low``
    high: int | None = None  # int: the most
    choices: tuple[str, ...] = ()
    default: Any = None
    blank_ok: bool = True  # text: False refuses an empty value on the command line
    option: str = ""  # the flag when not --name-with-dashes
    sets: str = OVERRIDES
    key: str = ""  # the project-file key it overrides, when there is one
    api: str | None = None  # an override evaluate() takes no keyword for: why not

    @property
    def flag(self) -> str:
        return self.option or "--" + self.name.replace("_", "-")

    @property
    def keyword(self) -> bool:
        """Whether ``evaluate()`` takes it as a keyword argument."""
        return self.sets == OVERRIDES and self.api is None

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is no value for this flag given as a keyword, or None (None
        itself keeps the project file's setting)."""
        if value is None:
            return None
        if self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, int) or value < (self.low or 0):
                return f"must be a whole number >= {self.low or 0:g}"
            if self.high is not None and value > self.high:
                return f"must be a whole number from {self.low or 0:g} to {self.high}"
        elif self.kind == "number":
            if isinstance(value, bool) or not isinstance(value, int | float):
                return "must be a number"
            low = self.low or 0.0
            if not math.isfinite(value) or value < low or (self.above and value == low):
                return f"must be a finite number {'>' if self.above else '>='} {low:g}"
        elif self.kind == "choice":
            if value not in self.choices:
                return f"must be one of {', '.join(self.choices)}"
        elif self.kind == "text":
            if not isinstance(value, str) or not value.strip():
                return "must be a non-empty string"
        elif self.kind == "on" and not isinstance(value, bool):
            return "must be True or False"
        return None


_COUNT: dict[str, Any] = {"kind": "int", "metavar": "N"}
_RATE: dict[str, Any] = {"kind": "number", "metavar": "N", "low": 0.0, "above": True}
_TIMEOUT: dict[str, Any] = {"kind": "number", "metavar": "SECONDS", "low": 0.001}
_REPEATS: dict[str, Any] = {"kind": "int", "metavar": "N", "low": 1, "high": MAX_REPEATS}
_GIVEN = "given as evaluate()'s own parameter"

# fmt: off
RUN_FLAGS: tuple[Flag, ...] = (
    Flag("config", "path", "Project file (default: ./ragrail.toml).", short="-c", sets=COMMAND),
    Flag("docs", "path", "Folder of documents (Markdown, text or HTML).", api=_GIVEN),
    Flag("golden", "path", "Golden set file (JSON, JSONL, YAML or CSV).", short="-g",
        api="give the golden set as the first argument"),
    Flag("baseline", "path", "Baseline to compare with and to --save-baseline to.", short="-b",
        api=_GIVEN),
    Flag("top_k", "int", "Chunks search returns per question (default 3).", short="-k",
        metavar="K", low=1, key="pipeline.top_k"),
    Flag("chunk_words", "int", "Fixed N-word chunks instead of one per section (0: by section).",
        metavar="N", low=0, key="pipeline.chunk_words"),
    Flag("min_score", "number", "Chunks scoring below S are never returned (default 0.2), on the "
        "retriever's own scale: standin 0-1, bm25 0 and up (unbounded, often 0-20), dense -1 to "
        "1 (cosine), hybrid 0-1 (fused ranks).", metavar="S", low=0.0, key="pipeline.min_score"),
    Flag("save_baseline", "on", "Accept this run: write it as the new baseline (atomically).",
        sets=COMMAND),
    Flag("json_path", "output", "Write the full results (every question, trace and score) as "
        "JSON to PATH, or to standard output with `--json -`.", option="--json",
        metavar="PATH|-", sets=COMMAND),
    Flag("claude", "on", "Real answers from Claude: --answerer anthropic --model claude-opus-5."),
    Flag("answerer", "choice", "Who answers: the offline stand-in (default), Claude, or any "
        "OpenAI-compatible server.", choices=("standin", "anthropic", "openai"),
        key="answerer.name"),
    Flag("model", "text", "Model name for --answerer.", metavar="NAME", key="answerer.model"),
    Flag("base_url", "text", "API base URL (default: the SDK's, or ANTHROPIC_BASE_URL / "
        "OPENAI_BASE_URL).", metavar="URL", blank_ok=False, key="answerer.base_url"),
    Flag("concurrency", help="Model calls in flight at once (default 8).", low=1,
        key="answerer.concurrency", **_COUNT),
    Flag("timeout", help="Per-call timeout (default 60).", key="answerer.timeout", **_TIMEOUT),
    Flag("max_retries", help="Retries of a failed call: 429, 529, 5xx, timeouts, dropped "
        "connections (default 4).", low=0, key="answerer.max_retries", **_COUNT),
    Flag("max_tokens", help="Longest answer, in tokens (default 512).", low=1,
        key="answerer.max_tokens", **_COUNT),
    Flag("rpm", help="Most model requests per minute, retries included, spread evenly "
        "(default: [answerer] rpm, else no limit).", key="answerer.rpm", **_RATE),
    Flag("tpm", help="Most model tokens per minute: each request counts its prompt and "
        "max-tokens until its reply reports usage (default: [answerer] tpm, else no limit).",
        key="answerer.tpm", **_RATE),
    Flag("repeats", help="Answer every question N times; cases that sometimes pass are flaky.",
        key="answerer.repeats", **_REPEATS),
    Flag("rerun_failures", "int", "After the run, answer each failing question N more times and "
        "print the answers.", metavar="N", low=0, high=MAX_REPEATS, default=0,
        api="re-runs print their answers: use `ragrail run --rerun-failures N`"),
    Flag("batch", "on", "Send the model calls (answers and judge) as one provider batch "
        "(Anthropic Message Batches, OpenAI Batch API) at half the price; waits for it, and "
        "a restart picks up the same batch (default: [answerer] batch, [judge] batch)."),
    Flag("no_cache", "on", "Call the models (answerer and judge) even for cached prompts, and "
        "encode every chunk again with the dense retriever (no cache is read or written)."),
    Flag("dry_run", "on", "Print the calls a model run would make and their estimated cost; "
        "send nothing.",
        api="a dry run prints a plan: use `ragrail run --dry-run`"),
    Flag("example", "text", "Run a bundled example (kitebase, kitebase-chat, late-refund, multilingual) "
        "instead of ./ragrail.toml.", metavar="NAME", sets=COMMAND),
    Flag("judge", "choice", "Also grade answers with an LLM judge: claim-level faithfulness and "
        "the [judge] rubric (opt-in; default: off, or the config's [judge]). Its totals are "
        "corrected by the human labels of `ragrail judge validate` when stored, else marked "
        "uncorrected.", choices=("claude", "anthropic", "openai"), key="judge.provider"),
    Flag("judge_model", "text", "The judge's model (claude: claude-opus-5).", metavar="NAME",
        key="judge.model"),
    Flag("judge_base_url", "text", "The judge's API base URL.", metavar="URL", blank_ok=False,
        key="judge.base_url"),
    Flag("judge_repeats", help="Judge each case N times; criteria whose verdicts disagree are "
        "unstable.", key="judge.repeats", **_REPEATS),
    # the judge's calls: [judge] when the file writes it, else the run's own flag
    Flag("judge_concurrency", help="Judge calls in flight at once (default: [judge] "
        "concurrency, else --concurrency, else 8).", low=1, key="judge.concurrency",
        **_COUNT),
    Flag("judge_timeout", help="Per-call timeout of the judge (default: [judge] timeout, else "
        "--timeout, else 60).", key="judge.timeout", **_TIMEOUT),
    Flag("judge_max_retries", help="Retries of a failed or malformed judge call (default: "
        "[judge] max_retries, else --max-retries, else 2).", low=0, key="judge.max_retries",
        **_COUNT),
    Flag("judge_rpm", help="Most judge requests per minute, retries included (default: [judge] "
        "rpm, else --rpm, else no limit).", key="judge.rpm", **_RATE),
    Flag("judge_tpm", help="Most judge tokens per minute (default: [judge] tpm, else --tpm, "
        "else no limit).", key="judge.tpm", **_RATE),
    Flag("trust_unvalidated", "on", "Let gated judge criteria fail answers without a stored "
        "validation."),
    Flag("junit", "output", "Write JUnit XML: one test case per question (for CI test "
        "reports).", metavar="PATH", sets=COMMAND),
    Flag("markdown", "output", "Write a Markdown summary, regressions first (PR comment, job "
        "summary).", metavar="PATH", sets=COMMAND),
    Flag("strict", "on", "In --junit, fail every question that fails now, as without a "
        "baseline (default: one that also failed in the baseline, and lost nothing, is a "
        "known failure, reported as skipped).", sets=COMMAND),
    Flag("no_history", "on", "Do not record this run in .ragrail/history.sqlite.",
        api="the API records a run only when asked: history=True"),
    Flag("backend", "choice", "Where the questions are answered and scored: here (local, "
        "default) or as Ray tasks (ray: needs ragrail[ray]); the results are the same "
        "(default: [run] backend).", choices=("local", "ray"), key="run.backend"),
    Flag("address", "text", "The Ray cluster to join, host:port (default: [run] address, else a "
        "Ray instance started on this machine for the run).", metavar="ADDR", blank_ok=False,
        key="run.address"),
    Flag("retriever", "choice", "standin (word matching, default), bm25, dense (needs "
        "ragrail[semantic]) or hybrid (bm25 and dense by reciprocal rank fusion).",
        choices=("standin", "bm25", "dense", "hybrid"),
        key="pipeline.retriever"),
    Flag("shard", "shard", "Evaluate only shard I of N (0 to N-1; by a hash of each case id) and "
        "write its --json results for `ragrail merge`; compares, saves and records nothing.",
        metavar="I/N", sets=COMMAND),
    Flag("metrics", "on", "Also print per-question context precision, recall, MRR, faithfulness "
        "and correctness.", sets=COMMAND),
)
# fmt: on

FLAGS: dict[str, Flag] = {f.name: f for f in RUN_FLAGS}


@dataclass
class Overrides:
    """Settings that replace the project file's for one evaluation; None keeps the file's.

    Each field is the run flag of the same name (``top_k`` is ``--top-k``), declared in
    :data:`RUN_FLAGS` with its help and bounds.
    """

    docs: Path | None = None
    golden: Path | None = None
    baseline: Path | None = None
    top_k: int | None = None
    chunk_words: int | None = None
    min_score: float | None = None
    retriever: str | None = None
    claude: bool = False  # --claude: the anthropic answerer, model claude-opus-5
    answerer: str | None = None
    model: str | None = None
    base_url: str | None = None
    concurrency: int | None = None
    timeout: float | None = None
    max_retries: int | None = None
    max_tokens: int | None = None
    rpm: float | None = None
    tpm: float | None = None
    repeats: int | None = None
    rerun_failures: int = 0
    batch: bool = False  # --batch: answers and judge calls as provider batches
    no_cache: bool = False
    dry_run: bool = False
    judge: str | None = None
    judge_model: str | None = None
    judge_base_url: str | None = None
    judge_repeats: int | None = None
    judge_concurrency: int | None = None
    judge_timeout: float | None = None
    judge_max_retries: int | None = None
    judge_rpm: float | None = None
    judge_tpm: float | None = None
    trust_unvalidated: bool = False
    no_history: bool = False
    backend: str | None = None  # local or ray (default: [run] backend)
    address: str | None = None  # the Ray cluster's (default: [run] address)

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> Overrides:
        """The overrides among ``values`` (flags, keyword arguments); other keys are ignored."""
        return cls(**{k: v for k, v in values.items() if k in _OVERRIDE_NAMES})


_OVERRIDE_NAMES = frozenset(f.name for f in fields(Overrides))


def command_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """The command's own flags among ``values`` (which project, which outputs)."""
    return {f.name: values[f.name] for f in RUN_FLAGS if f.sets == COMMAND and f.name in values}


def check_keywords(values: Mapping[str, Any], caller: str = "evaluate()") -> dict[str, Any]:
    """The keyword overrides of the Python API, each checked as its flag is; an unknown
    name is a TypeError (as for any function), a bad value an InputError. Returns those
    given (not None)."""
    known = sorted(f.name for f in RUN_FLAGS if f.keyword)
    for name, value in values.items():
        flag = FLAGS.get(name)
        if flag is not None and flag.sets == OVERRIDES and flag.api is not None:
            raise TypeError(f"{caller} takes no {name}= override: {flag.api}")
        if flag is None or not flag.keyword:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise TypeError(f"{caller} got an unexpected keyword argument {name!r}{hint}")
        problem = flag.problem(value)
        if problem is not None:
            raise InputError(f"{name}={value!r}: {problem}")
    return {name: value for name, value in values.items() if value is not None}
