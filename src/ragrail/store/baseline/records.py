"""The baseline in memory: its questions' verdicts and scores, and the file's text.

See :mod:`ragrail.store.baseline` for the format.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, field
from json.encoder import encode_basestring  # a str's JSON literal, non-ASCII kept
from typing import Any

from pydantic import ValidationError

from ragrail.errors import InputError
from ragrail.records.results import (
    BASELINE_FORMAT,
    CaseResult,
    RunConfig,
    RunResult,
    StageScores,
    Totals,
)

FORMAT = BASELINE_FORMAT
VERSION = 3
READS = (2, 3)  # version 2 kept no checks and no found facts: compared by verdict alone
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
# intervals: derived, and their method may change (stages: each stage's, with intervals)
TOTALS_LEFT_OUT = frozenset({"stats", "stages"})

FINGERPRINT_KEYS = ("docs", "golden")


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
    attribute names as :class:`ragrail.records.results.CaseResult`), and its metric values."""

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
    # each check the answers faced, in how many of them it held (CaseResult.held_checks);
    # None: a version 2 file, which did not keep them
    checks: dict[str, int] | None = None
    found: list[str] | None = None  # the labels of the facts retrieval found; None: v2
    # per retrieval stage (a staged run's: stages_text / read_stages), else None
    stages: list[StageScores] | None = None

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
            case.held_checks(),
            found_labels(case),
            case.stages or None,
        )


@dataclass
class Baseline:
    """A baseline as compare reads it: ``config``, ``totals`` and ``cases`` like a
    :class:`ragrail.records.results.RunResult`'s, plus the fingerprints of the inputs."""

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
        totals = rounded_totals(run.totals)
        return cls(
            config=run.config, totals=totals, cases=cases, fingerprints=_prints(fingerprints)
        )

    def case(self, case_id: str) -> BaselineCase | None:
        return next((c for c in self.cases if c.id == case_id), None)

    def to_text(self) -> str:
        """The file's text, byte-identical for equal baselines (the format is described
        in :mod:`ragrail.store.baseline`)."""
        memo: dict[tuple[tuple[str, float], ...], str] = {}
        blocks = [_case_block(c, memo) for c in self.cases]
        return _document(blocks, self.config, self.totals, self.fingerprints)


def run_text(run: RunResult, fingerprints: dict[str, str | None] | None = None) -> str:
    """The file's text for ``run``: ``Baseline.from_run(run, fingerprints).to_text()``
    byte for byte, written straight from the run's questions: making a BaselineCase for
    each first took as long as writing the text. Raises ValueError as ``from_run`` does."""
    memo: dict[tuple[float | None, ...], tuple[str, str]] = {}
    try:
        blocks = [_run_case_block(c, memo) for c in run.cases]
    except ValueError:
        Baseline.from_run(run, fingerprints)  # the same error, naming the question
        raise
    return _document(blocks, run.config, rounded_totals(run.totals), _prints(fingerprints))


def rounded_totals(totals: Totals) -> Totals:
    """``totals`` as a baseline keeps them: intervals left out, rates rounded. Raises
    ValueError naming the field when one is NaN or infinite."""
    kept = totals.model_copy(update={"stats": {}, "stages": {}})
    for name in Totals.model_fields:
        value = getattr(kept, name)
        if isinstance(value, float):
            try:
                setattr(kept, name, rounded(value))
            except ValueError as exc:
                raise ValueError(f"totals.{name}: {exc}") from None
    return kept


def _prints(fingerprints: dict[str, str | None] | None) -> dict[str, str | None]:
    prints: dict[str, str | None] = dict.fromkeys(FINGERPRINT_KEYS)
    prints.update(fingerprints or {})
    return prints


def _document(
    blocks: list[str], config: RunConfig, totals: Totals, fingerprints: dict[str, str | None]
) -> str:
    """The whole file: the questions' blocks, then the other keys, sorted, two-space indent."""
    head = {
        "config": config.model_dump(mode="json"),
        "fingerprints": fingerprints,
        "format": FORMAT,
        "totals": totals.model_dump(mode="json", exclude=set(TOTALS_LEFT_OUT)),
        "version": VERSION,
    }
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
    """A baseline question's block. ``memo``: metrics already written, by value (most
    questions share theirs with others)."""
    metrics = c.metrics
    key = tuple(metrics.items())
    rates = memo.get(key)
    if rates is None:
        rates = memo[key] = ", ".join(
            [f'"{k}": {metrics[k]!r}' for k in CASE_METRICS if k in metrics]
        )
    recall = "null" if c.retrieval_recall is None else repr(c.retrieval_recall)
    return _block(
        c.id, c.answer_pass, c.answer_passes, c.problems, c.answer_runs, c.cause, c.errored,
        rates, c.facts, c.retrieval_hit, recall, c.facts_retrieved, c.checks or {},
        c.found or [],
    )  # fmt: skip


def _run_case_block(c: CaseResult, memo: dict[tuple[float | None, ...], tuple[str, str]]) -> str:
    """A run's question as :func:`_case_block` writes its ``BaselineCase``: scores rounded
    (ValueError for NaN and infinity). ``memo``: the metrics' and the recall's text, by
    value."""
    key = (
        c.context_average_precision, c.context_precision, c.correctness, c.faithfulness,
        c.reciprocal_rank, c.retrieval_recall,
    )  # fmt: skip
    texts = memo.get(key)
    if texts is None:
        *values, recall = key
        rates = ", ".join(
            [
                f'"{k}": {rounded(v)!r}'
                for k, v in zip(CASE_METRICS, values, strict=True)
                if v is not None
            ]
        )
        texts = memo[key] = (rates, "null" if recall is None else repr(rounded(recall)))
    return _block(
        c.id, c.answer_pass, c.answer_passes, c.problems, c.answer_runs, c.cause, c.errored,
        texts[0], len(c.facts), c.retrieval_hit, texts[1], len(c.facts_retrieved),
        c.held_checks() if c.judge is not None else c.checks, found_labels(c),
        stages_text(c.stages),
    )  # fmt: skip


def stages_text(stages: list[StageScores]) -> str:
    """A question's retrieval stages as the baseline keeps them (one JSON array, keys
    sorted, scores rounded), or "" when it has none: a run without stages writes the file
    it always wrote."""
    if not stages:
        return ""
    import json

    rows = []
    for st in stages:
        row = st.model_dump(mode="json")
        for key in ("recall", "reciprocal_rank"):
            if row[key] is not None:
                row[key] = rounded(row[key])
        rows.append(row)
    return json.dumps(rows, sort_keys=True, ensure_ascii=False)


def read_stages(value: Any, at: str, what: str, where: str) -> list[StageScores]:
    """A question's retrieval stages as :func:`stages_text` wrote them, each checked (an
    InputError naming the field and ``where``)."""
    if type(value) is not list:
        raise InputError(f"{what} field {at!r}: Input should be a list", where)
    out = []
    for j, item in enumerate(value):
        try:
            out.append(StageScores.model_validate(item))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in (at, j, *err["loc"]))
            raise InputError(f"{what} field {field!r}: {err['msg']}", where) from None
    return out


def found_labels(case: CaseResult) -> list[str]:
    """The labels of the facts retrieval found for the case, in golden-set order."""
    return [str(f) for f in case.facts_retrieved]


def _block(
    case_id: str, answer_pass: bool | None, passes: int, problems: list[str], runs: int,
    cause: str | None, errored: bool, rates: str, facts: int, hit: bool | None,
    recall: str, retrieved: int, checks: dict[str, int], found: list[str], stages: str = "",
) -> str:  # fmt: skip
    """A question as a block of sorted lines, each within three lines of its id, so a
    diff's context always shows which question a changed line belongs to."""
    string = encode_basestring
    held = ", ".join([f"{string(k)}: {checks[k]!s}" for k in sorted(checks)])
    extra = f', "stages": {stages}' if stages else ""  # only a staged run has them
    return (
        "    {\n"
        f'      "answer": {{"checks": {{{held}}}, "pass": {_LITERAL[answer_pass]}, '
        f'"passes": {passes!s}, '
        f'"problems": [{", ".join(map(string, problems))}], "runs": {runs!s}}},\n'
        f'      "cause": {"null" if cause is None else string(cause)},\n'
        f'      "errored": {_LITERAL[errored]},\n'
        f'      "id": {string(case_id)},\n'
        f'      "metrics": {{{rates}}},\n'
        f'      "retrieval": {{"facts": {facts!s}, '
        f'"found": [{", ".join(map(string, found))}], "hit": {_LITERAL[hit]}, '
        f'"recall": {recall}, "retrieved": {retrieved!s}{extra}}}\n'
        "    }"
    )
