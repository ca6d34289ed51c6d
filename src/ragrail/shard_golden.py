"""A shard's record (:class:`ShardInfo`, :class:`ShardRun`), where a case goes
(:func:`shard_of`), and whether merged shards ran the golden set as it is now
(:func:`ragrail.shards.merge`).

The shards' own fingerprint says which golden set they ran; the project's golden set may
have changed since (a case added, removed or edited on another commit), and merging would
then report on questions that never ran as if they had. Each shard also records a digest
of every case's fields (:func:`case_digest`), so an edited question is caught as well as
an added or removed one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ConfigDict, Field

from ragrail.errors import InputError
from ragrail.records.lean import LeanModel

if TYPE_CHECKING:
    from ragrail.records.case import Case, GoldenSet
    from ragrail.records.results import CaseResult, RunResult


class ShardInfo(LeanModel):
    """What a shard's results say about the whole run they are a part of."""

    model_config = ConfigDict(extra="forbid")

    index: int = Field(ge=0)
    count: int = Field(ge=1)
    n_cases: int = Field(ge=0)  # questions in the whole golden set
    golden: str  # golden_fingerprint() of the whole golden set
    settings: str  # settings_fingerprint(): what scoring read beyond the run's config
    own_system: bool  # the user's system: top_k and n_chunks come from the traces
    # models_fingerprint(): the answerer's and judge's settings that change a reply
    models: str = ""
    positions: list[int] = Field(default_factory=list)  # each case's place in the golden set
    # shard_golden.case_digest() of each case, in the order of positions: the merge finds
    # the cases edited since the shard ran. Empty in the files of a ragrail without it.
    digests: list[str] = Field(default_factory=list)


@dataclass
class ShardRun:
    """One shard's results file, read and checked on its own."""

    path: Path
    info: ShardInfo
    run: RunResult


def shard_of(case_id: str, count: int) -> int:
    """The shard of a case: the first 64 bits of the SHA-256 of its id, modulo ``count``."""
    return int(hashlib.sha256(case_id.encode("utf-8")).hexdigest()[:16], 16) % count


def shard_key(case: Case | CaseResult) -> str:
    """What places a case in a shard: its conversation's id for a turn (a conversation is
    asked turn after turn, so its turns stay in one shard), else its own id."""
    return case.conversation or case.id


def golden_fingerprint(ids: Iterable[str]) -> str:
    """SHA-256 over the case ids in order (each as a JSON string and a newline)."""
    digest = hashlib.sha256()
    for case_id in ids:
        digest.update(json.dumps(case_id).encode() + b"\n")
    return digest.hexdigest()


def case_digest(case: Case) -> str:
    """The first 64 bits of the SHA-256 of a case's fields, as hex: any edit that can
    change its evaluation (question, sources, facts, expect, checks, tags) changes it.
    ``provenance`` is left out: where a case came from changes no score."""
    fields = case.model_dump(mode="json", exclude={"provenance"})
    text = json.dumps(fields, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def check_golden(shards: Sequence[ShardRun], golden: GoldenSet) -> None:
    """The shards evaluated ``golden`` as it is now: the same cases in the same order
    (else the merge would say "no regressions" of a golden set it never ran), each shard
    exactly its slice of it (else the file is named), and no case edited since."""
    first = shards[0]
    count, now = first.info.count, [c.id for c in golden.cases]
    if golden_fingerprint(now) != first.info.golden:
        raise _golden_changed(shards, golden)
    slices: dict[int, list[tuple[int, str]]] = {}
    for position, case in enumerate(golden.cases):
        slices.setdefault(shard_of(shard_key(case), count), []).append((position, case.id))
    for shard in shards:
        wanted = slices.get(shard.info.index, [])
        held = list(zip(shard.info.positions, [c.id for c in shard.run.cases], strict=True))
        if held != wanted:
            wanted_set, held_set = set(wanted), set(held)
            extra = [h for h in held if h not in wanted_set]
            lost = [w for w in wanted if w not in held_set]
            if extra:
                detail = f"it has case {extra[0][1]!r} at position {extra[0][0]}"
            elif lost:
                detail = f"case {lost[0][1]!r} is missing"
            else:
                detail = "its cases are out of order"
            raise InputError(
                f"is not shard {shard.info.index}/{count} of the golden set it names "
                f"({detail}): a hand-edited file?",
                str(shard.path),
            )
    edited = sorted(
        p
        for s in shards
        for p, digest in zip(s.info.positions, s.info.digests, strict=False)
        if digest != case_digest(golden.cases[p])
    )
    if edited:
        ids = [now[p] for p in edited]
        raise InputError(
            f"{_cases(ids)} edited since the shards ran: run every shard again on this "
            "golden set",
            _where(golden, ids[0]),
        )


def _golden_changed(shards: Sequence[ShardRun], golden: GoldenSet) -> InputError:
    """Why ``golden`` is not the golden set the shards ran: the cases they did not
    evaluate, and those they evaluated that it no longer has."""
    placed = sorted(
        (p, c.id) for s in shards for p, c in zip(s.info.positions, s.run.cases, strict=True)
    )
    ran = [i for _, i in placed]
    now = [c.id for c in golden.cases]
    ran_set, now_set = set(ran), set(now)
    added = [i for i in now if i not in ran_set]
    gone = [i for i in ran if i not in now_set]
    parts = []
    if added:
        parts.append(f"{_cases(added)} not evaluated")
    if gone:
        parts.append(f"{_cases(gone)} evaluated but no longer in it")
    if not parts:
        parts.append("the same cases in another order")
    return InputError(
        f"has changed since the shards ran ({'; '.join(parts)}): merging would report on "
        "a golden set that never ran; run every shard again on this golden set",
        _where(golden, added[0] if added else None),
    )


def _cases(ids: Sequence[str], shown: int = 5) -> str:
    """``1 case ('a')`` or ``7 cases ('a', 'b', 'c', 'd', 'e' and 2 more)``."""
    names = ", ".join(repr(i) for i in ids[:shown])
    more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
    return f"{len(ids)} case{'s' if len(ids) != 1 else ''} ({names}{more})"


def _where(golden: GoldenSet, case_id: str | None) -> str:
    line = golden.lines.get(case_id) if case_id is not None else None
    return f"{golden.path}:{line}" if line else str(golden.path)
