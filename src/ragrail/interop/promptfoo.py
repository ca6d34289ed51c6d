"""promptfoo: the test cases of a config (``promptfooconfig.yaml``) or a tests file.

A config holds ``tests:`` (a list, or ``file://`` paths of YAML, JSON or CSV
files holding lists) and ``defaultTest:`` (asserts and vars every test gets);
a tests file is the list itself. Each test has ``vars`` (one of them the
question: ``question``, ``query``, ``input``, ``prompt``, or the only var; name
another with ``--map question=VAR``), ``assert`` and ``description``. A CSV
tests file has a column per var and ``__expected`` columns written as
promptfoo writes them (``icontains: refund``, ``contains-any: a,b``, a plain
value meaning ``equals``), ``__description`` for the name.

Asserts become labels:

- ``contains``, ``icontains``, ``equals`` (as containment), each item of
  ``contains-all`` / ``icontains-all``: a fact;
- ``contains-any`` / ``icontains-any``: a fact with alternatives, ``{"any": [...]}``;
- ``regex``: a fact ``{"regex": ...}``;
- ``not-contains``, ``not-icontains``, ``not-regex``, each item of
  ``not-contains-any``: a ``not_contains`` check; ``is-json``: a ``json`` check.

The rest (``llm-rubric``, ``similar``, ``javascript``, ``python``, ...) need a model
or code and are counted, not imported. A test's sources are the documents its
``context`` var is found in, else the documents holding its facts. promptfoo
test cases hold no answers, so only a golden set is written.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from ragrail.errors import InputError
from ragrail.fileio import BOM, read_text
from ragrail.golden.formats import yaml_document
from ragrail.interop.rows import RawCase, RawContext, RawImport, as_text_list, csv_items, one_of
from ragrail.jsonio import json_array_items, parse_json

QUESTION_VARS = ("question", "query", "input", "prompt", "user_input", "q")
CONTEXT_VARS = ("context", "contexts")
MAP_FIELDS = ("question", "reference_contexts")
BASE_TYPES = (
    "answer-relevance bleu classifier contains contains-all contains-any contains-html "
    "contains-json contains-sql contains-xml context-faithfulness context-recall "
    "context-relevance cost equals factuality finish-reason g-eval gleu guardrails icontains "
    "icontains-all icontains-any is-html is-json is-refusal is-sql is-valid-function-call "
    "is-valid-openai-function-call is-valid-openai-tools-call is-xml javascript latency "
    "levenshtein llm-rubric meteor model-graded-closedqa model-graded-factuality moderation "
    "perplexity perplexity-score pi python regex rouge-n ruby select-best similar starts-with "
    "webhook word-count"
).split()
_CSV_ASSERT = re.compile(
    rf"^(not-)?({'|'.join(map(re.escape, BASE_TYPES))})(?:\((\d+(?:\.\d+)?)\))?(?::([\s\S]*))?$"
)
_TEMPLATE = re.compile(r"\{\{\s*([A-Za-z_][\w]*)\s*\}\}")


def read(path: Path, mapping: dict[str, str] | None = None) -> RawImport:
    """A promptfoo config or tests file as raw cases (labels only)."""
    mapping = mapping or {}
    unknown = [k for k in mapping if k not in MAP_FIELDS]
    if unknown:
        raise InputError(
            f"--map {unknown[0]}=...: for promptfoo, map {' and '.join(MAP_FIELDS)} to a var name"
        )
    skipped: Counter[str] = Counter()
    notes: list[str] = []
    default: dict[str, Any] = {}
    tests = _load(path)
    if isinstance(tests, dict):
        config = tests
        default_test = config.get("defaultTest") or {}
        if isinstance(default_test, dict):
            default = default_test
        else:
            notes.append("defaultTest given as a file was not read")
        if "tests" not in config:
            raise InputError("no 'tests' in this promptfoo config", str(path))
        tests = _referenced(config["tests"], path)
    cases = []
    for test, where in tests:
        case = _case(test, where, default, mapping, skipped, notes)
        if case is not None:
            cases.append(case)
    if skipped:
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(skipped.items()))
        notes.append(
            f"asserts not imported (they need a model or code, or apply to a transform): {kinds}"
        )
    return RawImport(
        path=path, label="promptfoo test cases", cases=cases, notes=notes, outputs=False
    )


def _load(path: Path) -> Any:
    """The file's tests with their ``file:line`` (a list), or a config (a dict)."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        rows = csv_items(read_text(path, "promptfoo tests file").removeprefix(BOM), path)
        return [(_csv_test(row, where), where) for row, where in rows]
    if suffix == ".json":
        text = read_text(path, "promptfoo file")
        items = json_array_items(text, path)
        if items is not None:
            return [(item, f"{path}:{line}") for item, line in items]
        data = parse_json(text, path)
        if isinstance(data, dict) and isinstance(data.get("tests"), list):
            data = {
                **data,
                "tests": [(t, f"{path}: tests.{i}") for i, t in enumerate(data["tests"])],
            }
        return _checked_top(data, path)
    if suffix in (".yaml", ".yml"):
        return _yaml(path)
    raise InputError(
        f"unknown file type {path.suffix or '(no extension)'!r}; use .yaml, .yml, .json or .csv",
        str(path),
    )


def _checked_top(data: Any, path: Path) -> Any:
    if isinstance(data, dict | list):
        return data
    raise InputError("expected a promptfoo config (with tests:) or a list of tests", str(path))


def _yaml(path: Path) -> Any:
    """A YAML config or tests list, each test paired with its ``file:line``."""
    import yaml

    text = read_text(path, "promptfoo file").removeprefix(BOM)
    data, root = yaml_document(text, path, yaml.SafeLoader)
    data = _checked_top(data, path)
    seq = root
    if isinstance(data, dict) and isinstance(root, yaml.MappingNode):
        seq = next((v for k, v in root.value if k.value == "tests"), None)
    if isinstance(seq, yaml.SequenceNode):
        items = data if isinstance(data, list) else data.get("tests")
        if isinstance(items, list) and len(items) == len(seq.value):
            paired = [
                (t, f"{path}:{n.start_mark.line + 1}")
                for t, n in zip(items, seq.value, strict=True)
            ]
            return paired if isinstance(data, list) else {**data, "tests": paired}
    return data


def _referenced(tests: Any, path: Path) -> list[tuple[Any, str]]:
    """The config's tests: inline (already paired with lines), or ``file://`` paths."""
    refs = [tests] if isinstance(tests, str) else tests
    if not isinstance(refs, list):
        raise InputError("'tests' must be a list of tests or of file:// paths", str(path))
    out: list[tuple[Any, str]] = []
    for i, ref in enumerate(refs):
        item, where = ref if isinstance(ref, tuple) else (ref, f"{path}: tests.{i}")
        if not isinstance(item, str):
            out.append((item, where))
            continue
        name = item.removeprefix("file://")
        if any(ch in name for ch in "*?[") or "://" in name:
            raise InputError(f"tests entry {item!r}: only plain file:// paths are read", where)
        loaded = _load(path.parent / name)
        if not isinstance(loaded, list):
            raise InputError("a tests file must hold a list of tests", str(path.parent / name))
        out.extend(loaded)
    return out


def _csv_test(row: dict[str, str], where: str) -> dict[str, Any]:
    """A CSV row as promptfoo reads it: vars, and asserts from ``__expected`` cells."""
    test: dict[str, Any] = {"vars": {}, "assert": []}
    for key, value in row.items():
        if key.startswith("__expected"):
            if value.strip():
                test["assert"].append(_assertion_from_string(value))
        elif key == "__description":
            test["description"] = value
        elif not key.startswith("__"):
            test["vars"][key] = value
    return test


def _assertion_from_string(expected: str) -> dict[str, Any]:
    """promptfoo's reading of an ``__expected`` cell (``csv.ts``)."""
    for prefix, kind in (
        ("javascript:", "javascript"),
        ("fn:", "javascript"),
        ("eval:", "javascript"),
        ("grade:", "llm-rubric"),
        ("llm-rubric:", "llm-rubric"),
        ("python:", "python"),
    ):
        if expected.startswith(prefix):
            return {"type": kind, "value": expected[len(prefix) :].strip()}
    if expected.startswith("file://"):
        return {"type": "javascript", "value": expected}
    m = _CSV_ASSERT.match(expected)
    if not m:
        return {"type": "equals", "value": expected}
    kind = (m.group(1) or "") + m.group(2)
    value = m.group(4) or ""
    if m.group(2) in ("contains-all", "contains-any", "icontains-all", "icontains-any"):
        return {"type": kind, "value": [v.strip() for v in value.split(",")]}
    return {"type": kind, "value": value}


def _case(
    test: Any,
    where: str,
    default: dict[str, Any],
    mapping: dict[str, str],
    skipped: Counter[str],
    notes: list[str],
) -> RawCase | None:
    if not isinstance(test, dict):
        raise InputError("each test must be an object with vars and assert", where)
    variables = {**_vars(default.get("vars"), where), **_vars(test.get("vars"), where)}
    name = _question_var(variables, mapping, where)
    question = variables[name]
    if not isinstance(question, str) or question.startswith("file://"):
        notes.append(
            f"{where}: skipped: var {name!r} is not one question's text (a list or a file)"
        )
        return None
    if not question.strip():
        raise InputError(f"var {name!r} (the question) is empty", where)
    description = test.get("description")
    case = RawCase(
        where=where,
        question=question,
        name=description if isinstance(description, str) and description.strip() else None,
    )
    context_var = mapping.get("reference_contexts") or next(
        (v for v in CONTEXT_VARS if v in variables), None
    )
    if context_var and context_var in variables:
        texts = as_text_list(variables[context_var], f"vars.{context_var}", where)
        case.reference_contexts = [RawContext(text=t) for t in texts if not t.startswith("file://")]
    asserts = [*_asserts(default.get("assert"), where), *_asserts(test.get("assert"), where)]
    for a in asserts:
        _label(a, variables, case, skipped, where)
    return case


def _vars(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError("'vars' must be a mapping of names to values", where)
    return value


def _asserts(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError("'assert' must be a list", where)
    return value


def _question_var(variables: dict[str, Any], mapping: dict[str, str], where: str) -> str:
    named = mapping.get("question")
    if named:
        if named not in variables:
            raise InputError(f"--map question={named}: this test has no var {named!r}", where)
        return named
    plain = [v for v in variables if v not in CONTEXT_VARS]
    for candidate in QUESTION_VARS:
        if candidate in variables:
            return candidate
    if len(plain) == 1:
        return plain[0]
    shown = ", ".join(variables) or "none"
    raise InputError(
        f"which var is the question? pass --map question=VAR (this test's vars: {shown})", where
    )


def _label(
    a: Any, variables: dict[str, Any], case: RawCase, skipped: Counter[str], where: str
) -> None:
    """Turn one assert into a fact or a check on ``case``; count it when it has none."""
    if not isinstance(a, dict) or not isinstance(a.get("type"), str):
        raise InputError("each assert must be an object with a 'type'", where)
    kind = a["type"]
    if "transform" in a or kind == "assert-set":
        skipped[kind] += 1
        return
    value = _render(a.get("value"), variables)
    if value is None:
        skipped[kind] += 1
        return
    negated = kind.startswith("not-")
    base = kind.removeprefix("not-")
    if base in ("contains", "icontains", "equals") and isinstance(value, str | int | float):
        text = str(value).strip()
        if negated and base != "equals":
            case.checks.append({"type": "not_contains", "value": text})
        elif not negated and text:
            case.facts.append(text)
        else:
            skipped[kind] += 1
    elif base in ("contains-all", "icontains-all", "contains-any", "icontains-any"):
        items = _comma_list(value)
        if not items:
            skipped[kind] += 1
        elif negated and base.endswith("any"):
            case.checks.extend({"type": "not_contains", "value": v} for v in items)
        elif negated:
            skipped[kind] += 1  # "not all of them": no one check says it
        elif base.endswith("all"):
            case.facts.extend(items)
        else:
            case.facts.append(one_of(items))
    elif base == "regex" and isinstance(value, str) and value:
        if negated:
            case.checks.append({"type": "not_contains", "value": value, "regex": True})
        else:
            case.facts.append({"regex": value})
    elif kind == "is-json":
        case.checks.append({"type": "json"})
    else:
        skipped[kind] += 1


def _render(value: Any, variables: dict[str, Any]) -> Any:
    """An assert's value with ``{{var}}`` filled in from the test's vars; None when it
    holds template code ragrail cannot run (filters, ``{% %}``)."""
    if isinstance(value, list):
        rendered = [_render(v, variables) for v in value]
        return None if any(v is None for v in rendered) else rendered
    if not isinstance(value, str):
        return value
    filled = _TEMPLATE.sub(
        lambda m: (
            str(variables[m.group(1)])
            if isinstance(variables.get(m.group(1)), str | int | float)
            else m.group(0)
        ),
        value,
    )
    return None if "{{" in filled or "{%" in filled else filled


def _comma_list(value: Any) -> list[str]:
    """A list value, or a comma-separated string as promptfoo splits it (a part in double
    quotes may hold a comma)."""
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    if not isinstance(value, str):
        return []
    parts = re.findall(r'\s*(?:"((?:[^"\\]|\\.)*)"|([^,]*))\s*(?:,|$)', value)
    return [(q or p).strip() for q, p in parts if (q or p).strip()]
