"""Reading a baseline: compact (version 2), or a whole saved run (``schema_version`` 1).

Every field is checked in one pass over the questions, the common well-formed case
with a few type tests; a problem is an InputError (exit 2) naming the file, the field
and the question.

A compact baseline's JSON is parsed by pydantic-core, in Rust: less than half the time
of Python's json with the duplicate-key hook :func:`ragrail.jsonio.parse_json` calls
for each of the 400,000 objects of a 100,000-question file. It is as strict: NaN and
Infinity are refused, and a key given twice is found by counting colons (see
:func:`_colons`). Whatever that fast path does not take, it hands to ``parse_json``,
whose errors name the line and the field.
"""

from __future__ import annotations

import json
import math
from itertools import chain
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ragrail.errors import InputError
from ragrail.fileio import BOM, read_text
from ragrail.gcpause import paused_gc
from ragrail.jsonio import parse_json
from ragrail.records.results import JUDGE, RunConfig, Totals, _invalid, parse_run
from ragrail.store.baseline.records import (
    CASE_METRICS,
    FINGERPRINT_KEYS,
    FORMAT,
    MAX_COUNT,
    READS,
    Baseline,
    BaselineCase,
    read_stages,
)

M = TypeVar("M", bound=BaseModel)

_TOP_KEYS = frozenset({"cases", "config", "fingerprints", "format", "totals", "version"})
_CASE_KEYS = frozenset({"answer", "cause", "errored", "id", "metrics", "retrieval"})
_RETRIEVAL_KEYS = frozenset({"facts", "found", "hit", "recall", "retrieved"})
_ANSWER_KEYS = frozenset({"checks", "pass", "passes", "problems", "runs"})
# version 2 kept neither the checks nor the facts found
_RETRIEVAL_KEYS_V2 = _RETRIEVAL_KEYS - {"found"}
_ANSWER_KEYS_V2 = _ANSWER_KEYS - {"checks"}
_METRIC_SET = frozenset(CASE_METRICS)
# keys of a case, its retrieval and its answer: none holds a colon
_KEYS_PER_CASE = len(_CASE_KEYS) + len(_RETRIEVAL_KEYS) + len(_ANSWER_KEYS)
_KEYS_PER_CASE_V2 = len(_CASE_KEYS) + len(_RETRIEVAL_KEYS_V2) + len(_ANSWER_KEYS_V2)


def load_baseline(path: Path, what: str = "baseline") -> Baseline:
    """Load a baseline, compact (version 2) or a whole saved run (``schema_version`` 1).

    Every problem is an InputError (exit 2) naming the file and the field: broken
    JSON, a NaN or infinite number, a value out of its range, a missing or unknown
    field, a key given twice, more passes than answers, a case id given twice.
    """
    with paused_gc():
        return read_baseline_text(read_text(path, what), path, what)


def read_baseline_text(text: str, path: Path | str, what: str = "baseline") -> Baseline:
    """A baseline from the text of its file; see :func:`load_baseline`."""
    # parse_json drops one byte-order mark itself: it gets the text as read, or a file
    # that starts with two would be read (the fast parser refuses the second, and
    # parse_json would drop it)
    body = text.removeprefix(BOM)
    data = _fast_json(body)
    if type(data) is dict and "format" in data:
        try:
            base = _parse_compact(data, path, what)
        except InputError:
            parse_json(text, path)  # a JSON problem (a key given twice) is named first
            raise
        # a \u003a escape is a colon in a string that the text does not show as one
        if "\\u003" not in body and _colons(data, base) == body.count(":"):
            return base
    return parse_baseline(parse_json(text, path), path, what)


def _fast_json(text: str) -> Any:
    """``text`` parsed by pydantic-core, or None where it refuses it (broken JSON, NaN,
    a lone surrogate escape, nesting too deep): ``parse_json`` then names the problem.
    Its numbers are Python's own: each float is the one ``json`` reads."""
    from pydantic_core import from_json

    try:
        return from_json(text, allow_inf_nan=False)
    except ValueError:
        return None


def _colons(data: dict[str, Any], base: Baseline) -> int:
    """The colons a JSON text of the parsed ``data`` has: one after each key, plus
    those inside its keys and strings.

    The file's text has as many, unless an object gives a key twice: the parser keeps
    one pair, and the colons of the pairs it dropped are missing here (a ``\\u003a``
    escape, which adds one, is checked for apart). The questions are counted from
    ``base``, their keys known: the six of a case, four of its retrieval, four of its
    answer, and its metrics'.
    """
    cases = base.cases
    v2 = data.get("version") == 2
    keys = (_KEYS_PER_CASE_V2 if v2 else _KEYS_PER_CASE) * len(cases)
    keys += sum([len(c.metrics) + len(c.checks or ()) for c in cases])
    strings = chain(
        [c.id for c in cases],
        [c.cause for c in cases if c.cause],
        chain.from_iterable([c.problems for c in cases]),
        chain.from_iterable([c.checks for c in cases if c.checks]),
        chain.from_iterable([c.found for c in cases if c.found]),
    )
    head = sum(1 + k.count(":") + (_colons_in(v) if k != "cases" else 0) for k, v in data.items())
    return head + keys + "".join(strings).count(":")


def _colons_in(value: Any) -> int:
    """Colons of ``value``'s JSON text: one after each key, and those in its strings."""
    if type(value) is str:
        return value.count(":")
    if type(value) is dict:
        return sum(1 + k.count(":") + _colons_in(v) for k, v in value.items())
    if type(value) is list:
        return sum(map(_colons_in, value))
    return 0


def parse_baseline(data: Any, path: Path | str, what: str = "baseline") -> Baseline:
    """A baseline from its parsed JSON; see :func:`load_baseline`."""
    if isinstance(data, dict) and "format" in data:
        return _parse_compact(data, path, what)
    return Baseline.from_run(parse_run(data, path, what))


def _parse_compact(data: dict[str, Any], path: Path | str, what: str) -> Baseline:
    where = str(path)
    if data.get("format") != FORMAT:
        raise InputError(
            f"{what} has format {_shown(data.get('format'))}; "
            f"this ragrail reads {json.dumps(FORMAT)}",
            where,
        )
    version = data.get("version")
    if type(version) is not int or version not in READS:  # true and 2.0 are not 2
        raise InputError(
            f"{what} has version {_shown(version)}; this ragrail reads "
            f"{' and '.join(map(str, READS))}. Re-create it with --save-baseline",
            where,
        )
    _exact_keys(data, _TOP_KEYS, "", what, where)
    config = _model(RunConfig, data["config"], "config", what, where)
    totals = _model(Totals, data["totals"], "totals", what, where)
    prints = _fingerprints(data["fingerprints"], what, where)
    raw = data["cases"]
    if type(raw) is not list:
        raise InputError(f"{what} field 'cases': Input should be a valid list", where)
    v2 = version == 2
    cases = [_case(c, i, what, where, v2) for i, c in enumerate(raw)]
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
    _exact_keys(value, frozenset(FINGERPRINT_KEYS), "fingerprints.", what, where)
    for key in FINGERPRINT_KEYS:
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
    return {key: value[key] for key in FINGERPRINT_KEYS}


def _case(c: Any, i: int, what: str, where: str, v2: bool = False) -> BaselineCase:
    """One question, checked in one pass: the common, well-formed case costs a few type
    tests; anything else goes to :func:`_case_problem` for a message naming the field.
    ``v2``: a version 2 file, whose questions keep no checks and no found facts."""
    retrieval_keys, answer_keys = (
        (_RETRIEVAL_KEYS_V2, _ANSWER_KEYS_V2) if v2 else (_RETRIEVAL_KEYS, _ANSWER_KEYS)
    )
    if not v2 and type(c) is dict and type(r := c.get("retrieval")) is dict and "stages" in r:
        # a staged run's question: its stages apart, the rest read as any question's
        rest = {k: v for k, v in r.items() if k != "stages"}
        case = _case({**c, "retrieval": rest}, i, what, where)
        case.stages = read_stages(r["stages"], f"cases.{i}.retrieval.stages", what, where)
        return case
    if (
        type(c) is dict
        and len(c) == 6
        and c.keys() == _CASE_KEYS
        and type(c["id"]) is str
        and type(r := c["retrieval"]) is dict
        and type(a := c["answer"]) is dict
        and r.keys() == retrieval_keys
        and a.keys() == answer_keys
        and (v2 or _are_counts(a["checks"], a["runs"]))
        and (v2 or _are_strings(r["found"]))
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
            problems, c["errored"], c["cause"], metrics, a.get("checks"), r.get("found"),
        )  # fmt: skip
    _case_problem(c, i, what, where, retrieval_keys, answer_keys)
    # well-formed after all: numbers written as integers (a hand-typed 1 for 1.0)
    return BaselineCase(
        c["id"], c["retrieval"]["hit"], _float(c["retrieval"]["recall"]), c["retrieval"]["facts"],
        c["retrieval"]["retrieved"], c["answer"]["pass"], c["answer"]["passes"],
        c["answer"]["runs"], c["answer"]["problems"], c["errored"], c["cause"],
        {k: float(v) for k, v in c["metrics"].items()}, c["answer"].get("checks"),
        c["retrieval"].get("found"),
    )  # fmt: skip


def _are_counts(values: Any, runs: Any) -> bool:
    """``values`` is an object of counts from 0 to ``runs`` (1 for a judge criterion)."""
    if type(values) is not dict or type(runs) is not int:
        return False
    for name, v in values.items():
        top = 1 if name.startswith(JUDGE) else runs
        if type(v) is not int or not 0 <= v <= top:
            return False
    return True


def _are_strings(values: Any) -> bool:
    if type(values) is not list:
        return False
    for v in values:  # noqa: SIM110 - a loop, not all(): most lists hold one or two
        if type(v) is not str:
            return False
    return True


def _float(value: float | None) -> float | None:
    return None if value is None else float(value)


def _are_rates(values: Any, names: frozenset[str]) -> bool:
    """``values`` is an object of floats in [0, 1] named among ``names``."""
    if type(values) is not dict or not values.keys() <= names:
        return False
    for v in values.values():  # noqa: SIM110 - a loop, not all(): half the time
        if type(v) is not float or not 0.0 <= v <= 1.0:
            return False
    return True


def _case_problem(
    c: Any,
    i: int,
    what: str,
    where: str,
    retrieval_keys: frozenset[str] = _RETRIEVAL_KEYS,
    answer_keys: frozenset[str] = _ANSWER_KEYS,
) -> None:
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
    for group, keys in (("retrieval", retrieval_keys), ("answer", answer_keys)):
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
            newer = unknown[0] in ("checks", "found")
            hint = ' (a version 3 field: does the file say "version": 2?)' if newer else ""
            raise InputError(
                f"{what} has an unknown field {f'{at}.{group}.{unknown[0]}'!r}{who}{hint}", where
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
    if "checks" in a:
        checks = a["checks"]
        if type(checks) is not dict:
            raise bad("answer.checks", "Input should be an object")
        for name in sorted(checks):
            _check_count(checks[name], f"answer.checks.{name}", bad)
            judged = name.startswith(JUDGE)
            top = 1 if judged else a["runs"]
            if checks[name] > top:
                raise bad(
                    f"answer.checks.{name}",
                    f"{checks[name]} is more than "
                    + ("1 (a judge criterion)" if judged else f"answer.runs ({top})"),
                )
    if "found" in r and not _are_strings(r["found"]):
        raise bad("retrieval.found", "Input should be a list of strings")
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


def _unique_ids(cases: list[BaselineCase], what: str, where: str) -> None:
    if len({c.id for c in cases}) == len(cases):
        return
    first: dict[str, int] = {}
    for i, case in enumerate(cases):
        j = first.setdefault(case.id, i)
        if j != i:
            raise InputError(
                f"{what} has case {case.id!r} twice (cases.{j} and cases.{i}): "
                "which one to compare with would be a guess",
                where,
            )
