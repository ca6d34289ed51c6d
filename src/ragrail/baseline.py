"""The baseline a pull request reviews: per-question verdicts and scores, nothing else.

A baseline is what ``--save-baseline`` accepts and what the next run is
compared with. It keeps only what :func:`ragrail.compare.compare` and a
reviewer need: the run's configuration, fingerprints of the documents and the
golden set, the totals, and per question its retrieval and answer verdicts,
whether it errored, its failure cause and its metric values. Prompts, traces,
latency, usage, timestamps and ragrail's version are left out, and so are the
article-level ranking metrics and the totals' intervals, both derived (the run
history and ``--json`` keep the whole run), so accepting an unchanged run
rewrites a byte-identical file and a real model's diff shows only verdicts that
moved.

The file is deterministic: keys sorted, scores rounded to six significant
digits (so float noise in the last bits never shows up as a diff), each
question a block of a few lines holding its id, so a diff names the question
that changed. Older baselines (a whole saved run, ``schema_version`` 1) still
load, into the same structure.

Format (version 2)::

    {
      "cases": [
        {
          "answer": {"pass": true, "passes": 1, "problems": [], "runs": 1},
          "cause": null,
          "errored": false,
          "id": "link-expiry",
          "metrics": {"context_precision": 0.5, ...},
          "retrieval": {"facts": 1, "hit": true, "recall": 1.0, "retrieved": 1}
        }
      ],
      "config": {...},
      "fingerprints": {"docs": "sha256:...", "golden": "sha256:..."},
      "format": "ragrail-baseline",
      "totals": {...},
      "version": 2
    }
"""

from __future__ import annotations

import functools
import gc
import hashlib
import json
import math
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from json.encoder import encode_basestring  # a str's JSON literal, non-ASCII kept
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ragrail.errors import InputError, SystemFailure
from ragrail.fileio import atomic_write_text, load_json, parse_json
from ragrail.results import (
    BASELINE_FORMAT,
    CaseResult,
    RunConfig,
    RunResult,
    Totals,
    _invalid,
    parse_run,
)

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

M = TypeVar("M", bound=BaseModel)

_TOP_KEYS = frozenset({"cases", "config", "fingerprints", "format", "totals", "version"})
_CASE_KEYS = frozenset({"answer", "cause", "errored", "id", "metrics", "retrieval"})
_RETRIEVAL_KEYS = frozenset({"facts", "hit", "recall", "retrieved"})
_ANSWER_KEYS = frozenset({"pass", "passes", "problems", "runs"})
_FINGERPRINT_KEYS = ("docs", "golden")
_METRIC_SET = frozenset(CASE_METRICS)


@contextmanager
def _gc_paused() -> Iterator[None]:
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
        default_factory=lambda: dict.fromkeys(_FINGERPRINT_KEYS)
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
        prints = dict.fromkeys(_FINGERPRINT_KEYS)
        prints.update(fingerprints or {})
        return cls(config=run.config, totals=totals, cases=cases, fingerprints=prints)

    def case(self, case_id: str) -> BaselineCase | None:
        return next((c for c in self.cases if c.id == case_id), None)

    def to_text(self) -> str:
        """The file's text: byte-identical for equal baselines (see the module docstring)."""
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


# ---------------------------------------------------------------- writing

# JSON literals of the values a case holds. Numbers are written with str/repr: a
# non-finite or mistyped one (assigned after validation) is written as text the
# read-back refuses, so it is never saved (see save_baseline).
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


def fingerprint_file(path: Path | None) -> str | None:
    """``sha256:<hex>`` of a file's bytes with CRLF line ends read as LF (a Windows
    checkout of the same golden set has the same fingerprint); None when unreadable."""
    if path is None:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return "sha256:" + hashlib.sha256(data.replace(b"\r\n", b"\n")).hexdigest()


def fingerprint_docs(folder: Path | None) -> str | None:
    """``sha256:<hex>`` over the documents a run reads from ``folder`` (the files
    ``corpus.load_documents`` takes, by name, line ends as in :func:`fingerprint_file`);
    None when there is no such folder."""
    from ragrail.corpus import DOC_SUFFIXES

    if folder is None or not folder.is_dir():
        return None
    digest = hashlib.sha256()
    try:
        for path in sorted(folder.iterdir()):
            if path.suffix.lower() in DOC_SUFFIXES and path.is_file():
                content = path.read_bytes().replace(b"\r\n", b"\n")
                digest.update(path.name.encode("utf-8", "surrogateescape") + b"\0")
                digest.update(hashlib.sha256(content).digest())
    except OSError:
        return None
    return "sha256:" + digest.hexdigest()


def fingerprints(docs: Path | None = None, golden: Path | None = None) -> dict[str, str | None]:
    """The fingerprints a baseline records: the documents folder and the golden-set file."""
    return {"docs": fingerprint_docs(docs), "golden": fingerprint_file(golden)}


def save_baseline(
    run: RunResult | Baseline,
    path: Path,
    *,
    docs: Path | None = None,
    golden: Path | None = None,
) -> Baseline:
    """Write the compact baseline of ``run`` to ``path`` atomically and return it.

    The new file is read back with :func:`load_baseline` before it replaces the old
    one: a baseline that would not load is never saved over a good one (SystemFailure,
    exit 3, the old file unchanged). ``docs`` and ``golden``: the inputs to fingerprint
    (a Baseline passed in keeps its own fingerprints).
    """
    try:
        with _gc_paused():
            base = (
                run
                if isinstance(run, Baseline)
                else Baseline.from_run(run, fingerprints(docs, golden))
            )
            text = base.to_text()
    except ValueError as exc:
        raise SystemFailure(
            f"{path}: not saved: the new baseline has {exc}; the old file is unchanged"
        ) from None

    def read_back(written: Path) -> None:
        try:
            with _gc_paused():
                parse_baseline(_parse_written(written, path), path)
        except InputError as exc:
            raise SystemFailure(
                f"{path}: not saved: the new baseline does not read back "
                f"({exc.message}); the old file is unchanged"
            ) from None

    atomic_write_text(path, text, "baseline", validate=read_back)
    return base


def _parse_written(written: Path, path: Path) -> Any:
    """The JSON of a baseline just written, parsed as :func:`parse_json` would parse it.

    ``parse_json`` also looks for keys given twice in an object, which costs a Python
    call per object (a third of the parse at 100,000 questions). The writer cannot
    give a key twice (a case's keys are literals; a dict's are unique), so the check
    is left out here; NaN and infinity, which a bad number could still produce, are
    refused.
    """
    text = written.read_text(encoding="utf-8")
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        return parse_json(text, path)  # refuses it too, naming the line and the field


def _refuse_constant(literal: str) -> Any:
    raise ValueError(f"{literal} is not JSON")


# ---------------------------------------------------------------- reading


def load_baseline(path: Path, what: str = "baseline") -> Baseline:
    """Load a baseline, compact (version 2) or a whole saved run (``schema_version`` 1).

    Every problem is an InputError (exit 2) naming the file and the field: broken
    JSON, a NaN or infinite number, a value out of its range, a missing or unknown
    field, more passes than answers, a case id given twice.
    """
    with _gc_paused():
        return parse_baseline(load_json(path, what), path, what)


def parse_baseline(data: Any, path: Path | str, what: str = "baseline") -> Baseline:
    """A baseline from its parsed JSON; see :func:`load_baseline`."""
    if isinstance(data, dict) and "format" in data:
        return _parse_compact(data, path, what)
    return Baseline.from_run(parse_run(data, path, what))


def _parse_compact(data: dict[str, Any], path: Path | str, what: str) -> Baseline:
    where = str(path)
    if data.get("format") != FORMAT:
        raise InputError(
            f"{what} has format {_shown(data.get('format'))}; this ragrail reads {json.dumps(FORMAT)}",
            where,
        )
    version = data.get("version")
    if type(version) is not int or version != VERSION:  # true and 2.0 are not 2
        raise InputError(
            f"{what} has version {_shown(version)}; this ragrail reads {VERSION}. "
            "Re-create it with --save-baseline",
            where,
        )
    _exact_keys(data, _TOP_KEYS, "", what, where)
    config = _model(RunConfig, data["config"], "config", what, where)
    totals = _model(Totals, data["totals"], "totals", what, where)
    prints = _fingerprints(data["fingerprints"], what, where)
    raw = data["cases"]
    if type(raw) is not list:
        raise InputError(f"{what} field 'cases': Input should be a valid list", where)
    cases = [_case(c, i, what, where) for i, c in enumerate(raw)]
    _unique_ids(cases, what, where)
    return Baseline(config=config, totals=totals, cases=cases, fingerprints=prints)


def _shown(value: object) -> str:
    if value is None or isinstance(value, str | int | float | bool):
        return json.dumps(value)
    return type(value).__name__


def _exact_keys(obj: dict[str, Any], keys: frozenset[str], at: str, what: str, where: str) -> None:
    missing = sorted(keys - obj.keys())
    if missing:
        raise InputError(f"{what} field {at + missing[0]!r} is missing", where)
    unknown = sorted(obj.keys() - keys)
    if unknown:
        raise InputError(f"{what} has an unknown field {at + unknown[0]!r}", where)


def _model(model: type[M], value: Any, name: str, what: str, where: str) -> M:
    """``value`` validated as ``model`` (config, totals), an error naming the field."""
    if name == "totals" and isinstance(value, dict) and "stats" in value:
        raise InputError(f"{what} has an unknown field 'totals.stats'", where)
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        holder = {name: value}
        raise InputError(f"{what} {_invalid(exc, holder, name)}", where) from None


def _fingerprints(value: Any, what: str, where: str) -> dict[str, str | None]:
    if type(value) is not dict:
        raise InputError(f"{what} field 'fingerprints': Input should be an object", where)
    _exact_keys(value, frozenset(_FINGERPRINT_KEYS), "fingerprints.", what, where)
    for key in _FINGERPRINT_KEYS:
        v = value[key]
        if v is not None and not (
            type(v) is str
            and v.startswith("sha256:")
            and len(v) == 71
            and all(ch in "0123456789abcdef" for ch in v[7:])
        ):
            raise InputError(
                f"{what} field 'fingerprints.{key}': Input should be null or "
                '"sha256:" and 64 hex digits',
                where,
            )
    return {key: value[key] for key in _FINGERPRINT_KEYS}


def _case(c: Any, i: int, what: str, where: str) -> BaselineCase:
    """One question, checked in one pass: the common, well-formed case costs a few type
    tests; anything else goes to :func:`_case_problem` for a message naming the field."""
    if (
        type(c) is dict
        and len(c) == 6
        and c.keys() == _CASE_KEYS
        and type(c["id"]) is str
        and type(r := c["retrieval"]) is dict
        and type(a := c["answer"]) is dict
        and len(r) == 4
        and r.keys() == _RETRIEVAL_KEYS
        and len(a) == 4
        and a.keys() == _ANSWER_KEYS
        and type(facts := r["facts"]) is int
        and type(retrieved := r["retrieved"]) is int
        and 0 <= retrieved <= facts <= MAX_COUNT
        and (r["hit"] is None or type(r["hit"]) is bool)
        and ((recall := r["recall"]) is None or (type(recall) is float and 0.0 <= recall <= 1.0))
        and (a["pass"] is None or type(a["pass"]) is bool)
        and type(runs := a["runs"]) is int
        and type(passes := a["passes"]) is int
        and 0 <= passes <= runs <= MAX_COUNT
        and type(problems := a["problems"]) is list
        and (not problems or all(type(p) is str for p in problems))
        and type(c["errored"]) is bool
        and (c["cause"] is None or type(c["cause"]) is str)
        and _are_rates(metrics := c["metrics"], _METRIC_SET)
    ):
        return BaselineCase(
            c["id"], r["hit"], recall, facts, retrieved, a["pass"], passes, runs,
            problems, c["errored"], c["cause"], metrics,
        )  # fmt: skip
    _case_problem(c, i, what, where)
    # well-formed after all: numbers written as integers (a hand-typed 1 for 1.0)
    return BaselineCase(
        c["id"], c["retrieval"]["hit"], _float(c["retrieval"]["recall"]), c["retrieval"]["facts"],
        c["retrieval"]["retrieved"], c["answer"]["pass"], c["answer"]["passes"],
        c["answer"]["runs"], c["answer"]["problems"], c["errored"], c["cause"],
        {k: float(v) for k, v in c["metrics"].items()},
    )  # fmt: skip


def _float(value: float | None) -> float | None:
    return None if value is None else float(value)


def _are_rates(values: Any, names: frozenset[str]) -> bool:
    return (
        type(values) is dict
        and values.keys() <= names
        and all(type(v) is float and 0.0 <= v <= 1.0 for v in values.values())
    )


def _case_problem(c: Any, i: int, what: str, where: str) -> None:
    """Raise the InputError that names what is wrong with case ``i``; return when only
    the number types differ from what ragrail writes (integers for rates)."""
    at = f"cases.{i}"
    if type(c) is not dict:
        raise InputError(f"{what} field {at!r}: Input should be an object", where)
    who = f" (case {c['id']!r})" if type(c.get("id")) is str else ""

    def bad(name: str, message: str, value: object = None) -> InputError:
        got = ""
        if isinstance(value, int | float) and not isinstance(value, bool):
            number = repr(value)
            got = f" (got {number if len(number) <= 40 else number[:20] + '…'})"
        return InputError(f"{what} field {at + '.' + name!r}{who}: {message}{got}", where)

    missing = sorted(_CASE_KEYS - c.keys())
    if missing:
        raise InputError(f"{what} field {at + '.' + missing[0]!r}{who} is missing", where)
    unknown = sorted(c.keys() - _CASE_KEYS)
    if unknown:
        raise InputError(f"{what} has an unknown field {at + '.' + unknown[0]!r}{who}", where)
    if type(c["id"]) is not str:
        raise bad("id", "Input should be a valid string")
    for group, keys in (("retrieval", _RETRIEVAL_KEYS), ("answer", _ANSWER_KEYS)):
        value = c[group]
        if type(value) is not dict:
            raise bad(group, "Input should be an object")
        missing = sorted(keys - value.keys())
        if missing:
            raise InputError(
                f"{what} field {f'{at}.{group}.{missing[0]}'!r}{who} is missing", where
            )
        unknown = sorted(value.keys() - keys)
        if unknown:
            raise InputError(
                f"{what} has an unknown field {f'{at}.{group}.{unknown[0]}'!r}{who}", where
            )
    r, a = c["retrieval"], c["answer"]
    for name, value in (
        ("retrieval.facts", r["facts"]),
        ("retrieval.retrieved", r["retrieved"]),
        ("answer.runs", a["runs"]),
        ("answer.passes", a["passes"]),
    ):
        _check_count(value, name, bad)
    if r["retrieved"] > r["facts"]:
        raise bad(
            "retrieval.retrieved",
            f"{r['retrieved']} is more than retrieval.facts ({r['facts']})",
        )
    if a["passes"] > a["runs"]:
        raise bad("answer.passes", f"{a['passes']} is more than answer.runs ({a['runs']})")
    for name, value in (("retrieval.hit", r["hit"]), ("answer.pass", a["pass"])):
        if value is not None and type(value) is not bool:
            raise bad(name, "Input should be a valid boolean or null")
    if r["recall"] is not None:
        _check_rate(r["recall"], "retrieval.recall", bad)
    if type(a["problems"]) is not list or not all(type(p) is str for p in a["problems"]):
        raise bad("answer.problems", "Input should be a list of strings")
    if type(c["errored"]) is not bool:
        raise bad("errored", "Input should be a valid boolean")
    if c["cause"] is not None and type(c["cause"]) is not str:
        raise bad("cause", "Input should be a valid string or null")
    metrics = c["metrics"]
    if type(metrics) is not dict:
        raise bad("metrics", "Input should be an object")
    unknown = sorted(metrics.keys() - _METRIC_SET)
    if unknown:
        raise InputError(
            f"{what} has an unknown field {f'{at}.metrics.{unknown[0]}'!r}{who}", where
        )
    for name in sorted(metrics):
        _check_rate(metrics[name], f"metrics.{name}", bad)


def _check_count(value: Any, name: str, bad: Any) -> None:
    if type(value) is not int:
        raise bad(name, "Input should be a valid integer", value)
    if value < 0:
        raise bad(name, "Input should be greater than or equal to 0", value)
    if value > MAX_COUNT:
        raise bad(name, f"Input should be less than or equal to {MAX_COUNT}", value)


def _check_rate(value: Any, name: str, bad: Any) -> None:
    if type(value) not in (int, float):
        raise bad(name, "Input should be a valid number")
    if type(value) is float and not math.isfinite(value):  # 1e400 reads as inf
        raise bad(name, "Input should be a finite number", value)
    if value < 0:
        raise bad(name, "Input should be greater than or equal to 0", value)
    if value > 1:
        raise bad(name, "Input should be less than or equal to 1", value)


def _unique_ids(cases: Iterable[BaselineCase], what: str, where: str) -> None:
    first: dict[str, int] = {}
    for i, case in enumerate(cases):
        j = first.setdefault(case.id, i)
        if j != i:
            raise InputError(
                f"{what} has case {case.id!r} twice (cases.{j} and cases.{i}): "
                "which one to compare with would be a guess",
                where,
            )
