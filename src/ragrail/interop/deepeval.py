"""DeepEval: a dataset saved with ``EvaluationDataset.save_as``, or a test run.

``save_as("json", ...)`` writes a JSON array (indented by 4) of goldens:
``input``, ``actual_output``, ``expected_output``, ``retrieval_context`` and
``context`` (lists), ``name``, ``comments``, ``source_file``, ...; older versions
write only ``input``, ``actual_output``, ``expected_output``, ``context``,
``source_file``. ``save_as("jsonl")`` and ``save_as("csv")`` write the same
fields with each list joined by ``|``. A retrieved passage DeepEval knows the
source of is written ``deepeval_source=SOURCE,deepeval_context=TEXT``. A test
run's JSON (``{"testCases": [...]}``, camelCase: ``actualOutput``,
``expectedOutput``, ``retrievalContext``) is read too.

``actual_output`` and ``retrieval_context`` make the outputs file; ``context``
(DeepEval's ideal retrieval for the input) gives each case its sources, and an
``expected_output`` of a few words found in a source becomes its fact; ``name``
is the case id.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ragrail.errors import InputError
from ragrail.interop.rows import (
    RawCase,
    RawContext,
    RawImport,
    as_text,
    as_text_list,
    first_present,
    read_items,
)

DELIMITER = "|"  # DeepEval's join of a list in one CSV or JSONL cell
_MARKER = re.compile(r"^deepeval_source=(?P<source>.*?),deepeval_context=(?P<context>.*)$", re.S)
KINDS = {".jsonl": "JSON Lines", ".json": "JSON", ".csv": "CSV"}


def read(path: Path) -> RawImport:
    """A DeepEval dataset or test-run file as raw cases."""
    items = read_items(
        path,
        "DeepEval file",
        list_keys=("testCases", "testRunData.testCases", "goldens", "test_cases"),
    )
    cases = [_case(item, where) for item, where in items]
    kind = KINDS.get(path.suffix.lower(), path.suffix)
    return RawImport(path=path, label=f"DeepEval dataset, {kind}", cases=cases)


def _case(item: Any, where: str) -> RawCase:
    if not isinstance(item, dict):
        raise InputError("each golden must be an object", where)
    if "turns" in item or "scenario" in item:
        raise InputError(
            "a conversational golden (turns, scenario): ragrail imports single questions", where
        )
    question = as_text(item.get("input"), "input", where)
    if question is None or not question.strip():
        raise InputError("no question: field 'input' is missing or empty", where)
    case = RawCase(where=where, question=question, id=as_text(item.get("name"), "name", where))
    key, value = first_present(item, ("actual_output", "actualOutput"))
    case.answer = as_text(value, key or "actual_output", where)
    key, value = first_present(item, ("expected_output", "expectedOutput"))
    reference = as_text(value, key or "expected_output", where)
    case.references = [reference] if reference and reference.strip() else []
    case.reference_contexts = _contexts(item.get("context"), "context", where)
    key, value = first_present(item, ("retrieval_context", "retrievalContext"))
    if key is not None:
        case.contexts = _contexts(value, key, where)
    return case


def _contexts(value: Any, key: str, where: str) -> list[RawContext]:
    """Passages from a list, or from one cell joined by ``|``; each either plain text,
    ``{"context": ..., "source": ...}`` or the ``deepeval_source=...`` marker."""
    if isinstance(value, list):
        items = [
            _marked(v["context"], v.get("source"))
            if isinstance(v, dict) and isinstance(v.get("context"), str)
            else _marked(as_text(v, f"{key}.{i}", where) or "")
            for i, v in enumerate(value)
        ]
    else:
        items = [_marked(t) for t in as_text_list(value, key, where, delimiter=DELIMITER)]
    return [c for c in items if c.text.strip()]


def _marked(text: str, source: Any = None) -> RawContext:
    m = _MARKER.match(text)
    if m:
        return RawContext(text=m.group("context"), hint=m.group("source") or None)
    return RawContext(text=text, hint=source if isinstance(source, str) else None)
