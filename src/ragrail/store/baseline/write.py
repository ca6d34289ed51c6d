"""Writing a baseline: atomically, read back before it replaces the old one, with the
fingerprints of the documents and the golden set it was accepted on."""

from __future__ import annotations

import hashlib
from pathlib import Path

from ragrail.errors import InputError, SystemFailure
from ragrail.fileio import atomic_write_text
from ragrail.gcpause import paused_gc
from ragrail.records.results import RunResult
from ragrail.store.baseline.read import read_baseline_text
from ragrail.store.baseline.records import Baseline, run_text


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
    inputs to fingerprint (a Baseline passed in keeps its own fingerprints). The
    baseline returned is the one read back.
    """
    try:
        with paused_gc():
            if isinstance(run, Baseline):
                text = run.to_text()
            else:
                text = run_text(run, fingerprints(docs, golden))
    except ValueError as exc:
        raise SystemFailure(
            f"{path}: not saved: the new baseline has {exc}; the old file is unchanged"
        ) from None
    read: list[Baseline] = []

    def read_back(written: Path) -> None:
        try:
            with paused_gc():
                read.append(read_baseline_text(written.read_text(encoding="utf-8"), path))
        except InputError as exc:
            raise SystemFailure(
                f"{path}: not saved: the new baseline does not read back "
                f"({exc.message}); the old file is unchanged"
            ) from None

    atomic_write_text(path, text, "baseline", validate=read_back)
    return read[0]
