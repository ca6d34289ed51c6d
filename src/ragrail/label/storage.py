"""Where labels go, written after every one, atomically (a temporary file renamed over
the old: a crash or Ctrl-C leaves the file as it was after the last label).

- :class:`LabelsFile`: the CSV or JSONL ``judge validate --labels`` reads (case_id,
  criterion, verdict), with a ``labeller`` column: one file per person, so two people's
  labels of the same answers never meet in one file (``judge validate`` would refuse a
  case labelled twice).
- :class:`GoldenFile`: the golden set, appended to by ``ragrail add``'s writer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragrail.errors import InputError

if TYPE_CHECKING:
    from ragrail.records.case import Case, GoldenSet

LABELLER = "labeller"
COLUMNS = ("case_id", "criterion", "verdict", LABELLER)


def verdict_text(value: float, scale: str) -> str:
    """A verdict as a person writes it in a labels file: pass/fail, or the score."""
    if scale == "pass_fail":
        return "pass" if value else "fail"
    return str(int(value))


@dataclass
class LabelsFile:
    """A labels file being written: its rows as read (other columns kept), in order."""

    path: Path
    labeller: str
    columns: list[str] = field(default_factory=lambda: list(COLUMNS))
    rows: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def open(cls, path: Path, labeller: str) -> LabelsFile:
        """The file's labels (none when it does not exist yet), read as strictly as
        ``judge validate`` reads them; exit 2 when they are another person's (an empty
        ``labeller`` reads anyone's)."""
        from ragrail.judge.validate import _csv_label_rows, _jsonl_label_rows, load_labels

        out = cls(path, labeller)
        if not path.exists():
            return out
        from ragrail.fileio import read_text

        text = read_text(path, "labels file")
        jsonl = path.suffix.lower() == ".jsonl"
        if not text.strip():
            return out
        rows = _jsonl_label_rows(text, path) if jsonl else _csv_label_rows(text, path)
        if rows:
            load_labels(path)  # every check judge validate makes, before anything is added
        if not jsonl:
            header = next(iter(text.removeprefix("\ufeff").splitlines()), "")
            import csv

            names = [h.strip() for h in next(csv.reader([header]), [])]
            out.columns = names + [c for c in COLUMNS if c not in names]
        for row, n in rows:
            who = str(row.get(LABELLER) or "").strip()
            if labeller and who and who != labeller:
                raise InputError(
                    f"these are {who!r}'s labels; each person labels into a file of their own "
                    f"(e.g. --labels labels-{labeller}.csv), and --compare sets them side by side",
                    f"{path}:{n}",
                )
            out.rows.append(dict(row))
        return out

    def done(self) -> dict[tuple[str, str], str]:
        """(case id, criterion) -> the verdict as written."""
        return {(str(r["case_id"]), str(r["criterion"])): str(r["verdict"]) for r in self.rows}

    def set(self, case_id: str, criterion: str, verdict: str | None) -> None:
        """Label (or, with None, unlabel) one answer and write the file."""
        at = next(
            (
                i
                for i, r in enumerate(self.rows)
                if (r["case_id"], r["criterion"]) == (case_id, criterion)
            ),
            None,
        )
        if verdict is None:
            if at is not None:
                del self.rows[at]
        elif at is None:
            self.rows.append(
                {
                    "case_id": case_id,
                    "criterion": criterion,
                    "verdict": verdict,
                    LABELLER: self.labeller,
                }
            )
        else:
            self.rows[at] = {**self.rows[at], "verdict": verdict, LABELLER: self.labeller}
        self.save()

    def text(self) -> str:
        if self.path.suffix.lower() == ".jsonl":
            return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in self.rows)
        import csv
        import io

        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(self.columns)
        for r in self.rows:
            writer.writerow(["" if r.get(c) is None else str(r.get(c)) for c in self.columns])
        return buf.getvalue()

    def save(self) -> None:
        from ragrail.fileio import atomic_write_text

        atomic_write_text(self.path, self.text(), "labels file")


@dataclass
class GoldenFile:
    """The golden set cases are appended to; the session's appends can be undone while
    nobody else has changed the file since."""

    path: Path
    undo_stack: list[tuple[str, bytes, bytes]] = field(default_factory=list)  # id, before, after

    def load(self) -> GoldenSet:
        from ragrail.golden import load_golden

        return load_golden(self.path, self.path.parent)

    def add(self, case: Case) -> None:
        from ragrail.golden import add_case

        before = self.path.read_bytes()
        add_case(self.path, case)
        self.undo_stack.append((case.id, before, self.path.read_bytes()))

    def undo(self) -> str | None:
        """Take the last case this session added out again; its id (None: nothing to undo)."""
        from ragrail.fileio import atomic_write_text

        if not self.undo_stack:
            return None
        case_id, before, after = self.undo_stack[-1]
        if self.path.read_bytes() != after:
            raise InputError(
                f"the golden set changed since {case_id!r} was added; remove it by hand",
                str(self.path),
            )
        atomic_write_text(self.path, [before], "golden set")
        self.undo_stack.pop()
        return case_id
