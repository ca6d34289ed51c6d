"""``ragrail import`` and ``ragrail export`` in the library.

:func:`import_data` reads another tool's file (the format modules of
:mod:`ragrail.interop`), places each context in the documents and writes a golden set
and/or an outputs file; :func:`export_trec` and :func:`export_ragas` write a run in
another tool's format. Every user mistake is an InputError (exit 2, one line naming the
file and line), raised before anything is written; each file is written whole or not at
all. Nothing here prints: each returns what it did.

    imported = import_data(ImportRequest("ragas", Path("dataset.jsonl"), golden=Path("golden.json")))
    imported.lines()  # what ragrail import prints
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragrail.errors import InputError, SystemFailure

if TYPE_CHECKING:
    from ragrail.interop.common import ImportResult
    from ragrail.interop.rows import RawImport
    from ragrail.interop.summary import ProjectFile
    from ragrail.project import Project
    from ragrail.records.case import Case
    from ragrail.records.results import RunResult

#: The formats ``import`` reads (one module of :mod:`ragrail.interop` each).
FORMATS = ("ragas", "hf", "deepeval", "promptfoo", "openinference")
#: Where an output named ``-`` goes: standard output, unless the caller says otherwise.
Stdout = Callable[[str], None]


def _to_stdout(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


# ---------------------------------------------------------------- import


@dataclass(frozen=True)
class ImportRequest:
    """What to import, and what to write (at least one of ``golden`` and ``outputs``)."""

    fmt: str  # one of FORMATS
    file: Path
    golden: Path | None = None  # the labelled cases as a golden set (.json/.jsonl/.yaml/.csv)
    outputs: Path | None = None  # the answers and contexts as an outputs file (JSON Lines)
    docs: Path | None = None  # default: the project's docs folder, else ./docs
    mappings: Sequence[str] = ()  # hf, promptfoo: FIELD=COLUMN
    force: bool = False  # replace output files that already exist
    config: Path | None = None  # the project file (for its docs folder); default: ./ragrail.toml


@dataclass
class Imported:
    """What an import read, placed and wrote."""

    request: ImportRequest
    docs: Path  # the documents the contexts were placed in
    result: ImportResult
    project: ProjectFile | None = None  # the project file it is for, when there is one

    def lines(self) -> list[str]:
        """What the import did, for a person (untrusted text: make it visible to print);
        paths to put in the project file are relative to its folder."""
        from ragrail.interop.summary import summary

        r = self.request
        return summary(self.result, r.file, self.docs, r.golden, r.outputs, self.project)


def import_data(request: ImportRequest) -> Imported:
    """Check the outputs before reading anything, read the file, label and place its
    cases, and write the golden set and/or the outputs file."""
    from ragrail.interop.common import import_file

    r = request
    if r.golden is None and r.outputs is None:
        raise InputError(
            "say what to write: --golden golden.json (labelled cases) and/or "
            "--outputs outputs.jsonl (answers and contexts)"
        )
    mapping = _mapping(r.fmt, r.mappings)
    project = _project(r.config, None)
    folder = _docs_folder(r.docs, project)
    targets = [(r.golden, "golden set"), (r.outputs, "outputs file")]
    _check_targets(r.file, folder, targets, r.force, project)
    raw = _read(r.fmt, r.file, mapping)
    if r.golden is not None and not raw.labels:
        raise InputError(
            f"{raw.label} hold no labels (no reference answers or contexts) for a golden set; "
            "write --outputs and label the questions in a golden set of your own",
            str(r.file),
        )
    if r.outputs is not None and not raw.outputs:
        raise InputError(
            f"{raw.label} hold no answers or retrieved contexts for an outputs file; "
            "write --golden and run your system on it",
            str(r.file),
        )
    result = import_file(raw, folder, golden=r.golden is not None, outputs=r.outputs is not None)
    if r.golden is not None and result.golden is not None:
        _write_golden(r.golden, result.golden.cases)
    if r.outputs is not None and result.records is not None:
        _write_outputs(r.outputs, result.records)
    return Imported(r, folder, result, _project_file(project, r.config))


def _project_file(project: Project | None, config: Path | None) -> ProjectFile | None:
    """The project file as the user names it (``--config``, else ./ragrail.toml), with
    the golden set and outputs file it reads."""
    from ragrail.interop.summary import ProjectFile
    from ragrail.project import CONFIG_NAME

    if project is None:
        return None
    system = project.config.system
    outputs = project.root / system.path if system.kind == "outputs" and system.path else None
    return ProjectFile(config or Path(CONFIG_NAME), project.golden, outputs)


def _mapping(fmt: str, pairs: Sequence[str]) -> dict[str, str]:
    from ragrail.interop.hf import parse_mapping

    if pairs and fmt not in ("hf", "promptfoo"):
        raise InputError(
            f"--map is for the hf and promptfoo formats; {fmt} files have fixed fields"
        )
    return parse_mapping(tuple(pairs))


def _docs_folder(docs: Path | None, project: Project | None) -> Path:
    """--docs, else the project's docs folder, else ./docs."""
    if docs is not None:
        if not docs.is_dir():
            raise InputError("documents folder not found", str(docs))
        return docs
    if project is not None:
        folder = project.docs
        if not folder.is_dir():
            raise InputError("the project's documents folder is not found", str(folder))
        return folder
    if (Path.cwd() / "docs").is_dir():
        return Path("docs")
    raise InputError(
        "no documents folder to place contexts in: pass --docs DIR (each context's source "
        "is the document whose text holds it)"
    )


def _check_targets(
    source: Path,
    docs: Path,
    outputs: list[tuple[Path | None, str]],
    force: bool,
    project: Project | None,
) -> None:
    """Refuse, before reading anything, an output that exists (without --force), cannot be
    written, would replace the imported file or anything the project reads or keeps (its
    golden set and outputs file excepted: making those is what an import is for), lands in
    the docs folder or is given twice, and a golden set in a format ragrail does not read."""
    from ragrail.golden import GOLDEN_SUFFIXES
    from ragrail.outputs import guard_outputs, real

    replaces: list[tuple[Path, str]] = []
    if project is not None:
        system = project.config.system
        outputs_file = (
            project.root / system.path if system.kind == "outputs" and system.path else None
        )
        replaces = [(project.golden, "the golden set")]
        if outputs_file is not None:
            replaces.append((outputs_file, "the system's outputs file"))
        # each may replace its own kind of file, never the other's
        crossed = (
            (outputs[0], outputs_file, "outputs file"),
            (outputs[1], project.golden, "golden set"),
        )
        for (path, what), other, name in crossed:
            if path is not None and other is not None and real(path) == real(other):
                raise InputError(
                    f"the {what} would overwrite the {name}; nothing was written", str(path)
                )
    guard_outputs(
        outputs,
        project,
        [(source, "the file being imported")],
        docs=docs,
        replaces=replaces,
    )
    golden = outputs[0][0]
    if golden is not None and golden.suffix.lower() not in GOLDEN_SUFFIXES:
        raise InputError(
            f"unknown golden-set format {golden.suffix or '(no extension)'!r}; "
            f"use one of {', '.join(GOLDEN_SUFFIXES)}",
            str(golden),
        )

    for path, what in outputs:
        if path is not None and path.exists() and not force:
            raise InputError(f"the {what} already exists; pass --force to replace it", str(path))


def _read(fmt: str, path: Path, mapping: dict[str, str]) -> RawImport:
    import importlib

    module = importlib.import_module(f"ragrail.interop.{fmt}")
    if fmt in ("hf", "promptfoo"):
        return module.read(path, mapping)
    return module.read(path)


def _write_golden(path: Path, cases: list[Case]) -> None:
    from ragrail.fileio import atomic_write_text
    from ragrail.golden import parse_golden
    from ragrail.interop.common import golden_text

    text = golden_text(cases, path)

    def read_back(written: Path) -> None:
        try:
            again = parse_golden(written.read_text(encoding="utf-8"), path).cases
        except InputError as exc:
            again, problem = [], exc.message
        else:
            problem = "a case reads back differently"
        if again != cases:
            raise InputError(
                f"the golden set cannot be written as {path.suffix} without changing it "
                f"({problem}); write .json instead (nothing was written)",
                str(path),
            )

    atomic_write_text(path, text, "golden set", validate=read_back)


def _write_outputs(path: Path, records: list[dict[str, Any]]) -> None:
    from ragrail.fileio import atomic_write_text
    from ragrail.interop.common import outputs_text
    from ragrail.system.adapters import OutputsFile

    def read_back(written: Path) -> None:
        try:
            OutputsFile(written)
        except InputError as exc:
            raise SystemFailure(
                f"{path}: not written: the outputs do not read back ({exc})"
            ) from None

    atomic_write_text(path, outputs_text(records), "outputs file", validate=read_back)


# ---------------------------------------------------------------- export


@dataclass(frozen=True)
class RunRef:
    """The run to export: a results ``.json`` file, or a run id, ``latest`` or ``-N`` from
    the history of the project (``config``, a bundled ``example``, else ./ragrail.toml,
    else this folder)."""

    ref: str = "latest"
    config: Path | None = None
    example: str | None = None


@dataclass
class TrecExport:
    """What ``export trec`` wrote: the run and qrels (``-``: standard output)."""

    run_file: Path
    qrels: Path
    judged: int  # questions with a relevant source: the ranked ones
    left_out: int  # questions without one, left out
    top_k: int  # the run's k, for trec_eval's cut-offs


@dataclass
class RagasExport:
    """What ``export ragas`` or ``export deepeval`` wrote (``-``: standard output)."""

    output: Path
    samples: int
    conversations: int = 0  # conversations written (to ``conversations_file``, else ``output``)
    conversations_file: Path | None = None


def export_trec(
    run: RunRef, run_file: Path, qrels: Path, stdout: Stdout = _to_stdout
) -> TrecExport:
    """A run's article rankings and labels as TREC run and qrels files."""
    from ragrail.interop.trec import qrels_text, run_text, scored_cases

    files = _check_exports([(run_file, "TREC run"), (qrels, "qrels file")], run)
    result = load_run_ref(run)
    judged = scored_cases(result)
    if not judged:
        raise InputError("no question of this run has a relevant source: nothing to rank against")
    _emit(files[0], run_text(result), "TREC run", stdout)
    _emit(files[1], qrels_text(result), "qrels file", stdout)
    left = len(result.cases) - len(judged)
    return TrecExport(run_file, qrels, len(judged), left, result.config.top_k)


def export_ragas(
    run: RunRef,
    output: Path,
    stdout: Stdout = _to_stdout,
    conversations: Path | None = None,
    golden: Path | None = None,
) -> RagasExport:
    """A run (or with ``golden``, a golden set) as a RAGAS EvaluationDataset JSONL: single
    questions as SingleTurnSamples, conversations as MultiTurnSamples (in ``conversations``
    when there are both: a dataset holds one kind)."""
    from ragrail.interop.ragas import multi_turn_text, single_text

    return _export(run, output, stdout, conversations, golden, "RAGAS dataset",
                   single_text, multi_turn_text)  # fmt: skip


def export_deepeval(
    run: RunRef,
    output: Path,
    stdout: Stdout = _to_stdout,
    conversations: Path | None = None,
    golden: Path | None = None,
) -> RagasExport:
    """A run (or a golden set) as DeepEval ``EvaluationDataset.save_as("json")`` writes
    goldens: Goldens, and ConversationalGoldens (in ``conversations`` when there are both)."""
    from ragrail.interop.deepeval import export_text

    return _export(run, output, stdout, conversations, golden, "DeepEval dataset",
                   export_text, export_text)  # fmt: skip


def _export(
    run: RunRef,
    output: Path,
    stdout: Stdout,
    conversations: Path | None,
    golden: Path | None,
    what: str,
    singles_text: Callable[[Any], str],
    talks_text: Callable[[Any], str],
) -> RagasExport:
    from ragrail.interop.conversations import export_turns, grouped, split_kinds

    targets = [(output, what)] + (
        [(conversations, f"{what} of conversations")] * bool(conversations)
    )
    reads = [(golden, "the golden set being exported")] if golden is not None else []
    files = _check_exports(targets, run, reads)
    if golden is not None:
        from ragrail.golden import load_golden

        cases: Sequence[Any] = load_golden(golden).cases
    else:
        cases = load_run_ref(run).cases
    singles, talks = split_kinds(grouped(export_turns(cases, golden is None)), bool(conversations))
    if conversations is not None:
        _emit(files[0], singles_text(singles), what, stdout)
        _emit(files[1], talks_text(talks), what, stdout)
    else:
        _emit(files[0], talks_text(talks) if talks else singles_text(singles), what, stdout)
    file = conversations if conversations is not None else (output if talks else None)
    return RagasExport(output, len(singles), len(talks), file)


def _check_exports(
    outputs: list[tuple[Path | None, str]],
    run: RunRef,
    reads: list[tuple[Path, str]] | None = None,
) -> list[Path | None]:
    """The files to write (None: standard output), checked before any work."""
    from ragrail.outputs import guard_outputs

    project = _project(run.config, run.example)
    reads = list(reads or [])
    if run.ref.endswith(".json"):
        reads.append((Path(run.ref), "the results being exported"))
    return guard_outputs(outputs, project, reads, stdout=lambda what: True)


def _emit(path: Path | None, text: str, what: str, stdout: Stdout) -> None:
    from ragrail.fileio import atomic_write_text

    if path is None:
        stdout(text)
    else:
        atomic_write_text(path, text, what)


def _project(config: Path | None, example: str | None) -> Project | None:
    from ragrail.project import CONFIG_NAME

    if config is not None or example is not None or (Path.cwd() / CONFIG_NAME).is_file():
        from ragrail.app import load_project

        return load_project(config, example)
    return None


def load_run_ref(run: RunRef) -> RunResult:
    """A run from a results file (a ``.json`` path) or from the project's history."""
    from ragrail.jsonio import load_json
    from ragrail.records.results import parse_run
    from ragrail.store.history import History

    path = Path(run.ref)
    if path.suffix.lower() == ".json":
        data = load_json(path, "results")
        if isinstance(data, dict) and data.get("format") == "ragrail-baseline":
            raise InputError(
                "a baseline keeps verdicts, not the retrieved chunks to export; pass the "
                "results of `ragrail run --json FILE`, or a run from the history (--run latest)",
                str(path),
            )
        return parse_run(data, path, "results")
    project = _project(run.config, run.example)
    state = project.state_dir if project is not None else Path.cwd() / ".ragrail"
    store_path = state / "history.sqlite"
    if not store_path.is_file():
        raise InputError(
            f"no run history at {store_path}: run `ragrail run` first, or pass --run results.json"
        )
    store = History(store_path)
    try:
        return store.load(run.ref)
    finally:
        store.close()
