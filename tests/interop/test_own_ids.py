"""Imports keep the app's citations: a passage keeps its own id (placing maps it to a
document, it does not rename it), every passage found in several documents is named,
and paths to put in the project file are relative to its folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from ragrail.interop.common import build_outputs
from ragrail.interop.placing import Placer
from ragrail.interop.rows import RawCase, RawContext, RawImport
from tests.interop.conftest import DATA, DOCS, PIPELINE_TOML, read_jsonl, scores

RETURNS = "You can return most items within 30 days of delivery."
CLOSING = "To close your account, contact support. We delete your data within 30 days."
TRACKING = "Every order gets a tracking number by email. Open Orders > Track to see where"
ADDRESS = "Go to Settings > Addresses to add or change a delivery address."

# An app's run on tests/data/interop/golden.json, its chunks numbered its own way (file
# name and a running number, as a sentence splitter numbers them), its answers citing
# those ids. By hand: three answers hold their fact and cite a chunk of a source
# article they were given; close-account cites billing.md#1, which it was never given.
APP_RUN: list[dict[str, Any]] = [
    {"id": "return-window", "question": "How long do I have to return an item?",
     "answer": "Within 30 days of delivery [returns.md#4].",
     "contexts": [("returns.md#4", "returns", RETURNS), ("account.md#9", "account", CLOSING)]},
    {"id": "tracking", "question": "How do I track my parcel?",
     "answer": "Open Orders > Track [shipping.md#7].",
     "contexts": [("shipping.md#7", "shipping", TRACKING)]},
    {"id": "change-address", "question": "How do I change my delivery address?",
     "answer": "Go to Settings > Addresses [account.md#2].",
     "contexts": [("account.md#2", "account", ADDRESS)]},
    {"id": "close-account", "question": "How do I close my account?",
     "answer": "Please contact support [billing.md#1].",
     "contexts": [("account.md#9", "account", CLOSING)]},
]  # fmt: skip


def _folder(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    shutil.copytree(DOCS, folder / "docs")
    shutil.copy(DATA / "golden.json", folder / "golden.json")
    return folder


def _outputs_file(run: list[dict[str, Any]]) -> str:
    """The app's run as an outputs file, scored directly."""
    return "".join(
        json.dumps(
            {
                "id": r["id"],
                "question": r["question"],
                "answer": r["answer"],
                "contexts": [{"id": i, "source": s, "text": t} for i, s, t in r["contexts"]],
            }
        )
        + "\n"
        for r in run
    )


def _ragas_file(run: list[dict[str, Any]], ids: bool = True) -> str:
    """The same run as a RAGAS EvaluationDataset (to_jsonl), with or without the
    contexts' ids (RAGAS's retrieved_context_ids)."""
    lines = []
    for r in run:
        sample: dict[str, Any] = {
            "user_input": r["question"],
            "retrieved_contexts": [t for _, _, t in r["contexts"]],
            "response": r["answer"],
        }
        if ids:
            sample["retrieved_context_ids"] = [i for i, _, _ in r["contexts"]]
        lines.append(json.dumps(sample) + "\n")
    return "".join(lines)


def _verdicts(result: dict[str, Any]) -> dict[str, tuple[bool, list[str]]]:
    return {c["id"]: (c["answer_pass"], c["problems"]) for c in result["cases"]}


def test_an_imported_run_scores_as_the_app_scored_directly(cli, tmp_path):
    direct = _folder(tmp_path, "direct")
    (direct / "outputs.jsonl").write_text(_outputs_file(APP_RUN))
    expected = _verdicts(scores(cli, direct))
    assert expected == {
        "return-window": (True, []),
        "tracking": (True, []),
        "change-address": (True, []),
        "close-account": (False, ["cites a chunk it was never given (billing.md#1)"]),
    }

    imported = _folder(tmp_path, "imported")
    (imported / "ragas.jsonl").write_text(_ragas_file(APP_RUN))
    r = cli("import", "ragas", "ragas.jsonl", "--outputs", "outputs.jsonl", cwd=imported)
    assert r.code == 0, r.err
    records = read_jsonl(imported / "outputs.jsonl")
    # every context keeps the app's id; placing found its document
    assert [[(c["id"], c["source"]) for c in rec["contexts"]] for rec in records] == [
        [(i, s) for i, s, _ in run["contexts"]] for run in APP_RUN
    ]
    assert _verdicts(scores(cli, imported)) == expected


def test_without_ids_a_context_gets_its_sections_id(cli, tmp_path):
    """What the tool did not record cannot be kept: the section's id, and the answers'
    own citations are of chunks never given."""
    folder = _folder(tmp_path, "no-ids")
    (folder / "ragas.jsonl").write_text(_ragas_file(APP_RUN, ids=False))
    assert cli("import", "ragas", "ragas.jsonl", "--outputs", "o.jsonl", cwd=folder).code == 0
    first = read_jsonl(folder / "o.jsonl")[0]
    assert [c["id"] for c in first["contexts"]] == ["returns#2", "account#3"]


def test_ids_from_a_csv_cell_as_ragas_prints_them(cli, tmp_path):
    folder = _folder(tmp_path, "csv")
    (folder / "ragas.csv").write_text(
        "user_input,retrieved_contexts,retrieved_context_ids,response\n"
        f"How long?,\"['{RETURNS}', '{TRACKING}']\",\"['returns.md#4', 7]\",30 days\n"
    )
    assert cli("import", "ragas", "ragas.csv", "--outputs", "o.jsonl", cwd=folder).code == 0
    (record,) = read_jsonl(folder / "o.jsonl")
    # a whole number is an id too (RAGAS allows both)
    assert [(c["id"], c["source"]) for c in record["contexts"]] == [
        ("returns.md#4", "returns"),
        ("7", "shipping"),
    ]


def test_ids_that_do_not_pair_with_the_contexts_are_exit_2(cli, tmp_path):
    folder = _folder(tmp_path, "bad")
    sample = {"user_input": "q", "retrieved_contexts": [RETURNS], "retrieved_context_ids": []}
    sample["retrieved_context_ids"] = ["a#1", "b#2"]
    (folder / "ragas.jsonl").write_text(json.dumps(sample) + "\n")
    r = cli("import", "ragas", "ragas.jsonl", "--outputs", "o.jsonl", cwd=folder)
    assert r.code == 2
    assert "ragas.jsonl:1" in r.err
    assert "'retrieved_context_ids' has 2 ids for the 1 passages of 'retrieved_contexts'" in r.err
    assert not (folder / "o.jsonl").exists()


def test_an_id_naming_a_document_decides_where_the_text_cannot():
    """ "within 30 days" is in account and in returns: the id names returns."""
    case = RawCase(
        where="f:1",
        question="q",
        answer="a",
        contexts=[RawContext("within 30 days", id="returns#9"), RawContext("within 30 days")],
    )
    placer = Placer(DOCS)
    (record,) = build_outputs(RawImport(Path("f"), "test", [case]), ["q"], placer)
    assert [(c["id"], c["source"]) for c in record["contexts"]] == [
        ("returns#9", "returns"),  # kept, and placed where it says
        ("account#3", "account"),  # no id: the first document, in the folder's order
    ]
    assert placer.tally.ambiguous == 1


def test_every_passage_found_in_several_documents_is_named():
    placer = Placer(DOCS)
    placer.place("within 30 days", where="f:1 (retrieved context 1)")
    placer.place("Orders >", where="f:2 (retrieved context 2)")
    placer.place("within 30 days", where="f:3 (retrieved context 1)")
    placer.place("within 30 days", hint="returns.md", where="f:4 (retrieved context 1)")
    assert placer.tally.ambiguous == 3  # the fourth was named by the tool
    assert placer.tally.ambiguities() == [
        'f:1 (retrieved context 1) "within 30 days" is in account, returns: placed in '
        "account (and 1 more times)",
        'f:2 (retrieved context 2) "Orders >" is in billing, shipping: placed in billing',
    ]


def test_the_import_report_names_them(cli, tmp_path):
    folder = _folder(tmp_path, "report")
    long = "Standard delivery takes 3 to 5 business days. Express delivery arrives"
    samples = [
        {"user_input": "q1", "retrieved_contexts": ["within 30 days"], "response": "a"},
        {"user_input": "q2", "retrieved_contexts": [RETURNS, "Orders >"], "response": "a"},
        {"user_input": "q3", "retrieved_contexts": ["within 30 days", long], "response": "a"},
    ]
    (folder / "ragas.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
    r = cli("import", "ragas", "ragas.jsonl", "--outputs", "o.jsonl", cwd=folder)
    assert r.code == 0, r.err
    assert r.out.splitlines()[1:4] == [
        "placed 5 of 5 contexts; 0 could not be placed (3 found in several documents (the "
        "first was taken)) (documents: docs)",
        '  in several documents: ragas.jsonl:1 (retrieved context 1) "within 30 days" is in '
        "account, returns: placed in account (and 1 more times)",
        '  in several documents: ragas.jsonl:2 (retrieved context 2) "Orders >" is in '
        "billing, shipping: placed in billing",
    ]


def test_a_passage_is_named_by_its_first_words():
    from ragrail.interop.placing import excerpt

    assert excerpt("one two three four five six seven eight") == (
        '"one two three four five six seven eight"'
    )
    assert excerpt(" one\ntwo three four five six seven eight nine") == (
        '"one two three four five six seven eight..."'
    )


def test_paths_to_put_in_the_project_file_are_relative_to_its_folder(cli, tmp_path):
    site = _folder(tmp_path, "site")
    (site / "ragrail.toml").write_text(PIPELINE_TOML)
    (site / "data").mkdir()
    shutil.copy(DATA / "ragas" / "evaluation_dataset.jsonl", tmp_path / "ragas.jsonl")
    r = cli(
        "import", "ragas", "ragas.jsonl", "-c", "site/ragrail.toml",
        "--golden", "site/imported.json", "--outputs", "site/data/outputs.jsonl",
        cwd=tmp_path,
    )  # fmt: skip
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert '  use it: golden = "imported.json" in site/ragrail.toml' in lines
    assert (
        '  score them: [system] kind = "outputs", path = "data/outputs.jsonl" in site/ragrail.toml'
    ) in lines
    # the project reads both files already: nothing to change
    (site / "ragrail.toml").write_text(
        PIPELINE_TOML.replace("golden.json", "imported.json")
        + '\n[system]\nkind = "outputs"\npath = "data/outputs.jsonl"\n'
    )
    r = cli(
        "import", "ragas", "ragas.jsonl", "-c", "site/ragrail.toml", "--force",
        "--golden", "site/imported.json", "--outputs", "site/data/outputs.jsonl",
        cwd=tmp_path,
    )  # fmt: skip
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert "  score them: ragrail run (site/ragrail.toml reads this file)" in lines
    assert not [line for line in lines if "use it:" in line]


def test_hf_reads_context_ids_from_a_named_column(cli, tmp_path):
    folder = _folder(tmp_path, "hf")
    row = {"question": "q", "answer": "a", "contexts": [RETURNS], "doc_ids": ["returns.md#4"]}
    (folder / "data.jsonl").write_text(json.dumps(row) + "\n")
    r = cli(
        "import", "hf", "data.jsonl", "--map", "context_ids=doc_ids", "--outputs", "o.jsonl",
        cwd=folder,
    )  # fmt: skip
    assert r.code == 0, r.err
    (record,) = read_jsonl(folder / "o.jsonl")
    assert record["contexts"][0]["id"] == "returns.md#4"


def test_the_import_says_which_answers_cite_ids_their_contexts_lack(cli, tmp_path):
    """Without the contexts' ids the app's citations cannot be kept: the import says so,
    naming the answers, instead of leaving a 1-of-4 pass rate to be found later. With
    the ids, only the answer that cited a chunk it was never given (as scored directly)."""
    folder = _folder(tmp_path, "lines")
    (folder / "no-ids.jsonl").write_text(_ragas_file(APP_RUN, ids=False))
    r = cli("import", "ragas", "no-ids.jsonl", "--outputs", "a.jsonl", cwd=folder)
    assert r.code == 0, r.err
    (line,) = [ln for ln in r.out.splitlines() if "contexts carr" in ln]
    assert line == (
        "  4 answers cite ids none of their contexts carry (how-long-do-i-have-to: "
        "returns.md#4; how-do-i-track-my-parcel: shipping.md#7; how-do-i-change-my-delivery: "
        "account.md#2; ... 1 more): scored as "
        "citing a chunk never given. The file gives its contexts no ids, so each got its "
        "section's id: to keep the app's own, export them with the contexts (RAGAS "
        "retrieved_context_ids, hf --map context_ids=COLUMN, a trace's document.id)"
    )
    (folder / "ids.jsonl").write_text(_ragas_file(APP_RUN))
    r = cli("import", "ragas", "ids.jsonl", "--outputs", "b.jsonl", cwd=folder)
    assert r.code == 0, r.err
    assert [ln for ln in r.out.splitlines() if "contexts carr" in ln] == [
        "  1 answer cites an id none of its contexts carries (how-do-i-close-my-account: "
        "billing.md#1): scored as citing a chunk never given"
    ]


def test_a_deepeval_round_trip_keeps_the_apps_ids(cli, tmp_path):
    """DeepEval keeps a passage's text, not its id: ragrail's export writes the ids beside
    them in its metadata and the import gives them back, so the run scores as it did
    (before, every citing answer failed: "cites a chunk it was never given")."""
    direct = _folder(tmp_path, "direct")
    (direct / "outputs.jsonl").write_text(_outputs_file(APP_RUN))
    expected = _verdicts(scores(cli, direct))
    r = cli("export", "deepeval", "--run", "results.json", "-o", "deepeval.json", cwd=direct)
    assert r.code == 0, r.err
    goldens = json.loads((direct / "deepeval.json").read_text())
    assert goldens[0]["additional_metadata"]["ragrail"]["context_ids"] == [
        "returns.md#4",
        "account.md#9",
    ]
    back = _folder(tmp_path, "back")
    shutil.copy(direct / "deepeval.json", back / "deepeval.json")
    r = cli("import", "deepeval", "deepeval.json", "--outputs", "outputs.jsonl", cwd=back)
    assert r.code == 0, r.err
    records = read_jsonl(back / "outputs.jsonl")
    assert [[c["id"] for c in rec["contexts"]] for rec in records] == [
        [i for i, _, _ in run["contexts"]] for run in APP_RUN
    ]
    assert _verdicts(scores(cli, back)) == expected


def test_deepeval_context_ids_that_do_not_pair_are_exit_2(cli, tmp_path):
    folder = _folder(tmp_path, "bad-ids")
    golden = {
        "input": "q",
        "actual_output": "a",
        "retrieval_context": [RETURNS, TRACKING],
        "additional_metadata": {"ragrail": {"context_ids": ["returns.md#4"]}},
    }
    (folder / "d.json").write_text(json.dumps([golden]))
    r = cli("import", "deepeval", "d.json", "--outputs", "o.jsonl", cwd=folder)
    assert r.code == 2
    assert "'ragrail.context_ids' must hold one id (a string) per passage" in r.err
    assert "Traceback" not in r.err
