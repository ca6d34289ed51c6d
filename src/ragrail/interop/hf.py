"""Hugging Face datasets: a dataset saved with ``Dataset.to_json`` or ``to_csv``.

``to_json`` writes JSON Lines by default (one record a line, as pandas writes
records: ``{"question":"...","contexts":["..."]}``, ``/`` escaped, non-ASCII as
``\\uXXXX``), or a JSON array with ``lines=False``; ``to_csv`` writes a header
and a list cell as numpy prints an array (``['first' 'second']``). Parquet is
not read: save the dataset as JSON Lines.

Columns are guessed by their usual names (RAGAS-style ``question``,
``contexts``, ``answer``, ``ground_truth``; SQuAD-style ``context`` and
``answers``) and can be named with ``--map FIELD=COLUMN`` (a dotted name reads
inside an object: ``answers.text``). The fields:

- ``question`` (required), ``id``;
- ``answer`` and ``contexts``: the system's answer and retrieved passages (the
  outputs file); ``context_ids``: the system's own id of each passage, in the same
  order (kept in the outputs file, so the answers' citations still cite them);
- ``reference`` (a reference answer, or a list of them), ``reference_contexts``
  (the passage or passages that answer it: they give the case its sources),
  ``facts`` (a list, every item needed), ``answers`` (alternatives of one
  answer, SQuAD's ``{"text": [...], "answer_start": [...]}``): the golden set;
  ``reference_context_ids``: ids of the reference passages (a name among them
  decides where a passage found in several documents belongs).
"""

from __future__ import annotations

from pathlib import Path

from ragrail.errors import InputError
from ragrail.interop.rows import Columns, RawImport, lookup, read_items, rows_to_cases

COLUMNS = Columns(
    question=("question", "user_input", "query", "input", "prompt"),
    id=("id", "_id", "qid", "question_id"),
    answer=("answer", "response", "actual_output", "generated_answer", "prediction"),
    contexts=("contexts", "retrieved_contexts", "retrieval_context", "passages"),
    context_ids=("context_ids", "retrieved_context_ids", "passage_ids"),
    reference=("ground_truth", "ground_truths", "reference", "expected_output", "reference_answer"),
    reference_contexts=("reference_contexts", "context", "gold_context"),
    reference_context_ids=("reference_context_ids",),
    facts=("facts",),
    answers=("answers",),
)
KINDS = {".jsonl": "JSON Lines", ".ndjson": "JSON Lines", ".json": "JSON", ".csv": "CSV"}


def parse_mapping(pairs: tuple[str, ...] | list[str]) -> dict[str, str]:
    """``FIELD=COLUMN`` pairs (``--map question=query``) as a mapping; an unknown field
    or a pair without ``=`` is a usage error naming it."""
    mapping: dict[str, str] = {}
    for pair in pairs:
        field, sep, column = pair.partition("=")
        field = field.strip()
        if not sep or not field:
            raise InputError(f"--map {pair!r}: write FIELD=COLUMN, e.g. question=query")
        if field not in Columns.FIELDS:
            raise InputError(
                f"--map {pair!r}: unknown field {field!r}; use one of {', '.join(Columns.FIELDS)}"
            )
        if field in mapping:
            raise InputError(f"--map names {field!r} twice")
        mapping[field] = column.strip()
    return mapping


def read(path: Path, mapping: dict[str, str] | None = None) -> RawImport:
    """A Hugging Face dataset file as raw cases; ``mapping`` names columns."""
    items = read_items(path, "dataset file", list_keys=("data", "rows"))
    for field, column in (mapping or {}).items():
        if column and not any(
            isinstance(i, dict) and lookup(i, column) is not None for i, _ in items
        ):
            raise InputError(f"--map {field}={column}: no record has a field {column!r}", str(path))
    cases = rows_to_cases(items, COLUMNS.remapped(mapping or {}))
    kind = KINDS.get(path.suffix.lower(), path.suffix)
    return RawImport(path=path, label=f"Hugging Face dataset, {kind}", cases=cases)
