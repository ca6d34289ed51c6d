"""Writing a baseline: atomically, read back before it replaces the old one, with the
fingerprints of the documents and the golden set it was accepted on."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ragrail.errors import InputError, SystemFailure
from ragrail.fileio import atomic_write_text, parse_json
from ragrail.results import RunResult
from ragrail.store.baseline.model import Baseline, gc_paused
from ragrail.store.baseline.read import parse_baseline


def fingerprint_file(path: Path | None) -> str | None:
    """``sha256:<hex>`` of a file's bytes with CRLF line ends read as LF (a Windows
    checkout of the same golden set has the same fingerprint); None when unreadable."""
    if path is None:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return "sha256:" + hashlib.sha256(data.replace(b"\r\n", b"\n")).hexdigest()


def fingerprint_docs(folder: Path | None) -> str | None:
    """``sha256:<hex>`` over the documents a run reads from ``folder`` (the files
    ``corpus.load_documents`` takes, by name, line ends as in :func:`fingerprint_file`);
    None when there is no such folder."""
    from ragrail.system.corpus import DOC_SUFFIXES

    if folder is None or not folder.is_dir():
        return None
    digest = hashlib.sha256()
    try:
        for path in sorted(folder.iterdir()):
            if path.suffix.lower() in DOC_SUFFIXES and path.is_file():
                content = path.read_bytes().replace(b"\r\n", b"\n")
                digest.update(path.name.encode("utf-8", "surrogateescape") + b"\0")
                digest.update(hashlib.sha256(content).digest())
    except OSError:
        return None
    return "sha256:" + digest.hexdigest()


def fingerprints(docs: Path | None = None, golden: Path | None = None) -> dict[str, str | None]:
    """The fingerprints a baseline records: the documents folder and the golden-set file."""
    return {"docs": fingerprint_docs(docs), "golden": fingerprint_file(golden)}


def save_baseline(
    run: RunResult | Baseline,
    path: Path,
    *,
    docs: Path | None = None,
    golden: Path | None = None,
) -> Baseline:
    """Write the compact baseline of ``run`` to ``path`` atomically and return it.

    The new file is read back and validated as :func:`load_baseline` reads it before
    it replaces the old one: a baseline that would not load is never saved over a good
    one (SystemFailure, exit 3, the old file unchanged). ``docs`` and ``golden``: the
    inputs to fingerprint (a Baseline passed in keeps its own fingerprints).
    """
    try:
        with gc_paused():
            base = (
                run
                if isinstance(run, Baseline)
                else Baseline.from_run(run, fingerprints(docs, golden))
            )
            text = base.to_text()
    except ValueError as exc:
        raise SystemFailure(
            f"{path}: not saved: the new baseline has {exc}; the old file is unchanged"
        ) from None

    def read_back(written: Path) -> None:
        try:
            with gc_paused():
                parse_baseline(_parse_written(written, path), path)
        except InputError as exc:
            raise SystemFailure(
                f"{path}: not saved: the new baseline does not read back "
                f"({exc.message}); the old file is unchanged"
            ) from None

    atomic_write_text(path, text, "baseline", validate=read_back)
    return base


def _parse_written(written: Path, path: Path) -> Any:
    """The JSON of a baseline just written, parsed as :func:`parse_json` would parse it.

    ``parse_json`` also looks for keys given twice in an object, which costs a Python
    call per object (a third of the parse at 100,000 questions). The writer cannot
    give a key twice (a case's keys are literals; a dict's are unique), so the check
    is left out here; NaN and infinity, which a bad number could still produce, are
    refused.
    """
    text = written.read_text(encoding="utf-8")
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        return parse_json(text, path)  # refuses it too, naming the line and the field


def _refuse_constant(literal: str) -> Any:
    raise ValueError(f"{literal} is not JSON")
