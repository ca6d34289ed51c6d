"""The baseline in memory: its questions' verdicts and scores, and the file's text.

See :mod:`ragrail.store.baseline` for the format.
"""

from __future__ import annotations

import functools
import gc
import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from json.encoder import encode_basestring  # a str's JSON literal, non-ASCII kept

from ragrail.results import BASELINE_FORMAT, CaseResult, RunConfig, RunResult, Totals

FORMAT = BASELINE_FORMAT
VERSION = 2
SIGNIFICANT_DIGITS = 6
MAX_COUNT = 2**53  # as in results.Count: the largest count a JSON reader keeps exact

# Per-question rates kept beside the verdicts (each in [0, 1], left out when undefined).
CASE_METRICS = (
    "context_average_precision",
    "context_precision",
    "correctness",
    "faithfulness",
    "reciprocal_rank",
)
TOTALS_LEFT_OUT = frozenset({"stats"})  # intervals: derived, and their method may change

FINGERPRINT_KEYS = ("docs", "golden")


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a baseline is built, written or read.

    Those loops allocate many small objects that hold no cycles, and each collection
    they set off walks every object alive: with a large run in memory (its traces,
    chunks and prompts) that cost seconds at 100,000 questions, for nothing to free.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


# cached: a run's scores are fractions of a few small counts, so most values repeat
@functools.lru_cache(maxsize=1 << 16)
def rounded(value: float) -> float:
    """``value`` to six significant digits, -0.0 as 0.0: the one form a score takes in a
    baseline and in the comparison with one. Refuses NaN and infinity (ValueError)."""
    if not math.isfinite(value):
        raise ValueError(f"{value!r} is not a finite number")
    return float(f"{value:.{SIGNIFICANT_DIGITS}g}") + 0.0


@dataclass(slots=True)
class BaselineCase:
    """One question of a baseline: what compare reads of a baseline case (the same
    attribute names as :class:`ragrail.results.CaseResult`), and its metric values."""

    id: str
    retrieval_hit: bool | None
    retrieval_recall: float | None
    facts: int  # facts the question has
    facts_retrieved: int  # of them, found in the retrieved chunks
    answer_pass: bool | None
    answer_passes: int
    answer_runs: int
    problems: list[str]
    errored: bool
    cause: str | None
    metrics: dict[str, float]

    @classmethod
    def from_case(cls, case: CaseResult) -> BaselineCase:
        """The baseline's view of a scored question, its scores rounded."""
        metrics = {k: rounded(v) for k in CASE_METRICS if (v := getattr(case, k)) is not None}
        recall = case.retrieval_recall
        return cls(
            case.id,
            case.retrieval_hit,
            None if recall is None else rounded(recall),
            len(case.facts),
            len(case.facts_retrieved),
            case.answer_pass,
            case.answer_passes,
            case.answer_runs,
            list(case.problems),
            case.errored,
            case.cause,
            metrics,
        )


@dataclass
class Baseline:
    """A baseline as compare reads it: ``config``, ``totals`` and ``cases`` like a
    :class:`ragrail.results.RunResult`'s, plus the fingerprints of the inputs."""

    config: RunConfig
    totals: Totals
    cases: list[BaselineCase]
    fingerprints: dict[str, str | None] = field(
        default_factory=lambda: dict.fromkeys(FINGERPRINT_KEYS)
    )

    @classmethod
    def from_run(
        cls, run: RunResult, fingerprints: dict[str, str | None] | None = None
    ) -> Baseline:
        """The baseline of a run: its verdicts and scores, scores rounded as they are saved.
        Raises ValueError naming the field when a score is NaN or infinite."""
        cases = []
        for i, case in enumerate(run.cases):
            try:
                cases.append(BaselineCase.from_case(case))
            except ValueError as exc:
                raise ValueError(f"case {case.id!r} (cases.{i}): {exc}") from None
        totals = run.totals.model_copy(update={"stats": {}})
        for name in Totals.model_fields:
            value = getattr(totals, name)
            if isinstance(value, float):
                try:
                    setattr(totals, name, rounded(value))
                except ValueError as exc:
                    raise ValueError(f"totals.{name}: {exc}") from None
        prints = dict.fromkeys(FINGERPRINT_KEYS)
        prints.update(fingerprints or {})
        return cls(config=run.config, totals=totals, cases=cases, fingerprints=prints)

    def case(self, case_id: str) -> BaselineCase | None:
        return next((c for c in self.cases if c.id == case_id), None)

    def to_text(self) -> str:
        """The file's text, byte-identical for equal baselines (the format is described
        in :mod:`ragrail.store.baseline`)."""
        config = self.config.model_dump(mode="json")
        totals = self.totals.model_dump(mode="json", exclude=set(TOTALS_LEFT_OUT))
        head = {
            "config": config,
            "fingerprints": self.fingerprints,
            "format": FORMAT,
            "totals": totals,
            "version": VERSION,
        }
        memo: dict[tuple[tuple[str, float], ...], str] = {}
        blocks = [_case_block(c, memo) for c in self.cases]
        cases = "[\n" + ",\n".join(blocks) + "\n  ]" if blocks else "[]"
        parts = [f'  "cases": {cases}']
        for key, value in head.items():
            text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
            parts.append(f"  {json.dumps(key)}: {text.replace(chr(10), chr(10) + '  ')}")
        return "{\n" + ",\n".join(parts) + "\n}\n"


# JSON literals of the values a case holds. Numbers are written with str/repr: a
# non-finite or mistyped one (assigned after validation) is written as text the
# read-back refuses, so it is never saved (see baseline.write.save_baseline).
_LITERAL = {True: "true", False: "false", None: "null"}


def _case_block(c: BaselineCase, memo: dict[tuple[tuple[str, float], ...], str]) -> str:
    """A question as a block of sorted lines, each within three lines of its id, so a
    diff's context always shows which question a changed line belongs to. ``memo``:
    metrics already written, by value (most questions share theirs with others)."""
    string = encode_basestring
    metrics = c.metrics
    key = tuple(metrics.items())
    rates = memo.get(key)
    if rates is None:
        rates = memo[key] = ", ".join(
            [f'"{k}": {metrics[k]!r}' for k in CASE_METRICS if k in metrics]
        )
    recall = "null" if c.retrieval_recall is None else repr(c.retrieval_recall)
    return (
        "    {\n"
        f'      "answer": {{"pass": {_LITERAL[c.answer_pass]}, "passes": {c.answer_passes!s}, '
        f'"problems": [{", ".join(map(string, c.problems))}], "runs": {c.answer_runs!s}}},\n'
        f'      "cause": {"null" if c.cause is None else string(c.cause)},\n'
        f'      "errored": {_LITERAL[c.errored]},\n'
        f'      "id": {string(c.id)},\n'
        f'      "metrics": {{{rates}}},\n'
        f'      "retrieval": {{"facts": {c.facts!s}, "hit": {_LITERAL[c.retrieval_hit]}, '
        f'"recall": {recall}, "retrieved": {c.facts_retrieved!s}}}\n'
        "    }"
    )
