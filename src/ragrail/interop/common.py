"""How what an importer read becomes ragrail's files.

An importer (:mod:`ragrail.interop.rows` has the pieces) reads another tool's
file into raw cases. This module then

- gives each case an id (the tool's own, else a slug of its name or question);
- labels it for the golden set: ``sources`` are the documents its reference
  passages are found in (:mod:`ragrail.interop.placing`), else the documents
  that hold its facts; ``facts`` are the tool's own (promptfoo asserts, SQuAD
  answers), else a reference answer of a few words found verbatim in a source.
  A longer reference answer is a sentence, not a fact: the case gets no facts,
  and the report says so. A case that cannot be labelled is left out and
  named, never written as an "I don't know" case;
- writes the golden set and the outputs file (``[system] kind = "outputs"``)
  as text, which the command checks by reading it back before it replaces
  anything.

:mod:`ragrail.interop.summary` says what an import did.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ragrail.errors import InputError
from ragrail.interop.placing import Placer, Tally
from ragrail.interop.rows import RawCase, RawImport, one_of
from ragrail.records.case import Case, turn_id
from ragrail.text.matching import Fact, parse_fact, slug

SHORT_REFERENCE_WORDS = 8  # a reference answer this short, found verbatim, is a fact
ID_WORDS = 6  # words of a question or name that make a case id


# ---------------------------------------------------------------- ids


def assign_ids(cases: Sequence[RawCase]) -> list[str]:
    """An id per case: the tool's own (which must be unique), else a slug of its name
    or of its question's first words, numbered when two would be the same. A
    conversation's turns (consecutive, numbered from 1) are ``"<conversation> turn <k>"``,
    the conversation named by the tool or by a slug of its first question."""
    units = _units(cases)
    ids: list[str | None] = [None] * len(units)
    first: dict[str, str] = {}
    for i, unit in enumerate(units):
        head = cases[unit[0]]
        own = head.conversation if head.turn is not None else head.id
        if own is not None and own.strip():
            if own in first:
                raise InputError(f"id {own!r} is given twice (first at {first[own]})", head.where)
            first[own] = head.where
            ids[i] = own
    used = set(first)
    for i, unit in enumerate(units):
        if ids[i] is None:
            case = cases[unit[0]]
            text = " ".join((case.name or case.question).split()[:ID_WORDS])
            base = slug(text)[:60].strip("-.") if any(ch.isalnum() for ch in text) else ""
            base = base or "case"
            candidate, n = base, 2
            while candidate in used:
                candidate, n = f"{base}-{n}", n + 1
            used.add(candidate)
            ids[i] = candidate
    out: list[str] = []
    for unit, unit_id in zip(units, ids, strict=True):
        if cases[unit[0]].turn is None:
            out.append(unit_id or "")
        else:
            out += [turn_id(unit_id or "", k) for k in range(1, len(unit) + 1)]
    return out


def _units(cases: Sequence[RawCase]) -> list[list[int]]:
    """The indexes of each single question, and of each conversation's turns together (a
    conversation starts at its turn 1)."""
    units: list[list[int]] = []
    for i, case in enumerate(cases):
        if case.turn is not None and case.turn > 1 and units:
            units[-1].append(i)
        else:
            units.append([i])
    return units


# ---------------------------------------------------------------- the golden set


@dataclass
class GoldenBuild:
    cases: list[Case] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "file:line: reason"
    from_reference: int = 0  # cases whose fact is their short reference answer
    without_facts: list[str] = field(default_factory=list)  # ids of answerable cases
    abstain: int = 0  # cases whose reference answer says the documents do not cover it
    sources_from_facts: list[str] = field(default_factory=list)  # ids: sources where facts are
    several_sources: list[str] = field(default_factory=list)  # "id (doc, doc)": in several
    facts_not_found: list[str] = field(default_factory=list)  # "id: fact" not in its sources


def short_reference(text: str) -> str | None:
    """A reference answer that is itself a fact (a few words: ``30 days``,
    ``Settings > Profile``), with a final full stop dropped; None for a sentence."""
    text = text.strip()
    if text.endswith(".") and not text.endswith(".."):
        text = text[:-1].rstrip()
    if not any(ch.isalnum() for ch in text) or len(text.split()) > SHORT_REFERENCE_WORDS:
        return None
    return text


@dataclass
class Labels:
    """What one case could be labelled with, and how."""

    sources: list[str]
    facts: list[Fact]
    from_reference: bool = False  # the fact is the short reference answer
    from_facts: bool = False  # the sources are where the facts are


def label(case: RawCase, placer: Placer) -> Labels:
    """A case's sources (where its reference contexts are, else where its facts are) and
    facts (the tool's own, else its reference answer when that is a few words found in a
    source); either may come back empty."""
    facts = _parse_facts(case.facts, case.where)
    sources = _unique(
        p.source
        for i, ctx in enumerate(case.reference_contexts, start=1)
        if (
            p := placer.place(ctx.text, ctx.hint or ctx.id, f"{case.where} (reference context {i})")
        )
    )
    out = Labels(sources=sources, facts=facts)
    if not out.sources and facts:
        out.sources = _where_facts_are(facts, placer)
        out.from_facts = bool(out.sources)
    shorts = [s for r in case.references if (s := short_reference(r)) is not None]
    where = set(out.sources or placer.names)
    found = [s for s in shorts if set(placer.documents_with(s)) & where] if not facts else []
    if found:
        out.facts = _parse_facts([one_of(found)], case.where)
        out.from_reference = True
        if not out.sources:
            out.sources = _where_facts_are(out.facts, placer)
            out.from_facts = True
    return out


def build_golden(raw: RawImport, ids: Sequence[str], placer: Placer) -> GoldenBuild:
    """Label every case that can be labelled (see the module docstring), counting how. A
    conversation is kept whole or left out whole: turn k is asked after turns 1..k-1."""
    out = GoldenBuild()
    for unit in _units(raw.cases):
        part = GoldenBuild()
        reasons = [
            (raw.cases[i].turn, _label_one(raw.cases[i], ids[i], placer, part)) for i in unit
        ]
        head = raw.cases[unit[0]]
        turn, reason = next(((k, r) for k, r in reasons if r is not None), (None, None))
        if reason is not None:
            name = ids[unit[0]] if head.turn is None else ids[unit[0]].rsplit(" turn ", 1)[0]
            whole = "" if head.turn is None else f" ({len(unit)} turns) left out whole: turn {turn}"
            out.skipped.append(f"{head.where}: {name}{whole}: {reason}")
            continue
        out.cases += part.cases
        out.from_reference += part.from_reference
        out.abstain += part.abstain
        for name in ("without_facts", "sources_from_facts", "several_sources", "facts_not_found"):
            getattr(out, name).extend(getattr(part, name))
    return out


def _label_one(case: RawCase, case_id: str, placer: Placer, out: GoldenBuild) -> str | None:
    """Label one case into ``out``; why it cannot be labelled, or None."""
    from ragrail.scoring.answers import abstains

    if case.own is not None:  # ragrail's own labels, carried through the other tool's file
        made = _case(case, case_id, [], [], own=case.own)
        out.cases.append(made)
        where = set(made.sources)
        out.facts_not_found += [
            f"{case_id}: {f}"
            for f in made.facts
            if where and not set(placer.documents_with(f)) & where
        ]
        return None
    labels = label(case, placer)
    sources, facts = labels.sources, labels.facts
    out.from_reference += labels.from_reference
    if labels.from_facts:
        out.sources_from_facts.append(case_id)
        if len(sources) > 1:
            out.several_sources.append(f"{case_id} ({', '.join(sources)})")
    for fact in facts:
        if sources and not set(placer.documents_with(fact)) & set(sources):
            out.facts_not_found.append(f"{case_id}: {fact}")
    if not sources and case.references and all(abstains(r) for r in case.references):
        facts = []
        out.abstain += 1
    elif not sources:
        reason = (
            "no reference context or fact of it was found in the documents"
            if case.has_labels
            else "it has no reference answer, context or fact to label it with"
        )
        return reason
    elif not facts:
        out.without_facts.append(case_id)
    out.cases.append(_case(case, case_id, sources, facts))
    return None


# what ragrail's export carries of a case's labels, and reads back as they are
OWN_LABELS = ("sources", "facts", "expect", "tags", "checks")


def _case(
    case: RawCase,
    case_id: str,
    sources: list[str],
    facts: list[Any],
    own: dict[str, Any] | None = None,
) -> Case:
    data: dict[str, Any] = {
        "id": case_id,
        "question": case.question,
        "sources": sources,
        "facts": [f.raw() for f in facts],
    }
    if case.checks:
        data["checks"] = case.checks
    if own is not None:
        data.update({k: own[k] for k in OWN_LABELS if k in own})
    if case.turn is not None:
        data["conversation"] = case_id.rsplit(" turn ", 1)[0]
        data["turn"] = case.turn
    try:
        return Case.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        at = ".".join(str(p) for p in err["loc"]) or "case"
        msg = str(err["msg"]).removeprefix("Value error, ")
        raise InputError(f"case {case_id!r}: {at}: {msg}", case.where) from None


def _parse_facts(facts: Iterable[Any], where: str) -> list[Any]:
    out = []
    for raw_fact in facts:
        try:
            out.append(parse_fact(raw_fact))
        except ValueError as exc:
            raise InputError(f"fact {raw_fact!r}: {exc}", where) from None
    return list(dict.fromkeys(out))


def _where_facts_are(facts: Sequence[Any], placer: Placer) -> list[str]:
    """The documents holding the most of the facts (a fact in every document tells
    nothing about which one answers), in the folder's order."""
    counts: dict[str, int] = {}
    for fact in facts:
        for name in placer.documents_with(fact):
            counts[name] = counts.get(name, 0) + 1
    best = max(counts.values(), default=0)
    return [name for name in placer.names if best and counts.get(name) == best]


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def golden_text(cases: Sequence[Case], path: Path) -> str:
    """The golden set in the format ``path``'s suffix names: a JSON array with one case
    a line, JSON Lines, YAML or CSV."""
    rows = _entries(cases)
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if suffix in (".yaml", ".yml"):
        import yaml

        return yaml.safe_dump(rows, allow_unicode=True, sort_keys=False, width=100)
    if suffix == ".csv":
        return _golden_csv(cases, path)
    if suffix == ".json":
        body = ",\n".join("  " + json.dumps(r, ensure_ascii=False) for r in rows)
        return f"[\n{body}\n]\n"
    raise InputError(
        f"unknown golden-set format {path.suffix or '(no extension)'!r}; "
        "use .json, .jsonl, .yaml or .csv",
        str(path),
    )


def _entries(cases: Sequence[Case]) -> list[dict[str, Any]]:
    """A golden entry per single question, and one with ``turns`` per conversation."""
    from ragrail.golden.add import conversation_entry

    out: list[dict[str, Any]] = []
    turns: list[Case] = []
    for i, case in enumerate(cases):
        if case.conversation is None:
            out.append(_case_data(case))
            continue
        turns.append(case)
        following = cases[i + 1] if i + 1 < len(cases) else None
        if following is None or following.conversation != case.conversation:
            out.append(conversation_entry(turns))
            turns = []
    return out


def _case_data(case: Case) -> dict[str, Any]:
    data = case.model_dump(exclude_defaults=True, exclude={"grades"})
    return {
        "id": data["id"],
        "question": data["question"],
        "sources": data.get("sources", []),
        "facts": data.get("facts", []),
        **{k: v for k, v in data.items() if k not in ("id", "question", "sources", "facts")},
    }


def _golden_csv(cases: Sequence[Case], path: Path) -> str:
    from ragrail.golden import LIST_SEPARATOR, csv_facts_cell

    if any(c.checks for c in cases):
        raise InputError("a CSV golden set cannot hold checks; write .json or .yaml", str(path))
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    turns = any(c.conversation is not None for c in cases)
    writer.writerow(["id", "question", "sources", "facts"] + (["conversation", "turn"] * turns))
    for c in cases:
        facts = csv_facts_cell(list(c.facts)) if c.facts else ""
        row = [c.id, c.question, LIST_SEPARATOR.join(c.sources), facts]
        if turns:
            row += [c.conversation or "", str(c.turn or "")]
        writer.writerow(row)
    return buf.getvalue()


# ---------------------------------------------------------------- the outputs file


def build_outputs(raw: RawImport, ids: Sequence[str], placer: Placer) -> list[dict[str, Any]]:
    """One outputs record per case the file holds a run for (an answer, passages or an
    error): ``{id, question, answer, contexts: [{id, source, text, score}]}``, each
    passage placed in the documents; one that cannot be placed keeps no source.

    A passage keeps the id the tool recorded (its system's own: the answers cite it),
    which also names its document where the text cannot decide; one without an id gets
    the id of the section holding it, else ``unplaced#<rank>``."""
    records = []
    for case, case_id in zip(raw.cases, ids, strict=True):
        if not case.has_output:
            continue
        contexts = []
        for rank, ctx in enumerate(case.contexts or [], start=1):
            where = f"{case.where} (retrieved context {rank})"
            placed = placer.place(ctx.text, ctx.hint or ctx.id, where)
            entry: dict[str, Any] = {
                "id": ctx.id or (placed.chunk_id if placed else f"unplaced#{rank}"),
            }
            if placed:
                entry["source"] = placed.source
            entry["text"] = ctx.text
            if ctx.score is not None:
                entry["score"] = ctx.score
            contexts.append(entry)
        record: dict[str, Any] = {"id": case_id, "question": case.question}
        if case.answer is not None:
            record["answer"] = case.answer
        if case.error is not None:
            record["error"] = case.error
        record["contexts"] = contexts
        records.append(record)
    return records


def outputs_text(records: Sequence[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, allow_nan=False) + "\n" for r in records)


# ---------------------------------------------------------------- the whole import


@dataclass
class ImportResult:
    raw: RawImport
    golden: GoldenBuild | None
    records: list[dict[str, Any]] | None
    tally: Tally


def import_file(
    raw: RawImport, docs: Path, golden: bool = True, outputs: bool = True
) -> ImportResult:
    """Label and place what an importer read; nothing is written."""
    if not raw.cases:
        raise InputError("the file holds no cases", str(raw.path))
    placer = Placer(docs)
    ids = assign_ids(raw.cases)
    build = build_golden(raw, ids, placer) if golden else None
    if build is not None and not build.cases:
        first = f" ({build.skipped[0]})" if build.skipped else ""
        raise InputError(f"no case could be labelled for a golden set{first}", str(raw.path))
    records = build_outputs(raw, ids, placer) if outputs else None
    if records is not None and not records:
        raise InputError(
            "the file holds no answers or retrieved contexts for an outputs file", str(raw.path)
        )
    return ImportResult(raw=raw, golden=build, records=records, tally=placer.tally)
