"""What an import did, for a person: the lines ``ragrail import`` prints.

How many contexts were placed, which could not be and which were found in several
documents (each named, with the documents), what the golden set and the outputs file
hold, and what to put in the project file to use them: paths relative to the
project file's folder, as the project file reads its paths.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ragrail.interop.common import ImportResult

SHOWN = 5  # unplaced contexts and skipped cases listed by place; the rest counted


@dataclass(frozen=True)
class ProjectFile:
    """The project file an import is for: a path to put in it is relative to its folder,
    as the project file reads its paths."""

    path: Path  # as the user names it: ragrail.toml, site/ragrail.toml
    golden: Path  # the golden set it reads
    outputs: Path | None = None  # the outputs file it reads ([system] kind = "outputs")


def relative_to(path: Path, folder: Path) -> str:
    """``path`` (relative to the current folder) as seen from ``folder``, with ``/``
    (``../data/outputs.jsonl``); the absolute path where no relative one exists."""
    import os

    try:
        return Path(os.path.relpath(path.absolute(), folder.absolute())).as_posix()
    except ValueError:  # another drive
        return path.absolute().as_posix()


def _same_file(a: Path, b: Path) -> bool:
    return a.absolute().resolve() == b.absolute().resolve()


def _suggestions(
    project: ProjectFile | None, golden: Path | None, outputs: Path | None
) -> tuple[list[str], list[str]]:
    """What to put in the project file to use the golden set and the outputs written,
    with paths relative to the project file's folder (this folder when there is none)."""
    toml = project.path if project is not None else Path("ragrail.toml")
    folder = toml.parent
    use_golden: list[str] = []
    if project is not None and golden is not None and not _same_file(golden, project.golden):
        use_golden.append(
            f"  use it: golden = {json.dumps(relative_to(golden, folder), ensure_ascii=False)} "
            f"in {toml}"
        )
    use_outputs: list[str] = []
    if outputs is not None:
        if project is not None and project.outputs and _same_file(outputs, project.outputs):
            use_outputs.append(f"  score them: ragrail run ({toml} reads this file)")
        else:
            where = json.dumps(relative_to(outputs, folder), ensure_ascii=False)
            use_outputs.append(f'  score them: [system] kind = "outputs", path = {where} in {toml}')
    return use_golden, use_outputs


def summary(
    result: ImportResult,
    file: Path,
    docs: Path,
    golden: Path | None,
    outputs: Path | None,
    project: ProjectFile | None = None,
) -> list[str]:
    """What an import did, for a person: the lines ``ragrail import`` prints. Paths to
    put in the project file are relative to its folder."""
    raw, build, tally = result.raw, result.golden, result.tally
    use_golden, use_outputs = _suggestions(project, golden, outputs)
    out = [f"read {_read([c.turn for c in raw.cases])} from {file} ({raw.label})"]
    if tally.total:
        out.append(f"{tally.line()} (documents: {docs})")
        out += _listed("not placed", tally.unplaced)
        ambiguous = tally.ambiguities()
        out += [f"  in several documents: {line}" for line in ambiguous]
    if build is not None and golden is not None:
        out.append(f"golden set: {_read([c.turn for c in build.cases])} written to {golden}")
        out += use_golden
        if build.from_reference:
            out.append(f"  {_n(build.from_reference, 'fact')} taken from short reference answers")
        if build.without_facts:
            out.append(
                f"  {_n(len(build.without_facts), 'case')} without facts (no reference answer "
                "short enough to be one): add facts by hand, then run `ragrail lint`"
            )
        if build.sources_from_facts:
            several = build.several_sources
            out.append(
                f"  sources of {_n(len(build.sources_from_facts), 'case')} are the documents "
                "holding their facts"
                + (f"; in several documents: {', '.join(several)} (check them)" if several else "")
            )
        if build.facts_not_found:
            out.append(
                f"  {_n(len(build.facts_not_found), 'fact')} not found in its case's sources:"
            )
            out += _listed("", build.facts_not_found)
        if build.abstain:
            out.append(
                f"  {_n(build.abstain, 'case')} the documents do not cover (the reference says so)"
            )
        if build.skipped:
            out.append(f"  skipped {_n(len(build.skipped), 'case')} that could not be labelled:")
            out += _listed("", build.skipped)
    if result.records is not None and outputs is not None:
        answers = sum(1 for r in result.records if "answer" in r)
        out.append(
            f"outputs: {_n(len(result.records), 'record')} ({_n(answers, 'answer')}) "
            f"written to {outputs}"
        )
        out += use_outputs
        out += uncited(result)
    return out + [f"note: {note}" for note in raw.notes]


def uncited(result: ImportResult) -> list[str]:
    """A line for the answers citing an id (``[x#n]``) that none of their imported
    contexts carries: each will score as citing a chunk it was never given. Said apart
    when the file gave its contexts no ids at all, since then the cause is the file (each
    context got its section's id), not the answer."""
    from ragrail.scoring.answers import citation_key, citations

    found: list[str] = []
    for record in result.records or []:
        ids = [str(c["id"]) for c in record["contexts"]]
        given = set(map(citation_key, ids))
        missing = [c for c in citations(record.get("answer") or "", None, ids) if c not in given]
        if missing:
            found.append(f"{record['id']}: {', '.join(dict.fromkeys(missing))}")
    if not found:
        return []
    shown = "; ".join(found[:3]) + (f"; ... {len(found) - 3} more" if len(found) > 3 else "")
    cite = (
        "cites an id none of its contexts carries"
        if len(found) == 1
        else ("cite ids none of their contexts carry")
    )
    line = f"  {_n(len(found), 'answer')} {cite} ({shown}): scored as citing a chunk never given"
    if not any(ctx.id for case in result.raw.cases for ctx in case.contexts or []):
        line += (
            ". The file gives its contexts no ids, so each got its section's id: to keep the "
            "app's own, export them with the contexts (RAGAS retrieved_context_ids, hf "
            "--map context_ids=COLUMN, a trace's document.id)"
        )
    return [line]


def _read(turns_of: list[int | None]) -> str:
    """``6 cases``, or ``3 conversations (8 turns) and 2 cases``, from each case's turn."""
    turns = sum(1 for t in turns_of if t is not None)
    if not turns:
        return _n(len(turns_of), "case")
    conversations = _n(turns_of.count(1), "conversation")
    singles = len(turns_of) - turns
    return f"{conversations} ({_n(turns, 'turn')})" + (
        f" and {_n(singles, 'case')}" if singles else ""
    )


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _listed(label: str, items: list[str]) -> list[str]:
    """The first few items, one a line, and how many more."""
    prefix = f"  {label}: " if label else "    "
    more = [f"{prefix}... and {len(items) - SHOWN} more"] if len(items) > SHOWN else []
    return [prefix + item for item in items[:SHOWN]] + more
