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

DeepEval keeps a passage's text, not its id. ragrail's export writes the ids beside
them (``context_ids`` in ragrail's metadata of the golden or the assistant turn) and the
import gives them back, so answers citing their system's own ids still cite them.

``actual_output`` and ``retrieval_context`` make the outputs file; ``context``
(DeepEval's ideal retrieval for the input) gives each case its sources, and an
``expected_output`` of a few words found in a source becomes its fact; ``name``
is the case id. A ``ConversationalGolden`` (``scenario``, ``turns``), or a test run's
``conversationalTestCases``, is a conversation (:mod:`ragrail.interop.conversations`):
``context`` gives each turn its sources and ``expected_outcome`` its last turn a fact.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ragrail.errors import InputError
from ragrail.fileio import BOM, read_text
from ragrail.interop.conversations import (
    OWN,
    Dropped,
    ExportTurn,
    Message,
    listed,
    own_labels,
    text_field,
    turns,
)
from ragrail.interop.rows import (
    RawCase,
    RawContext,
    RawImport,
    as_text,
    as_text_list,
    first_present,
    lookup,
    read_items,
)
from ragrail.jsonio import json_array_items, parse_json

DELIMITER = "|"  # DeepEval's join of a list in one CSV or JSONL cell
_MARKER = re.compile(r"^deepeval_source=(?P<source>.*?),deepeval_context=(?P<context>.*)$", re.S)
KINDS = {".jsonl": "JSON Lines", ".json": "JSON", ".csv": "CSV"}


LIST_KEYS = ("testCases", "testRunData.testCases", "goldens", "test_cases")
# a test run keeps its conversations apart from its single questions
CONVERSATION_KEYS = ("conversationalTestCases", "testRunData.conversationalTestCases")


def read(path: Path) -> RawImport:
    """A DeepEval dataset or test-run file as raw cases (a conversation's turns in order)."""
    dropped = Dropped()
    cases: list[RawCase] = []
    for item, where in _items(path):
        if isinstance(item, dict) and ("turns" in item or item.get("scenario")):
            cases += _conversation(item, where, dropped)
        else:
            cases.append(_case(item, where))
    kind = KINDS.get(path.suffix.lower(), path.suffix)
    return RawImport(
        path=path, label=f"DeepEval dataset, {kind}", cases=cases, notes=dropped.note()
    )


def _items(path: Path) -> list[tuple[Any, str]]:
    """The goldens or test cases of the file; a test run's JSON gives both its
    ``testCases`` and its ``conversationalTestCases``."""
    if path.suffix.lower() == ".json":
        text = read_text(path, "DeepEval file").removeprefix(BOM)
        if json_array_items(text, path) is None:
            data = parse_json(text, path)
            if isinstance(data, dict) and any(
                lookup(data, k) is not None for k in CONVERSATION_KEYS
            ):
                return [
                    (item, f"{path}: {key}.{i}")
                    for key in (*LIST_KEYS, *CONVERSATION_KEYS)
                    if isinstance(found := lookup(data, key), list)
                    for i, item in enumerate(found)
                ]
    return read_items(path, "DeepEval file", list_keys=(*LIST_KEYS, *CONVERSATION_KEYS))


def _conversation(item: dict[str, Any], where: str, dropped: Dropped) -> list[RawCase]:
    """A ``ConversationalGolden`` (or a test run's conversational test case) as its turns:
    ``name`` is the conversation's id, ``context`` every turn's reference contexts and
    ``expected_outcome`` its last turn's reference answer."""
    raw_turns = item.get("turns")
    if isinstance(raw_turns, str):  # save_as("csv") writes the turns as one JSON cell
        try:
            raw_turns = json.loads(raw_turns) if raw_turns.strip() else None
        except ValueError:
            raise InputError("field 'turns' must hold the turns as a JSON list", where) from None
    messages = []
    for i, turn in enumerate(listed(raw_turns or [], "turns", where)):
        key = f"turns.{i}"
        if not isinstance(turn, dict):
            raise InputError(f"field {key!r} must be an object (a turn)", where)
        role = turn.get("role")
        if role not in ("user", "assistant"):
            raise InputError(
                f"field '{key}.role' must be 'user' or 'assistant', not {role!r}", where
            )
        rkey, value = first_present(turn, ("retrieval_context", "retrievalContext"))
        mkey, metadata = first_present(
            turn, ("metadata", "additional_metadata", "additionalMetadata")
        )
        contexts = _contexts(value, f"{key}.{rkey}", where) if rkey else []
        messages.append(
            Message(
                role=role,
                content=text_field(turn.get("content"), f"{key}.content", where),
                contexts=own_ids(contexts, metadata, f"{key}.{rkey}", where),
                own=own_labels(metadata, f"{key}.{mkey}", where) if role == "user" else None,
            )
        )
        dropped.add(turn, TURN_DROPPED, "turn")
    okey, outcome = first_present(item, ("expected_outcome", "expectedOutcome"))
    out = turns(
        messages,
        where,
        as_text(item.get("name"), "name", where),
        reference=as_text(outcome, okey or "expected_outcome", where),
        reference_contexts=_contexts(item.get("context"), "context", where),
        dropped=dropped,
    )
    ours = bool(out) and out[0].own is not None  # ragrail's own export: its scenario is its own
    dropped.add(item, CONVERSATION_DROPPED[ours:], "conversation")
    return out


# what a conversation and a turn may hold that ragrail has no place for
CONVERSATION_DROPPED = ("scenario", "user_description", "userDescription", "persona", "comments")
TURN_DROPPED = ("tools_called", "toolsCalled", "mcp_tools_called", "audio")


def _case(item: Any, where: str) -> RawCase:
    if not isinstance(item, dict):
        raise InputError("each golden must be an object", where)
    question = as_text(item.get("input"), "input", where)
    if question is None or not question.strip():
        raise InputError("no question: field 'input' is missing or empty", where)
    case = RawCase(where=where, question=question, id=as_text(item.get("name"), "name", where))
    key, metadata = first_present(item, ("additional_metadata", "additionalMetadata"))
    case.own = own_labels(metadata, key or "additional_metadata", where)
    key, value = first_present(item, ("actual_output", "actualOutput"))
    case.answer = as_text(value, key or "actual_output", where)
    key, value = first_present(item, ("expected_output", "expectedOutput"))
    reference = as_text(value, key or "expected_output", where)
    case.references = [reference] if reference and reference.strip() else []
    case.reference_contexts = _contexts(item.get("context"), "context", where)
    key, value = first_present(item, ("retrieval_context", "retrievalContext"))
    if key is not None:
        case.contexts = own_ids(_contexts(value, key, where), metadata, key, where)
    return case


def own_ids(contexts: list[RawContext], metadata: Any, key: str, where: str) -> list[RawContext]:
    """``contexts`` with the ids ragrail's export wrote beside them (``context_ids`` under
    ``ragrail`` in the metadata, one per passage), when it did; else as they are."""
    own = metadata.get(OWN) if isinstance(metadata, dict) else None
    ids = own.get("context_ids") if isinstance(own, dict) else None
    if ids is None:
        return contexts
    if (
        not isinstance(ids, list)
        or len(ids) != len(contexts)
        or not all(isinstance(i, str) and i.strip() for i in ids)
    ):
        raise InputError(
            f"metadata '{OWN}.context_ids' must hold one id (a string) per passage of "
            f"{key!r}: {len(contexts)} passages",
            where,
        )
    for context, context_id in zip(contexts, ids, strict=True):
        context.id = context_id
    return contexts


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


# ---------------------------------------------------------------- export


def export_text(units: list[list[ExportTurn]]) -> str:
    """Questions as ``EvaluationDataset.save_as("json")`` writes them (a JSON array indented
    by 4): a single question a ``Golden``, a conversation a ``ConversationalGolden`` whose
    user turns carry ragrail's labels in ``metadata`` and, from a run, whose assistant turns
    are the system's answers with their ``retrieval_context`` (each passage marked with its
    document, as DeepEval marks a ``RetrievedContextData``). DeepEval's
    ``add_goldens_from_json_file`` loads it; ``ragrail import deepeval`` reads it back."""
    records = [
        _conversation_record(u) if u[0].conversation else _golden_record(u[0]) for u in units
    ]
    return json.dumps(records, indent=4, ensure_ascii=False) + "\n"


def _marks(turn: ExportTurn) -> list[str] | None:
    if not turn.contexts:
        return None
    return [
        f"deepeval_source={source},deepeval_context={text}" for _, source, text in turn.contexts
    ]


def _golden_record(turn: ExportTurn) -> dict[str, Any]:
    return {
        "input": turn.question,
        "actual_output": turn.answer,
        "expected_output": None,
        "retrieval_context": _marks(turn),
        "context": None,
        "name": turn.id,
        "comments": None,
        "source_file": None,
        "tools_called": None,
        "expected_tools": None,
        "additional_metadata": {OWN: {**turn.labels, **_ids(turn)}},
        "custom_column_key_values": None,
    }


def _ids(turn: ExportTurn) -> dict[str, list[str]]:
    """The passages' ids, beside the passages (DeepEval has no field for them)."""
    return {"context_ids": [cid for cid, _, _ in turn.contexts]} if turn.contexts else {}


def _turn(role: str, content: str, retrieval: list[str] | None, metadata: Any) -> dict[str, Any]:
    """A turn as DeepEval's ``format_turns`` writes it: every field, unset ones null."""
    return {
        "role": role,
        "content": content,
        "user_id": None,
        "retrieval_context": retrieval,
        "tools_called": None,
        "mcp_tools_called": None,
        "mcp_resources_called": None,
        "mcp_prompts_called": None,
        "metadata": metadata,
    }


def _conversation_record(unit: list[ExportTurn]) -> dict[str, Any]:
    messages = []
    for turn in unit:
        messages.append(_turn("user", turn.question, None, {OWN: turn.labels}))
        if turn.answer is not None:
            ids = _ids(turn)
            messages.append(
                _turn("assistant", turn.answer, _marks(turn), {OWN: ids} if ids else None)
            )
    return {
        "scenario": scenario(unit),
        "turns": messages,
        "expected_outcome": None,
        "user_description": None,
        "persona": None,
        "context": None,
        "name": unit[0].conversation,
        "comments": None,
        "additional_metadata": None,
        "custom_column_key_values": None,
    }


def scenario(unit: list[ExportTurn]) -> str:
    """A ``ConversationalGolden`` needs a scenario (DeepEval's simulator plays it): the
    questions the user asks, in order."""
    return "The user asks, one after the other: " + " / ".join(t.question for t in unit)
