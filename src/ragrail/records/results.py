"""Typed, versioned results: a trace per question, scores per question, a run.

Everything serialises to JSON with a stable field order (the order the fields
are declared here). Per-question scores are always kept; totals are derived.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, TypeAdapter, ValidationError, model_validator

from ragrail._version import __version__
from ragrail.errors import InputError, SystemFailure
from ragrail.fileio import atomic_write_text
from ragrail.jsonio import load_json, parse_json
from ragrail.records.base import Count as Count
from ragrail.records.base import Model
from ragrail.records.base import Rate as Rate
from ragrail.records.config import RunConfig as RunConfig
from ragrail.records.config import Setting as Setting
from ragrail.records.trace import ArticleScores as ArticleScores
from ragrail.records.trace import CallUsage as CallUsage
from ragrail.records.trace import Claim as Claim
from ragrail.records.trace import MissedFact as MissedFact
from ragrail.records.trace import RetrievedChunk as RetrievedChunk
from ragrail.records.trace import Sample as Sample
from ragrail.records.trace import StageScores as StageScores
from ragrail.records.trace import Trace as Trace
from ragrail.records.verdicts import CaseChange as CaseChange
from ragrail.records.verdicts import Corrected as Corrected
from ragrail.records.verdicts import CriterionResult as CriterionResult
from ragrail.records.verdicts import JudgeClaim as JudgeClaim
from ragrail.records.verdicts import JudgeResult as JudgeResult
from ragrail.records.verdicts import LabelPair as LabelPair
from ragrail.records.verdicts import Verdict as Verdict
from ragrail.text.matching import FactField

if TYPE_CHECKING:
    import pandas as pd

SCHEMA_VERSION = 1
BASELINE_FORMAT = "ragrail-baseline"  # the compact baseline (ragrail.store.baseline), not a run


_Model = Model  # the base of every result type (ragrail.records.base)
Expect = Literal["answer", "abstain", "refuse", "escalate"]  # see ragrail.scoring.behaviour

# How the checks an answer faces are named in ``CaseResult.checks`` and the baseline
# (``ragrail.scoring.case.answer_checks``): the expected behaviour, each fact the answer
# must hold, its citation, every claim supported by the contexts, each code check, and
# each judge criterion. A name with a prefix ends with the fact's label, the check's
# label or the criterion's name.
BEHAVIOUR = "behaviour"
CITATION = "citation"
CLAIMS = "claims supported"
FACT = "fact: "
CHECK = "check: "
JUDGE = "judge: "
CHECK_NAMES = (BEHAVIOUR, CITATION, CLAIMS, FACT, CHECK, JUDGE)


class CaseResult(_Model):
    id: str
    question: str
    sources: list[str]
    # graded sources as labelled (grade-0 articles too); empty for a plain list
    grades: dict[str, int] = Field(default_factory=dict, exclude_if=lambda g: not g)
    # Facts as the golden set gave them (a string, {"any": [...]}, {"regex": ...}), so a
    # saved run reads back the same facts; each is a str, its label, in problems and reports.
    facts: list[FactField]
    tags: list[str] = Field(default_factory=list)
    expect: Expect | None = Field(default=None, exclude_if=lambda e: e is None)
    # a turn of a conversation: the conversation's id and the turn's number (from 1)
    conversation: str | None = Field(default=None, exclude_if=lambda c: c is None)
    turn: Count | None = Field(default=None, exclude_if=lambda t: t is None)
    facts_retrieved: list[FactField] = Field(default_factory=list)
    retrieval_hit: bool | None = None
    retrieval_recall: Rate | None = None
    answer_pass: bool | None = None
    answer_runs: Count = 0  # answers scored (1, or N with --repeats)
    answer_passes: Count = 0
    problems: list[str] = Field(default_factory=list)
    context_precision: Rate | None = None
    context_average_precision: Rate | None = None
    reciprocal_rank: Rate | None = None
    correctness: Rate | None = None
    faithfulness: Rate | None = None
    claims: list[Claim] = Field(default_factory=list)
    articles: ArticleScores | None = None
    check_problems: list[str] = Field(default_factory=list)
    # each check the answers faced (see CHECK_NAMES): in how many of answer_runs it held
    checks: dict[str, Count] = Field(default_factory=dict)
    missed_facts: list[MissedFact] = Field(default_factory=list)
    stages: list[StageScores] = Field(default_factory=list, exclude_if=lambda s: not s)
    cause: str | None = None
    cause_detail: str | None = None
    judge: JudgeResult | None = None
    # [runs whose verdict passed, runs] over the earlier recorded runs of this configuration
    # and commit; kept only when the verdict changed between them (ragrail.store.flaky):
    # the question is flaky
    recorded: list[Count] | None = Field(default=None, exclude_if=lambda r: r is None)
    trace: Trace

    @model_validator(mode="after")
    def _passes_within_runs(self) -> CaseResult:
        if self.answer_passes > self.answer_runs:
            passes, runs = self.answer_passes, self.answer_runs
            raise ValueError(f"answer_passes ({passes}) is more than answer_runs ({runs})")
        return self

    @property
    def errored(self) -> bool:
        # not via all_samples(): building a Sample per call made large compares slow
        t = self.trace
        if t.error is not None:
            return True
        return bool(t.samples) and any(s.error is not None for s in t.samples)

    @property
    def answer_pass_rate(self) -> float | None:
        return self.answer_passes / self.answer_runs if self.answer_runs else None

    @property
    def flaky(self) -> bool:
        """Some repeats pass and some fail, or its verdict changed between recorded runs of
        an unchanged configuration and system."""
        return 0 < self.answer_passes < self.answer_runs or self.recorded is not None

    def flaky_text(self) -> str | None:
        """``flaky: passed in 3 of 5 earlier runs of this configuration`` (or ``flaky: 2
        of 5 answers passed``); None when the question is not flaky."""
        if self.recorded is not None:
            passed, runs = self.recorded
            return f"flaky: passed in {passed} of {runs} earlier runs of this configuration"
        if 0 < self.answer_passes < self.answer_runs:
            return f"flaky: {self.answer_passes} of {self.answer_runs} answers passed"
        return None

    def held_checks(self) -> dict[str, int]:
        """:attr:`checks`, and each judge criterion with a verdict as ``judge: <name>``:
        1 when the judge's majority verdict passed, else 0 (counted once, whatever the
        number of answers)."""
        held = dict(self.checks)
        if self.judge is not None:
            for c in self.judge.criteria:
                if c.passed is not None:
                    held[JUDGE + c.name] = int(c.passed)
        return held


class Stat(_Model):
    """A total, its n and 95% interval (``ragrail.stats``): Wilson's for rates (with repeats,
    over the effective number of questions); for means a bootstrap up to 5,000 values and
    the normal interval above, widened to Wilson's near 0 and 1."""

    value: float | None
    low: float | None = None
    high: float | None = None
    n: Count = 0


class Expected(_Model):  # Totals.expected: per behaviour, when refuse or escalate is used
    n: Count
    passed: Count


class Totals(_Model):
    n_cases: Count
    n_retrieval: Count  # cases with facts: the denominator of hit rate and recall
    hit_rate: Rate | None
    recall: Rate | None
    n_answers: Count  # answers scored (errors excluded, and counted apart)
    answers_passed: Count
    answer_pass_rate: Rate | None  # passed / (n_answers + n_answer_errors): errors never pass
    n_errors: Count
    n_answer_errors: Count = 0  # answers lost to a failed call (each repeat counts)
    n_retrieval_errors: Count = 0  # cases with facts whose call failed before anything came back
    n_flaky: Count = 0
    prompt_tokens_mean: float | None = Field(ge=0.0)
    stats: dict[str, Stat] = Field(default_factory=dict)
    causes: dict[str, Count] = Field(default_factory=dict)
    expected: dict[str, Expected] = Field(default_factory=dict, exclude_if=lambda e: not e)
    # per retrieval stage: hit_rate, recall, mrr (ragrail.scoring.stages.stage_totals)
    stages: dict[str, dict[str, Stat]] = Field(default_factory=dict, exclude_if=lambda s: not s)
    # conversations (their turns are counted in n_cases), and those whose every turn passed
    n_conversations: Count = Field(default=0, exclude_if=lambda n: not n)
    conversations_passed: Count = Field(default=0, exclude_if=lambda n: not n)

    @model_validator(mode="after")
    def _passed_within_answers(self) -> Totals:
        if self.answers_passed > self.n_answers:
            raise ValueError(
                f"answers_passed ({self.answers_passed}) is more than n_answers ({self.n_answers})"
            )
        if self.conversations_passed > self.n_conversations:
            raise ValueError(
                f"conversations_passed ({self.conversations_passed}) is more than "
                f"n_conversations ({self.n_conversations})"
            )
        return self


class Usage(_Model):
    """Model calls of a run: made, served from the cache, failed; tokens and cost."""

    calls: Count = 0
    cached: Count = 0
    errors: Count = 0
    retries: Count = 0
    input_tokens: Count | None = 0  # None when a server did not report usage: unknown, not 0
    output_tokens: Count | None = 0
    # None when a model has no known price or usage is unknown
    cost_usd: float | None = Field(default=0.0, ge=0.0)
    cached_cost_usd: float | None = Field(default=0.0, ge=0.0)


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
    # judge_stats' totals corrected by human labels, same keys; absent: no validation
    judge_corrected: dict[str, Corrected] = Field(default_factory=dict)
    # how `ragrail run` ended this run; absent from a run that was not ended by it (a shard)
    verdict: Verdict | None = Field(default=None, exclude_if=lambda v: v is None)
    cases: list[CaseResult]

    def case(self, case_id: str) -> CaseResult | None:
        return next((c for c in self.cases if c.id == case_id), None)

    def to_json(self) -> str:
        return self.model_dump_json(indent=2) + "\n"

    def to_pandas(self) -> pd.DataFrame:
        """One row per question, indexed by case id (see :mod:`ragrail.records.frames`). Needs
        pandas (``pip install pandas``, or the ``ragrail[pandas]`` extra)."""
        from ragrail.records.frames import table

        return table([case_row(c) for c in self.cases])

    def json_pieces(self) -> Iterator[bytes]:
        """:meth:`to_json`'s UTF-8 bytes in pieces of a thousand cases: never the whole
        document (hundreds of MB for 100,000 questions) in memory, never decoded again."""
        if not self.cases:
            yield self.to_json().encode()
            return
        head = self.model_dump_json(indent=2, exclude={"cases"})
        # cases is the last field: reopen the object to append it, indented one level
        yield (head.removesuffix("\n}") + ',\n  "cases": [\n').encode()
        adapter = _cases_adapter()
        for start in range(0, len(self.cases), JSON_BLOCK):
            # a block of cases serialised in one call: "[\n  {...},\n  {...}\n]"
            text = adapter.dump_json(self.cases[start : start + JSON_BLOCK], indent=2)
            # no raw newline can stand inside a JSON string, so each one is indentation
            body = b"  " + text[2:-2].replace(b"\n", b"\n  ")
            yield body if start == 0 else b",\n" + body
        yield b"\n  ]\n}\n"

    def save(self, path: Path | str, what: str = "results") -> None:
        """Write the run atomically. The new file is read back with the loader that will read
        it next time (parsed and validated) before it replaces the old one: a run that could
        not be loaded again is never saved over a good one. Past READ_BACK_UP_TO questions
        the full read-back would take longer than scoring them (0.3 s per 2,000 questions),
        so the write is checked for what could stop it loading once every model was
        validated when it was built: a NaN or infinity assigned since (read back in full
        when the text could hold one), a case id given twice."""
        path = Path(path)  # a str from a notebook is a path too

        def read_back(written: Path) -> None:
            try:
                parse_run(parse_json(written.read_text(encoding="utf-8"), path), path, what)
            except InputError as exc:
                raise SystemFailure(
                    f"{path}: not saved: the new {what} does not read back "
                    f"({exc.message}); the old file is unchanged"
                ) from None

        def quick_check(written: Path) -> None:
            ids = {c.id for c in self.cases}
            if len(ids) != len(self.cases):
                raise SystemFailure(
                    f"{path}: not saved: the new {what} names a case twice; "
                    "the old file is unchanged"
                )
            with open(written, "rb") as fh:
                while block := fh.read(1 << 24):
                    # a literal split across two blocks is caught by the overlap
                    if b"NaN" in block or b"Infinity" in block:
                        read_back(written)
                        return
                    if len(block) == 1 << 24:
                        fh.seek(-8, 1)

        check = read_back if len(self.cases) <= READ_BACK_UP_TO else quick_check
        atomic_write_text(path, self.json_pieces(), what, validate=check)


READ_BACK_UP_TO = 1_000
JSON_BLOCK = 1_000  # cases serialised per call by json_pieces


def case_row(case: CaseResult) -> dict[str, Any]:
    """One question as a flat record (a row of :meth:`RunResult.to_pandas`): scores as
    numbers (None: not scored), facts as their labels (``missed_facts``: those not in any
    retrieved chunk), chunks as their ids in rank order."""
    first_error = next((s.error for s in case.trace.all_samples() if s.error), None)
    retrieved_facts = set(case.facts_retrieved)
    return {
        "id": case.id,
        "question": case.question,
        "tags": list(case.tags),
        "sources": list(case.sources),
        "retrieval_hit": case.retrieval_hit,
        "retrieval_recall": case.retrieval_recall,
        "answer_pass": case.answer_pass,
        "answer_pass_rate": case.answer_pass_rate,
        "answer_runs": case.answer_runs,
        "flaky": case.flaky,
        "errored": case.errored,
        "error": first_error,
        "cause": case.cause,
        "cause_detail": case.cause_detail,
        "problems": list(case.problems),
        "missed_facts": [str(f) for f in case.facts if f not in retrieved_facts],
        "retrieved": [c.id for c in sorted(case.trace.retrieved, key=lambda c: c.rank)],
        "answer": case.trace.answer,
        "context_precision": case.context_precision,
        "context_average_precision": case.context_average_precision,
        "reciprocal_rank": case.reciprocal_rank,
        "correctness": case.correctness,
        "faithfulness": case.faithfulness,
        "judge_faithfulness": case.judge.faithfulness if case.judge is not None else None,
        "prompt_tokens": case.trace.prompt_tokens,
        "latency_ms": case.trace.latency_ms,
    }


@cache
def _cases_adapter() -> TypeAdapter[list[CaseResult]]:
    return TypeAdapter(list[CaseResult])


def load_run(path: Path, what: str = "baseline") -> RunResult:
    """Load a saved run (a baseline or ``--json`` output), validating its schema. Every
    problem is an InputError naming the file and the field: broken JSON, a NaN or infinite
    number, a value out of its range (a recall of 1.5, a negative count, more passes than
    answers), a case id given twice."""
    return parse_run(load_json(path, what), path, what)


def parse_run(data: Any, path: Path | str, what: str = "baseline") -> RunResult:
    """A saved run from its parsed JSON; see :func:`load_run`."""
    if not isinstance(data, dict):
        raise InputError(f"{what} must be a JSON object", str(path))
    if "shard" in data:  # load_shard takes the field off before it parses the run
        raise InputError(
            f"{what} is {_shard_name(data['shard'])} of a sharded run (`ragrail run --shard`), "
            "not a whole run: merge every shard's results first (`ragrail merge SHARD... "
            "--json PATH`) and give that file",
            str(path),
        )
    if data.get("format") == BASELINE_FORMAT:
        raise InputError(
            f"{what} is a compact baseline (verdicts and scores, no traces), not a saved run: "
            "give a --json results file or a run from the history",
            str(path),
        )
    version = data.get("schema_version")
    if type(version) is not int or version != SCHEMA_VERSION:  # true and 1.0 are not 1
        shown = json.dumps(version) if _is_json_scalar(version) else type(version).__name__
        raise InputError(
            f"{what} has schema_version {shown}; this ragrail reads {SCHEMA_VERSION}. "
            "Re-create it with --save-baseline",
            str(path),
        )
    try:
        run = RunResult.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"{what} {_invalid(exc, data)}", str(path)) from None
    first: dict[str, int] = {}
    for i, case in enumerate(run.cases):
        if case.id in first:
            raise InputError(
                f"{what} has case {case.id!r} twice (cases.{first[case.id]} and cases.{i}): "
                "which one to compare with would be a guess",
                str(path),
            )
        first[case.id] = i
    return run


def _shard_name(info: object) -> str:
    """``shard 1/3``, or ``one shard`` when the field does not say which."""
    if isinstance(info, dict):
        index, count = info.get("index"), info.get("count")
        if type(index) is int and type(count) is int:
            return f"shard {index}/{count}"
    return "one shard"


def _is_json_scalar(value: object) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _invalid(exc: ValidationError, data: dict[str, Any], prefix: str = "") -> str:
    """``field 'cases.0.retrieval_recall' (case 'x'): Input should be less than or
    equal to 1 (got 1.5)``. ``prefix``: where the validated object sits in ``data``."""
    err = exc.errors()[0]
    loc = (prefix, *err["loc"]) if prefix else err["loc"]
    field = ".".join(str(p) for p in loc) or "(top level)"
    case = ""
    if len(loc) >= 2 and loc[0] == "cases" and isinstance(loc[1], int):
        item = data.get("cases")
        item = item[loc[1]] if isinstance(item, list) and loc[1] < len(item) else None
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            case = f" (case {item['id']!r})"
    if err["type"] == "missing":
        return f"field {field!r}{case} is missing"
    if err["type"] == "extra_forbidden":
        return f"has an unknown field {field!r}{case}"
    got = err.get("input")
    number = repr(got) if isinstance(got, int | float) and not isinstance(got, bool) else ""
    if len(number) > 40:  # a hand-typed 10**400 would fill the screen
        number = f"{number[:20]}… ({len(number)} digits)"
    shown = f" (got {number})" if number else ""
    return f"field {field!r}{case}: {str(err['msg']).removeprefix('Value error, ')}{shown}"
