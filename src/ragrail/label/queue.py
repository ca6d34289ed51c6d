"""The two queues a person labels: a run's judged answers (one item per answer and
criterion) and a sample of logged conversations (one item per conversation)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragrail.errors import InputError

if TYPE_CHECKING:
    from ragrail.judge.config import CriterionConfig
    from ragrail.online.record import Conversation
    from ragrail.records.results import CaseResult, RunResult

FAITHFULNESS = "faithfulness"


@dataclass(frozen=True)
class Passage:
    """A retrieved passage shown beside an answer: its document and text."""

    source: str
    text: str
    id: str = ""


@dataclass(frozen=True)
class JudgedItem:
    """One answer's verdict on one criterion, as the judge gave it in the run."""

    case_id: str
    criterion: str
    scale: str  # "pass_fail" or "1-5"
    question: str
    answer: str
    passages: tuple[Passage, ...]
    judge: float  # 1/0, or the 1-5 score
    reason: str

    @property
    def key(self) -> tuple[str, str]:
        return self.case_id, self.criterion


def _judge_verdict(case: CaseResult, criterion: str, scale: str) -> tuple[float, str] | None:
    """The judge's verdict as ``judge validate`` compares it with people (None: no verdict)."""
    j = case.judge
    if j is None:
        return None
    prefix = FAITHFULNESS if criterion == FAITHFULNESS else "rubric"
    if any(e.startswith(prefix) for e in j.errors):
        return None
    if criterion == FAITHFULNESS:
        if j.faithfulness is None:
            return None
        reason = "; ".join(f"unsupported: {c.text}" for c in j.claims if not c.supported)
        return (1.0 if j.faithfulness == 1.0 else 0.0), reason or "every claim supported"
    found = next((x for x in j.criteria if x.name == criterion), None)
    if found is None:
        return None
    if scale == "pass_fail":
        return None if found.passed is None else ((1.0 if found.passed else 0.0), found.reason)
    return None if found.score is None else (float(round(found.score)), found.reason)


def judged_items(run: RunResult, criteria: Sequence[CriterionConfig] = ()) -> list[JudgedItem]:
    """Every answer of ``run`` the judge gave a verdict, once per criterion, in the run's
    order (an answer's criteria together: faithfulness first). A criterion's scale is the
    project's ``[judge]`` one, else read from the verdicts (a score: 1-5)."""
    scales = {c.name: c.scale for c in criteria}
    items: list[JudgedItem] = []
    for case in run.cases:
        if case.errored or case.judge is None:
            continue
        names = ([FAITHFULNESS] if case.judge.faithfulness is not None else []) + [
            c.name for c in case.judge.criteria
        ]
        for name in names:
            found = next((x for x in case.judge.criteria if x.name == name), None)
            default = "1-5" if found is not None and found.score is not None else "pass_fail"
            scale = "pass_fail" if name == FAITHFULNESS else scales.get(name, default)
            verdict = _judge_verdict(case, name, scale)
            if verdict is None:
                continue
            passages = tuple(Passage(c.source, c.text, c.id) for c in case.trace.retrieved)
            items.append(
                JudgedItem(
                    case.id,
                    name,
                    scale,
                    case.question,
                    case.trace.answer or "",
                    passages,
                    verdict[0],
                    verdict[1],
                )
            )
    if not items:
        raise InputError(
            "the run has no judged answers to label; run it with --judge (or [judge] in "
            "ragrail.toml) first"
        )
    return items


@dataclass
class SampledItem:
    """One logged conversation to make a golden case of."""

    id: str
    question: str
    answer: str
    passages: tuple[Passage, ...]
    stratum: str = ""
    version: str = ""
    date: str = ""
    extra: dict[str, str] = field(default_factory=dict)

    def provenance(self) -> dict[str, str]:
        """Where a case made from it came from, as ``add --from-log`` records it."""
        out = {"from": "production", "conversation": self.id}
        if self.date:
            out["date"] = self.date
        if self.version:
            out["version"] = self.version
        return out


def from_conversation(c: Conversation, stratum: str = "") -> SampledItem:
    from ragrail.online.sample import iso_date

    return SampledItem(
        c.id,
        c.question,
        c.answer,
        tuple(Passage(x.source, x.text, x.id) for x in c.contexts),
        stratum,
        c.version,
        iso_date(c.at),
    )


def _uninert(cell: str) -> str:
    """A cell as it was before ``sample`` kept a spreadsheet from running it as a formula."""
    from ragrail.online.sample import _FORMULA_START

    return cell[1:] if cell.startswith("'") and cell[1:].startswith(_FORMULA_START) else cell


def sample_items(path: Path) -> list[SampledItem]:
    """The rows of a ``ragrail sample -o`` file (.csv or .jsonl)."""
    from ragrail.fileio import read_text
    from ragrail.jsonio import parse_json

    text = read_text(path, "sample file").removeprefix("\ufeff")
    rows: list[tuple[dict[str, Any], int]] = []
    if path.suffix.lower() == ".jsonl":
        for n, line in enumerate(text.split("\n"), start=1):
            if line.strip():
                row = parse_json(line, path, line=n)
                if not isinstance(row, dict):
                    raise InputError("expected a JSON object per line", f"{path}:{n}")
                rows.append((row, n))
    else:
        import csv

        from ragrail.golden import _csv_reader

        reader = _csv_reader(text)
        try:
            header = [h.strip() for h in next(reader, [])]
            for cells in reader:
                if cells:
                    row = {k: _uninert(v) for k, v in zip(header, cells, strict=False)}
                    rows.append((row, reader.line_num))
        except csv.Error as exc:
            raise InputError(f"invalid CSV: {exc}", f"{path}:{reader.line_num}") from None
    items = [_sampled(row, f"{path}:{n}") for row, n in rows]
    if not items:
        raise InputError("no conversations to label", str(path))
    return items


def _sampled(row: dict[str, Any], where: str) -> SampledItem:
    for key in ("id", "question"):
        if not isinstance(row.get(key), str) or not row[key].strip():
            raise InputError(f"missing {key!r}: not a `ragrail sample` file?", where)
    contexts = row.get("contexts") or []
    if isinstance(contexts, str):
        try:
            contexts = json.loads(contexts) if contexts.strip() else []
        except ValueError:
            raise InputError("the contexts cell is not JSON", where) from None
    if not isinstance(contexts, list) or not all(isinstance(x, dict) for x in contexts):
        raise InputError("contexts must be a list of {id, source, text}", where)
    passages = tuple(
        Passage(str(x.get("source") or ""), str(x.get("text") or ""), str(x.get("id") or ""))
        for x in contexts
    )
    return SampledItem(
        row["id"],
        row["question"],
        str(row.get("answer") or ""),
        passages,
        str(row.get("stratum") or ""),
        str(row.get("version") or ""),
        str(row.get("date") or ""),
    )
