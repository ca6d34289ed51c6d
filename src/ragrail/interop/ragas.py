"""RAGAS: import an ``EvaluationDataset``, export a run as one.

RAGAS writes a dataset with ``EvaluationDataset.to_jsonl`` (one
``SingleTurnSample`` a line, its fields ``user_input``, ``retrieved_contexts``,
``reference_contexts``, ``response``, ``reference``, each left out when unset),
``to_csv`` (the same columns, a list printed as Python prints it:
``['first passage', 'second passage']``) or as a JSON array of the same records.
Datasets from RAGAS 0.1 (``question``, ``contexts``, ``answer``,
``ground_truth`` or ``ground_truths``) are read too, as is a test set from its
generator (``synthesizer_name`` is ignored).

``response`` and ``retrieved_contexts`` make the outputs file, each passage keeping
its id from ``retrieved_context_ids`` (RAGAS's ids for its ID-based metrics) when
the sample has them, so an answer citing its system's own ids still cites them;
``reference_contexts`` (found in the documents) give each case its sources, and a
``reference`` of a few words found in a source becomes its fact. A multi-turn
sample's turns become a conversation (:mod:`ragrail.interop.conversations`): each
``HumanMessage`` a turn's question, the ``AIMessage`` after it its answer and the
``ToolMessage`` contents between them its retrieved contexts; ``reference`` (the
conversation's expected outcome) is its last turn's reference answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragrail.errors import InputError
from ragrail.interop.conversations import (
    OWN,
    Dropped,
    ExportTurn,
    Message,
    own_labels,
    text_field,
    turns,
)
from ragrail.interop.rows import (
    Columns,
    RawCase,
    RawContext,
    RawImport,
    as_text,
    read_items,
    rows_to_cases,
)
from ragrail.records.results import RunResult

COLUMNS = Columns(
    question=("user_input", "question"),
    id=("id",),
    answer=("response", "answer"),
    contexts=("retrieved_contexts", "contexts"),
    context_ids=("retrieved_context_ids",),
    reference=("reference", "ground_truth", "ground_truths"),
    reference_contexts=("reference_contexts",),
    reference_context_ids=("reference_context_ids",),
)
KINDS = {".jsonl": "JSON Lines", ".json": "JSON", ".csv": "CSV"}


def read(path: Path) -> RawImport:
    """A RAGAS dataset file (``.jsonl``, ``.json`` or ``.csv``) as raw cases (a
    ``MultiTurnSample``'s turns in order)."""
    dropped = Dropped()
    cases: list[RawCase] = []
    for item, where in read_items(path, "RAGAS dataset", list_keys=("samples",)):
        messages = _messages(item, where) if isinstance(item, dict) else None
        if messages is None:
            cases += rows_to_cases([(item, where)], COLUMNS)
            continue
        reference = as_text(item.get("reference"), "reference", where)
        cases += turns(messages, where, None, reference=reference, dropped=dropped)
        dropped.add(item, SAMPLE_DROPPED, "sample")
    kind = KINDS.get(path.suffix.lower(), path.suffix)
    return RawImport(
        path=path, label=f"RAGAS EvaluationDataset, {kind}", cases=cases, notes=dropped.note()
    )


# what a MultiTurnSample may hold that ragrail has no place for
SAMPLE_DROPPED = ("reference_topics", "reference_tool_calls", "rubrics")
ROLES = {"human": "user", "ai": "assistant", "tool": "tool"}


def _messages(item: dict[str, Any], where: str) -> list[Message] | None:
    """A ``MultiTurnSample``'s ``user_input`` as messages; None for a single question.
    ``to_csv`` prints the list as Python prints it (``[{'content': ..., 'type': 'human'}]``)."""
    value = item.get("user_input")
    if isinstance(value, str) and value.lstrip().startswith("[{"):
        import ast

        try:
            value = ast.literal_eval(value.strip())
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            raise InputError(
                "field 'user_input': a list of messages that does not parse", where
            ) from None
    if not isinstance(value, list):
        return None
    out = []
    for i, message in enumerate(value):
        key = f"user_input.{i}"
        if not isinstance(message, dict):
            raise InputError(f"field {key!r} must be an object (a message)", where)
        kind = message.get("type")
        if kind not in ROLES:
            raise InputError(
                f"field '{key}.type' must be 'human', 'ai' or 'tool', not {kind!r}", where
            )
        content = text_field(message.get("content"), f"{key}.content", where)
        metadata = message.get("metadata")
        contexts = []
        if kind == "tool" and content.strip():
            hint = metadata if isinstance(metadata, dict) else {}
            contexts = [
                RawContext(text=content, id=_text(hint.get("id")), hint=_text(hint.get("source")))
            ]
        own = own_labels(metadata, f"{key}.metadata", where) if kind == "human" else None
        out.append(Message(ROLES[kind], content, contexts, own))
    return out


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def sample(case: Any) -> dict[str, Any]:
    """A ragrail case result as a RAGAS ``SingleTurnSample`` record (unset fields left out,
    as ``to_jsonl`` leaves them out)."""
    record: dict[str, Any] = {
        "user_input": case.question,
        "retrieved_contexts": [c.text for c in case.trace.retrieved],
        "retrieved_context_ids": [c.id for c in case.trace.retrieved],
    }
    if case.trace.answer is not None:
        record["response"] = case.trace.answer
    return record


def multi_turn_text(units: list[list[ExportTurn]]) -> str:
    """Conversations as ``EvaluationDataset.to_jsonl`` writes ``MultiTurnSample``s, one a
    line: each turn's ``HumanMessage`` carries ragrail's labels in its ``metadata`` (the
    first also the conversation's id); from a run, the retrieval is an ``AIMessage``
    calling ``retrieve`` followed by a ``ToolMessage`` per passage (its ``metadata`` the
    chunk's id and document), then the answer as an ``AIMessage``. ``from_jsonl`` loads
    it; ``ragrail import ragas`` reads it back under the same ids."""
    lines = []
    for unit in units:
        messages: list[dict[str, Any]] = []
        for k, turn in enumerate(unit):
            own = {**turn.labels, **({"conversation": turn.conversation} if k == 0 else {})}
            messages.append({"content": turn.question, "metadata": {OWN: own}, "type": "human"})
            if turn.contexts:
                call = {"name": "retrieve", "args": {"query": turn.question}}
                messages.append({"content": "", "type": "ai", "tool_calls": [call]})
                messages += [
                    {"content": text, "metadata": {"id": cid, "source": source}, "type": "tool"}
                    for cid, source, text in turn.contexts
                ]
            if turn.answer is not None:
                messages.append({"content": turn.answer, "type": "ai"})
        lines.append(json.dumps({"user_input": messages}, ensure_ascii=False) + "\n")
    return "".join(lines)


def single_text(units: list[list[ExportTurn]]) -> str:
    """Single questions as ``SingleTurnSample``s (as :func:`sample` writes a run's); from a
    golden set the question alone, since a sample has no field for ragrail's labels."""
    lines = []
    for turn, *_ in units:
        record: dict[str, Any] = {"user_input": turn.question}
        if turn.contexts is not None:
            record["retrieved_contexts"] = [text for _, _, text in turn.contexts]
            record["retrieved_context_ids"] = [cid for cid, _, _ in turn.contexts]
        if turn.answer is not None:
            record["response"] = turn.answer
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    return "".join(lines)


def export_text(result: RunResult) -> str:
    """A run as an ``EvaluationDataset`` JSON Lines file, one sample per question, in the
    run's order: ``EvaluationDataset.from_jsonl`` reads it. The chunk ids go in
    ``retrieved_context_ids``, so importing the file back keeps the answers' citations.
    ragrail labels facts and articles, not reference answers, so ``reference`` is left
    out."""
    return "".join(json.dumps(sample(c), ensure_ascii=False) + "\n" for c in result.cases)
