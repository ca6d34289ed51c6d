"""``ragrail import`` and ``ragrail export``: flags in, :mod:`ragrail.app.interop`, lines out."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ragrail.cli.common import CONTEXT, OUT_PATH, with_options

if TYPE_CHECKING:
    from ragrail.app.interop import RagasExport

# the formats `import` reads: ragrail.app.interop.FORMATS (not imported: --help stays light)
FORMATS = ("ragas", "hf", "deepeval", "promptfoo", "openinference")


def _say(line: str = "") -> None:
    from ragrail.text.guard import visible

    click.echo(visible(line))


def _say_err(line: str) -> None:
    from ragrail.text.guard import visible

    click.echo(visible(line), err=True)


def _stdout(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


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
    help="hf: the column holding a field (question, id, answer, contexts, context_ids, "
    "reference, reference_contexts, reference_context_ids, facts, answers); promptfoo: "
    "the var holding the question (question=VAR) or its context (reference_contexts=VAR). "
    "Repeatable.",
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
    how many could not be placed and names each found in several documents. A
    context keeps the id the tool recorded (RAGAS retrieved_context_ids, hf context_ids,
    a trace's document.id, the ids `ragrail export deepeval` writes beside the
    passages), so answers citing their system's own ids still cite them.
    Reference contexts give a case its sources; a reference answer of a few words
    found in a source becomes its fact. Paths to put in the project file are
    printed relative to its folder.
    """
    from ragrail.app.interop import ImportRequest, import_data

    request = ImportRequest(fmt, file, golden_out, outputs_out, docs, mappings, force, config)
    for line in import_data(request).lines():
        _say(line)
    return 0


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


@export_cmd.command("trec", context_settings=CONTEXT)
@with_options(run_options)
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
    from ragrail.app import interop

    done = interop.export_trec(interop.RunRef(run_ref, config, example), run_file, qrels, _stdout)
    k = done.top_k
    _say_err(
        f"wrote {_name(run_file)} and {_name(qrels)}: {done.judged} questions"
        + (f" ({done.left_out} without a relevant source left out)" if done.left_out else "")
    )
    _say_err(
        f"  trec_eval -m P.{k} -m recall.{k} -m recip_rank -m map -m ndcg_cut.{k} "
        f"{_name(qrels)} {_name(run_file)}"
    )
    return 0


conversation_options = [
    click.option(
        "--conversations",
        type=OUT_PATH,
        help="Write the conversations here, the single questions to --output (a dataset "
        "holds one kind; needed when the run has both).",
    ),
    click.option(
        "--golden",
        "golden",
        type=click.Path(path_type=Path, dir_okay=False),
        help="Export this golden set (its questions and labels) instead of a run.",
    ),
]


@export_cmd.command("ragas", context_settings=CONTEXT)
@with_options(run_options)
@click.option(
    "-o",
    "--output",
    type=OUT_PATH,
    default=Path("ragas.jsonl"),
    show_default=True,
    help="Where to write the JSONL ('-': standard output).",
)
@with_options(conversation_options)
def export_ragas(
    run_ref: str,
    config: Path | None,
    example: str | None,
    output: Path,
    conversations: Path | None,
    golden: Path | None,
) -> int:
    """A run as a RAGAS EvaluationDataset JSONL (user_input, retrieved_contexts, response).

    EvaluationDataset.from_jsonl reads it. ragrail labels facts and articles, not
    reference answers, so no sample has a reference. A conversation is a MultiTurnSample
    (HumanMessage, the retrieval as a tool call and ToolMessages, AIMessage per turn), its
    labels in each HumanMessage's metadata, so `ragrail import ragas` reads it back whole.
    """
    from ragrail.app import interop

    ref = interop.RunRef(run_ref, config, example)
    done = interop.export_ragas(ref, output, _stdout, conversations, golden)
    _said(done, "samples")
    return 0


@export_cmd.command("deepeval", context_settings=CONTEXT)
@with_options(run_options)
@click.option(
    "-o",
    "--output",
    type=OUT_PATH,
    default=Path("deepeval.json"),
    show_default=True,
    help="Where to write the JSON ('-': standard output).",
)
@with_options(conversation_options)
def export_deepeval(
    run_ref: str,
    config: Path | None,
    example: str | None,
    output: Path,
    conversations: Path | None,
    golden: Path | None,
) -> int:
    """A run as DeepEval goldens, as EvaluationDataset.save_as("json") writes them.

    A question is a Golden (input, actual_output, retrieval_context); a conversation a
    ConversationalGolden whose turns are the questions and the system's answers. ragrail's
    labels go in the metadata (additional_metadata, each user turn's metadata), so
    `ragrail import deepeval` reads the file back whole; DeepEval's
    add_goldens_from_json_file loads it.
    """
    from ragrail.app import interop

    ref = interop.RunRef(run_ref, config, example)
    done = interop.export_deepeval(ref, output, _stdout, conversations, golden)
    _said(done, "goldens")
    return 0


def _said(done: RagasExport, noun: str) -> None:
    file = done.conversations_file
    if file is None or file != done.output or not done.conversations:
        _say_err(f"wrote {done.samples} {noun} to {_name(done.output)}")
    if file is not None:
        _say_err(f"wrote {done.conversations} conversations to {_name(file)}")


def _name(path: Path) -> str:
    return "standard output" if str(path) == "-" else str(path)
