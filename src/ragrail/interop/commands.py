"""``ragrail import`` and ``ragrail export``: flags in, library calls, lines out.

The work is in the format modules beside this one; here are only the click
commands (``import_cmd``, ``export_cmd``), which the CLI registers. Every user
mistake is an InputError (exit 2, one line naming the file and line), raised
before anything is written; each file is written whole or not at all.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ragrail.errors import InputError, SystemFailure

if TYPE_CHECKING:
    from ragrail.config import Project

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
# output paths: existing files are replaced whole, so click must not ask to read them
OUT_PATH = click.Path(path_type=Path, readable=False)
FORMATS = ("ragas", "hf", "deepeval", "promptfoo", "openinference")


def _say(line: str = "") -> None:
    from ragrail.text.guard import visible

    click.echo(visible(line))


# ---------------------------------------------------------------- import


@click.command("import", context_settings=CONTEXT)
@click.argument("fmt", metavar="FORMAT", type=click.Choice(FORMATS))
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--golden",
    "golden_out",
    type=OUT_PATH,
    help="Write the labelled cases as a golden set here (.json, .jsonl, .yaml or .csv).",
)
@click.option(
    "--outputs",
    "outputs_out",
    type=OUT_PATH,
    help='Write the answers and retrieved contexts here, for [system] kind = "outputs" (JSON Lines).',
)
@click.option(
    "--docs",
    type=click.Path(path_type=Path, file_okay=False),
    help="The documents contexts are found in (default: the project's docs folder, else ./docs).",
)
@click.option(
    "--map",
    "mappings",
    multiple=True,
    metavar="FIELD=COLUMN",
    help="hf: the column holding a field (question, id, answer, contexts, reference, "
    "reference_contexts, facts, answers); promptfoo: the var holding the question "
    "(question=VAR) or its context (reference_contexts=VAR). Repeatable.",
)
@click.option("--force", is_flag=True, help="Replace output files that already exist.")
@click.option(
    "-c",
    "--config",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Project file (for its docs folder).",
)
def import_cmd(
    fmt: str,
    file: Path,
    golden_out: Path | None,
    outputs_out: Path | None,
    docs: Path | None,
    mappings: tuple[str, ...],
    force: bool,
    config: Path | None,
) -> int:
    """Bring another tool's data: a golden set and/or an outputs file from FILE.

    \b
    FORMAT is one of:
      ragas          EvaluationDataset .jsonl / .csv / .json (to_jsonl, to_csv)
      hf             a Hugging Face dataset saved with to_json or to_csv
      deepeval       EvaluationDataset.save_as json / jsonl / csv, or a test run
      promptfoo      a promptfooconfig.yaml or tests file (.yaml, .json, .csv)
      openinference  Phoenix / OpenTelemetry trace export (.jsonl, .json)

    Each context is placed in the document whose text holds it; the report says
    how many could not be placed. Reference contexts give a case its sources; a
    reference answer of a few words found in a source becomes its fact.
    """
    from ragrail.interop.common import import_file, summary

    if golden_out is None and outputs_out is None:
        raise InputError(
            "say what to write: --golden golden.json (labelled cases) and/or "
            "--outputs outputs.jsonl (answers and contexts)"
        )
    mapping = _mapping(fmt, mappings)
    folder = _docs_folder(docs, config)
    _check_targets(
        file, folder, [(golden_out, "golden set"), (outputs_out, "outputs file")], force, config
    )
    raw = _read(fmt, file, mapping)
    if golden_out is not None and not raw.labels:
        raise InputError(
            f"{raw.label} hold no labels (no reference answers or contexts) for a golden set; "
            "write --outputs and label the questions in a golden set of your own",
            str(file),
        )
    if outputs_out is not None and not raw.outputs:
        raise InputError(
            f"{raw.label} hold no answers or retrieved contexts for an outputs file; "
            "write --golden and run your system on it",
            str(file),
        )
    result = import_file(
        raw, folder, golden=golden_out is not None, outputs=outputs_out is not None
    )
    if golden_out is not None and result.golden is not None:
        _write_golden(golden_out, result.golden.cases)
    if outputs_out is not None and result.records is not None:
        _write_outputs(outputs_out, result.records)
    for line in summary(result, file, folder, golden_out, outputs_out):
        _say(line)
    return 0


def _mapping(fmt: str, pairs: tuple[str, ...]) -> dict[str, str]:
    from ragrail.interop.hf import parse_mapping

    if pairs and fmt not in ("hf", "promptfoo"):
        raise InputError(
            f"--map is for the hf and promptfoo formats; {fmt} files have fixed fields"
        )
    return parse_mapping(pairs)


def _docs_folder(docs: Path | None, config: Path | None) -> Path:
    """--docs, else the project's docs folder, else ./docs."""
    from ragrail.config import CONFIG_NAME

    if docs is not None:
        if not docs.is_dir():
            raise InputError("documents folder not found", str(docs))
        return docs
    if config is not None or (Path.cwd() / CONFIG_NAME).is_file():
        from ragrail.app import load_project

        folder = load_project(config).docs
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
    config: Path | None,
) -> None:
    """Refuse, before reading anything, an output that exists (without --force), cannot be
    written, would replace the imported file or anything the project reads or keeps (its
    golden set and outputs file excepted: making those is what an import is for), lands in
    the docs folder or is given twice, and a golden set in a format ragrail does not read."""
    from ragrail.config import CONFIG_NAME
    from ragrail.golden import GOLDEN_SUFFIXES
    from ragrail.outputs import guard_outputs, real

    project = None
    if config is not None or (Path.cwd() / CONFIG_NAME).is_file():
        from ragrail.app import load_project

        project = load_project(config, None)
    replaces: list[tuple[Path, str]] = []
    if project is not None:
        system = project.config.system
        outputs_file = project.root / system.path if system.kind == "outputs" and system.path else None
        replaces = [(project.golden, "the golden set")]
        if outputs_file is not None:
            replaces.append((outputs_file, "the system's outputs file"))
        # each may replace its own kind of file, never the other's
        crossed = ((outputs[0], outputs_file, "outputs file"), (outputs[1], project.golden, "golden set"))
        for (path, what), other, name in crossed:
            if path is not None and other is not None and real(path) == real(other):
                raise InputError(f"the {what} would overwrite the {name}; nothing was written", str(path))
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


def _read(fmt: str, path: Path, mapping: dict[str, str]) -> Any:
    import importlib

    module = importlib.import_module(f"ragrail.interop.{fmt}")
    if fmt in ("hf", "promptfoo"):
        return module.read(path, mapping)
    return module.read(path)


def _write_golden(path: Path, cases: list[Any]) -> None:
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


@click.group("export", context_settings=CONTEXT)
def export_cmd() -> None:
    """Write a run in another tool's format (TREC run and qrels, RAGAS JSONL)."""


run_options = [
    click.option(
        "--run",
        "run_ref",
        default="latest",
        show_default=True,
        help="The run: a results .json file (--json), or a run id, latest or -N from the history.",
    ),
    click.option(
        "-c",
        "--config",
        type=click.Path(path_type=Path, dir_okay=False),
        help="Project file (for its history).",
    ),
    click.option("--example", "example", metavar="NAME", help="A bundled example's history."),
]


def _with(options: list[Callable[..., Any]]) -> Callable[..., Any]:
    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            fn = option(fn)
        return fn

    return wrap


@export_cmd.command("trec", context_settings=CONTEXT)
@_with(run_options)
@click.option(
    "--run-file",
    type=OUT_PATH,
    default=Path("run.trec"),
    show_default=True,
    help="Where to write the TREC run ('-': standard output).",
)
@click.option(
    "--qrels",
    type=OUT_PATH,
    default=Path("qrels.trec"),
    show_default=True,
    help="Where to write the qrels ('-': standard output).",
)
def export_trec(
    run_ref: str, config: Path | None, example: str | None, run_file: Path, qrels: Path
) -> int:
    """A run's article rankings and labels as TREC run and qrels files.

    \b
    Article level, as ragrail's article_* metrics; with k the run's top_k,
      trec_eval -m P.k -m recall.k -m recip_rank -m map -m ndcg_cut.k qrels.trec run.trec
    gives the values of ragrail's JSON. Graded sources become graded qrels.
    """
    from ragrail.interop.trec import qrels_text, run_text, scored_cases

    files = _check_exports(
        [(run_file, "TREC run"), (qrels, "qrels file")], run_ref, config, example
    )
    result = load_run_ref(run_ref, config, example)
    judged = scored_cases(result)
    if not judged:
        raise InputError("no question of this run has a relevant source: nothing to rank against")
    _emit(files[0], run_text(result), "TREC run")
    _emit(files[1], qrels_text(result), "qrels file")
    k = result.config.top_k
    left = len(result.cases) - len(judged)
    _say_err(
        f"wrote {_name(run_file)} and {_name(qrels)}: {len(judged)} questions"
        + (f" ({left} without a relevant source left out)" if left else "")
    )
    _say_err(
        f"  trec_eval -m P.{k} -m recall.{k} -m recip_rank -m map -m ndcg_cut.{k} "
        f"{_name(qrels)} {_name(run_file)}"
    )
    return 0


@export_cmd.command("ragas", context_settings=CONTEXT)
@_with(run_options)
@click.option(
    "-o",
    "--output",
    type=OUT_PATH,
    default=Path("ragas.jsonl"),
    show_default=True,
    help="Where to write the JSONL ('-': standard output).",
)
def export_ragas(run_ref: str, config: Path | None, example: str | None, output: Path) -> int:
    """A run as a RAGAS EvaluationDataset JSONL (user_input, retrieved_contexts, response).

    EvaluationDataset.from_jsonl reads it. ragrail labels facts and articles, not
    reference answers, so no sample has a reference.
    """
    from ragrail.interop.ragas import export_text

    files = _check_exports([(output, "RAGAS dataset")], run_ref, config, example)
    result = load_run_ref(run_ref, config, example)
    _emit(files[0], export_text(result), "RAGAS dataset")
    _say_err(f"wrote {len(result.cases)} samples to {_name(output)}")
    return 0


def _name(path: Path) -> str:
    return "standard output" if str(path) == "-" else str(path)


def _say_err(line: str) -> None:
    from ragrail.text.guard import visible

    click.echo(visible(line), err=True)


def _check_exports(
    outputs: list[tuple[Path | None, str]], run_ref: str, config: Path | None, example: str | None
) -> list[Path | None]:
    """The files to write (None: standard output), checked before any work."""
    from ragrail.outputs import guard_outputs

    project = _project(config, example)
    reads = [(Path(run_ref), "the results being exported")] if run_ref.endswith(".json") else []
    return guard_outputs(outputs, project, reads, stdout=lambda what: True)


def _emit(path: Path | None, text: str, what: str) -> None:
    from ragrail.fileio import atomic_write_text

    if path is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        atomic_write_text(path, text, what)


def _project(config: Path | None, example: str | None) -> Project | None:
    from ragrail.config import CONFIG_NAME

    if config is not None or example is not None or (Path.cwd() / CONFIG_NAME).is_file():
        from ragrail.app import load_project

        return load_project(config, example)
    return None


def load_run_ref(ref: str, config: Path | None, example: str | None) -> Any:
    """A run from a results file (a ``.json`` path) or from the project's history."""
    from ragrail.fileio import load_json
    from ragrail.records.results import parse_run
    from ragrail.store.history import History

    path = Path(ref)
    if path.suffix.lower() == ".json":
        data = load_json(path, "results")
        if isinstance(data, dict) and data.get("format") == "ragrail-baseline":
            raise InputError(
                "a baseline keeps verdicts, not the retrieved chunks to export; pass the "
                "results of `ragrail run --json FILE`, or a run from the history (--run latest)",
                str(path),
            )
        return parse_run(data, path, "results")
    project = _project(config, example)
    state = project.state_dir if project is not None else Path.cwd() / ".ragrail"
    store_path = state / "history.sqlite"
    if not store_path.is_file():
        raise InputError(
            f"no run history at {store_path}: run `ragrail run` first, or pass --run results.json"
        )
    store = History(store_path)
    try:
        return store.load(ref)
    finally:
        store.close()
