"""One import per format, from files written the way each tool writes them
(tests/data/interop: see each file's writer in the format module's docstring),
then scored end to end by ``ragrail run`` over the fixture documents.

The documents (tests/data/interop/docs) are four help-center articles, each a
title section and two sections: returns (#2 return window, #3 refund timing),
shipping (#2 delivery times, with **next business day** in bold, #3 tracking),
account (#2 address, #3 closing) and billing (#2 payment methods, #3 invoices).
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from tests.interop.conftest import DATA, read_jsonl, scores


def imported(cli, project: Path, fmt: str, source: Path, *extra: str) -> str:
    """Run ``ragrail import`` in the project and return what it printed."""
    r = cli("import", fmt, str(source), *extra, cwd=project)
    assert r.code == 0, r.out + r.err
    assert r.err == ""
    return r.out


def golden(project: Path, name: str = "golden.json") -> list[dict]:
    return json.loads((project / name).read_text())


# ---------------------------------------------------------------- RAGAS


RAGAS_GOLDEN = [
    # reference "30 days": a short reference found in its source is the fact
    {"id": "how-long-do-i-have-to", "question": "How long do I have to return an item?",
     "sources": ["returns"], "facts": ["30 days"]},
    # a sentence as reference: no facts, said in the report
    {"id": "when-will-i-get-my-refund", "question": "When will I get my refund?",
     "sources": ["returns"], "facts": []},
    # "The next business day" is found although the doc writes **next business day**
    {"id": "how-long-does-express-delivery-take", "question": "How long does express delivery take?",
     "sources": ["shipping"], "facts": ["The next business day"]},
    {"id": "how-do-i-track-my-parcel", "question": "How do I track my parcel?",
     "sources": ["shipping"], "facts": ["Orders > Track"]},
    # "Go to Settings > Addresses." loses its full stop
    {"id": "how-do-i-change-my-delivery", "question": "How do I change my delivery address?",
     "sources": ["account"], "facts": ["Go to Settings > Addresses"]},
]  # fmt: skip


def test_ragas_jsonl_imports_labels_and_outputs_and_scores_end_to_end(cli, project):
    out = imported(
        cli, project, "ragas", DATA / "ragas" / "evaluation_dataset.jsonl",
        "--golden", "golden.json", "--outputs", "outputs.jsonl",
    )  # fmt: skip
    assert golden(project) == RAGAS_GOLDEN
    # 5 reference + 9 retrieved contexts; the stale "Premium members" passage (in two
    # samples) is in no document
    assert "placed 12 of 14 contexts; 2 could not be placed" in out
    assert "evaluation_dataset.jsonl:2 (retrieved context 2)" in out
    assert "evaluation_dataset.jsonl:5 (retrieved context 1)" in out
    assert "1 case without facts" in out
    # the gift-card sample has neither reference contexts nor a short reference: left out
    assert "skipped 1 case" in out and "evaluation_dataset.jsonl:6: can-i-pay-with-a-gift" in out

    records = {r["id"]: r for r in read_jsonl(project / "outputs.jsonl")}
    assert len(records) == 6  # every sample with a response, labelled or not
    first = records["how-long-do-i-have-to"]
    assert first["answer"] == "You have 30 days from delivery to return an item."
    # each passage gets the id of the section holding it, as ragrail's chunker names it
    assert [(c["id"], c.get("source")) for c in first["contexts"]] == [
        ("returns#2", "returns"),
        ("account#3", "account"),
    ]
    stale = records["when-will-i-get-my-refund"]["contexts"][1]
    assert stale["id"] == "unplaced#2" and "source" not in stale
    # "## Tracking a parcel\n\n..." keeps its heading marker: found by its words, in section 3
    assert records["how-do-i-track-my-parcel"]["contexts"][1]["id"] == "shipping#3"

    result = scores(cli, project)
    cases = result["by_id"]
    assert list(cases) == [c["id"] for c in RAGAS_GOLDEN]
    window = cases["how-long-do-i-have-to"]
    assert (window["retrieval_hit"], window["retrieval_recall"]) == (True, 1.0)
    assert window["correctness"] == 1.0
    # RAGAS responses cite nothing: with require_citation "auto" (the default) no
    # citation is required of a run in which no answer cites
    assert window["answer_pass"] is True and window["problems"] == []
    tracking = cases["how-do-i-track-my-parcel"]
    # articles ranked [billing, shipping]: the source at rank 2
    assert tracking["articles"]["reciprocal_rank"] == 0.5
    assert tracking["articles"]["ndcg_at_k"] == pytest.approx(1 / math.log2(3))
    assert tracking["retrieval_hit"] is True and tracking["correctness"] == 0.0
    address = cases["how-do-i-change-my-delivery"]  # only the stale passage came back
    assert (address["retrieval_hit"], address["retrieval_recall"]) == (False, 0.0)
    assert address["articles"]["reciprocal_rank"] == 0.0
    assert cases["when-will-i-get-my-refund"]["retrieval_recall"] is None  # no facts
    assert result["totals"]["hit_rate"] == pytest.approx(3 / 4)  # 4 cases have facts


def test_ragas_csv_reads_as_the_same_dataset(cli, project, tmp_path):
    """to_csv prints each list as Python does (``['a', 'b']``): read back as lists."""
    imported(
        cli, project, "ragas", DATA / "ragas" / "evaluation_dataset.jsonl",
        "--golden", "golden.json", "--outputs", "outputs.jsonl",
    )  # fmt: skip
    imported(
        cli, project, "ragas", DATA / "ragas" / "evaluation_dataset.csv",
        "--golden", "golden-csv.json", "--outputs", "outputs-csv.jsonl",
    )  # fmt: skip
    assert golden(project, "golden-csv.json") == golden(project)
    assert read_jsonl(project / "outputs-csv.jsonl") == read_jsonl(project / "outputs.jsonl")


# ---------------------------------------------------------------- Hugging Face datasets


def test_hf_json_lines_from_to_json_scores_end_to_end(cli, project):
    """pandas-style records (``\\/`` and ``\\u2192`` escapes), RAGAS 0.1 columns."""
    out = imported(
        cli, project, "hf", DATA / "hf" / "rag_eval.jsonl",
        "--golden", "golden.json", "--outputs", "outputs.jsonl",
    )  # fmt: skip
    assert golden(project) == [
        # no reference contexts: the sources are where the fact is; "30 days" is in the
        # returns article and in the account article (data deleted within 30 days)
        {"id": "how-long-do-i-have-to", "question": "How long do I have to return an item?",
         "sources": ["account", "returns"], "facts": ["30 days"]},
        {"id": "how-do-i-track-my-parcel", "question": "How do I track my parcel?",
         "sources": ["shipping"], "facts": ["Orders > Track"]},
        # a reference that says the documents do not cover it: an "I don't know" case
        {"id": "do-you-ship-to-mars", "question": "Do you ship to Mars?", "sources": [], "facts": []},
        {"id": "where-are-my-invoices", "question": "Where are my invoices?",
         "sources": ["billing"], "facts": ["Orders > Invoices"]},
    ]  # fmt: skip
    assert "in several documents: how-long-do-i-have-to (account, returns) (check them)" in out
    assert "1 case the documents do not cover" in out
    assert "placed 4 of 4 contexts; 0 could not be placed" in out

    cases = scores(cli, project)["by_id"]
    assert cases["do-you-ship-to-mars"]["answer_pass"] is True  # "I don't know."
    window = cases["how-long-do-i-have-to"]
    # two relevant articles, one retrieved: recall@k 1/2
    assert window["articles"]["recall_at_k"] == 0.5 and window["retrieval_hit"] is True
    # "Orders → Invoices" is not the fact "Orders > Invoices"
    assert cases["where-are-my-invoices"]["problems"][0] == 'missing "Orders > Invoices"'
    assert cases["how-do-i-track-my-parcel"]["correctness"] == 1.0


def test_hf_csv_from_to_csv_with_squad_answers_scored_by_the_pipeline(cli, project):
    """to_csv writes SQuAD's answers as numpy prints a dict of arrays; the context
    column gives the sources; the built-in pipeline then answers the golden set."""
    out = imported(cli, project, "hf", DATA / "hf" / "squad_style.csv", "--golden", "golden.json")
    assert golden(project) == [
        {"id": "56be85543aeaaa14008c9063", "question": "How long does a refund take?",
         "sources": ["returns"], "facts": [{"any": ["5 business days", "within 5 business days"]}]},
        {"id": "56be85543aeaaa14008c9065", "question": "When does express delivery arrive?",
         "sources": ["shipping"], "facts": ["the next business day"]},
        {"id": "56be85543aeaaa14008c9066", "question": "Which cards do you accept?",
         "sources": ["billing"], "facts": ["Visa, Mastercard and PayPal"]},
    ]  # fmt: skip
    # the bold **next business day** in the document still holds the label
    assert "not found in its case's sources" not in out

    # the stand-in scores "How long does a refund take?" below the 0.2 default minimum
    cases = scores(cli, project, False, "--min-score", "0")["by_id"]
    refund = cases["56be85543aeaaa14008c9063"]
    # the stand-in retrieves the refund section first and pastes it with its citation
    assert refund["trace"]["retrieved"][0]["id"] == "returns#3"
    assert refund["answer_pass"] is True and refund["retrieval_recall"] == 1.0
    # the bold **next business day** in the shipping section is found
    assert cases["56be85543aeaaa14008c9065"]["retrieval_recall"] == 1.0
    assert cases["56be85543aeaaa14008c9066"]["answer_pass"] is True


def test_hf_map_names_the_columns(cli, project, tmp_path):
    source = tmp_path / "custom.jsonl"
    rows = [
        {"query": "How do I track my parcel?", "gold": "Orders > Track", "pred": "See Orders > Track.",
         "hits": ["Every order gets a tracking number by email. Open Orders > Track to see where your parcel is."]},
    ]  # fmt: skip
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    imported(
        cli, project, "hf", source, "--golden", "golden.json", "--outputs", "outputs.jsonl",
        "--map", "question=query", "--map", "facts=gold", "--map", "answer=pred",
        "--map", "contexts=hits",
    )  # fmt: skip
    assert golden(project)[0]["facts"] == ["Orders > Track"]
    record = read_jsonl(project / "outputs.jsonl")[0]
    assert record["answer"] == "See Orders > Track."
    assert record["contexts"][0]["id"] == "shipping#3"


# ---------------------------------------------------------------- DeepEval


DEEPEVAL_GOLDEN = [
    {"id": "return-window", "question": "How long do I have to return an item?",
     "sources": ["returns"], "facts": ["30 days"]},
    {"id": "refund-timing", "question": "When will I get my refund?",
     "sources": ["returns"], "facts": ["Within 5 business days"]},
    {"id": "tracking", "question": "How do I track my parcel?",
     "sources": ["shipping"], "facts": ["Orders > Track"]},
    {"id": "mars", "question": "Do you ship to Mars?", "sources": [], "facts": []},
]  # fmt: skip


@pytest.mark.parametrize("name", ["20250101_120000.json", "20250101_120000.csv"])
def test_deepeval_save_as_file_imports_and_scores_end_to_end(cli, project, name):
    out = imported(
        cli, project, "deepeval", DATA / "deepeval" / name,
        "--golden", "golden.json", "--outputs", "outputs.jsonl",
    )  # fmt: skip
    assert golden(project) == DEEPEVAL_GOLDEN  # "name" is the id
    # "We delete customer data within a month." is in no document, but DeepEval recorded
    # its source (docs/account.md): placed by that name
    assert "placed 8 of 8 contexts; 0 could not be placed (1 placed by the source name" in out
    records = {r["id"]: r for r in read_jsonl(project / "outputs.jsonl")}
    assert set(records) == {"return-window", "refund-timing", "mars"}  # "tracking" has no output
    assert records["mars"]["contexts"][1] == {
        "id": "account",
        "source": "account",
        "text": "We delete customer data within a month.",
    }
    # the deepeval_source=...,deepeval_context=... marker is unwrapped
    assert records["return-window"]["contexts"][0]["text"].startswith("You can return most items")

    # a golden without an actual_output has no output to score: an error (exit 3)
    result = scores(cli, project, code=3)
    cases = result["by_id"]
    assert cases["tracking"]["trace"]["error"] == "no output for this case in outputs.jsonl"
    assert result["totals"]["n_errors"] == 1
    assert cases["mars"]["answer_pass"] is True
    assert cases["return-window"]["retrieval_recall"] == 1.0
    assert cases["refund-timing"]["correctness"] == 1.0
    assert cases["refund-timing"]["problems"] == []  # no answer cites: none is required


# ---------------------------------------------------------------- promptfoo


def test_promptfoo_config_becomes_a_golden_set_the_pipeline_is_scored_on(cli, project):
    out = imported(
        cli, project, "promptfoo", DATA / "promptfoo" / "promptfooconfig.yaml", "--golden", "golden.json"
    )  # fmt: skip
    guard = [{"type": "not_contains", "value": "as an AI language model"}]  # from defaultTest
    assert golden(project) == [
        # contains-all: both facts; "30 days" is in two documents, "unused" only in returns
        {"id": "return-window", "question": "How long do I have to return an item?",
         "sources": ["returns"], "facts": ["30 days", "unused"], "checks": guard},
        # icontains-any, comma-separated: alternatives; "5 business days" is in returns
        # and in shipping ("3 to 5 business days")
        {"id": "refund-timing", "question": "When will I get my refund?",
         "sources": ["returns", "shipping"],
         "facts": [{"any": ["5 business days", "five business days"]}], "checks": guard},
        # the context var is placed for the sources; the regex is a regex fact
        {"id": "express-delivery", "question": "How long does express delivery take?",
         "sources": ["shipping"], "facts": [{"regex": "next (business|working) day"}], "checks": guard},
        # {{expected}} filled in from the test's vars
        {"id": "invoices", "question": "Where do I find my invoices?",
         "sources": ["billing"], "facts": ["Orders > Invoices"], "checks": guard},
    ]  # fmt: skip
    # only an llm-rubric: nothing to label it with
    assert "promptfooconfig.yaml:59: out-of-scope" in out
    assert "1 context-faithfulness, 1 javascript, 2 llm-rubric" in out

    cases = scores(cli, project, False)["by_id"]
    express = cases["express-delivery"]
    assert express["retrieval_hit"] is True and express["answer_pass"] is True
    assert cases["refund-timing"]["answer_pass"] is True  # "5 business days", an alternative
    window = cases["return-window"]
    # both facts retrieved (returns#2, rank 2), but the stand-in pastes the title section
    assert [c["id"] for c in window["trace"]["retrieved"]] == ["returns#1", "returns#2"]
    assert window["retrieval_recall"] == 1.0
    assert window["problems"] == ['missing "30 days"', 'missing "unused"']
    assert cases["invoices"]["articles"]["reciprocal_rank"] == 1.0


def test_promptfoo_csv_tests_read_expected_columns_as_promptfoo_does(cli, project):
    out = imported(
        cli, project, "promptfoo", DATA / "promptfoo" / "tests.csv", "--golden", "golden.json"
    )
    assert golden(project) == [
        {"id": "tracking", "question": "How do I track my parcel?", "sources": ["shipping"],
         "facts": ["Orders > Track"], "checks": [{"type": "not_contains", "value": "tracking code"}]},
        {"id": "change-address", "question": "How do I change my delivery address?",
         "sources": ["account"], "facts": ["Settings > Addresses"]},
        {"id": "payment-cards", "question": "Which cards do you accept?", "sources": ["billing"],
         "facts": [{"any": ["Visa", "Mastercard"]}]},
    ]  # fmt: skip
    assert "1 llm-rubric" in out  # "grade: ..." is promptfoo's old name for llm-rubric
    cases = scores(cli, project, False)["by_id"]
    assert cases["payment-cards"]["answer_pass"] is True


# ---------------------------------------------------------------- OpenInference


def test_phoenix_spans_become_outputs_scored_against_a_golden_set(cli, project):
    shutil.copy(DATA / "golden.json", project / "golden.json")
    out = imported(
        cli, project, "openinference", DATA / "openinference" / "spans.jsonl", "--outputs", "outputs.jsonl"
    )  # fmt: skip
    records = read_jsonl(project / "outputs.jsonl")
    # one record per trace, in the file's order, keyed by trace id
    assert [r["id"] for r in records] == [
        "6d9f1c0e4b2a48f3a1c7e5d2b8f04a11",
        "0b7e2f9c8d3a4e51b6c2a9f7e1d34c22",
        "a4c81e6f2b9d4c07e3f5a1b8d6c29e33",
    ]
    first = records[0]
    assert first["question"] == "How long do I have to return an item?"  # the CHAIN root's input
    assert first["answer"] == "You can return an item within 30 days of delivery."
    # each document keeps its own id (LlamaIndex's node id); placing gives it a source
    assert [(c["id"], c["source"], c["score"]) for c in first["contexts"]] == [
        ("node-7f3a", "returns", 0.83),
        ("node-91bc", "account", 0.41),
    ]
    # a paraphrase in no document, placed by its metadata file_name (account.md)
    assert records[2]["contexts"][0]["source"] == "account"
    assert "placed 5 of 5 contexts" in out and "1 placed by the source name" in out

    # no trace asked close-account: an error for that question (exit 3), never a pass
    result = scores(cli, project, code=3)
    cases = result["by_id"]
    assert cases["close-account"]["trace"]["error"].startswith("no output for this case")
    # matched by question: the golden set's ids are not trace ids
    assert cases["return-window"]["retrieval_recall"] == 1.0
    assert cases["tracking"]["articles"]["reciprocal_rank"] == 0.5
    assert cases["change-address"]["correctness"] == 1.0


def test_otlp_export_with_a_failed_trace_is_an_error_for_that_question(cli, project):
    imported(
        cli, project, "openinference", DATA / "openinference" / "otlp.jsonl", "--outputs", "outputs.jsonl"
    )  # fmt: skip
    close, refund = read_jsonl(project / "outputs.jsonl")
    # the question from the root's JSON input ({"question": ...}), the answer from the
    # root's output.value; "source" in the document metadata
    assert close["question"] == "How do I close my account?"
    assert close["answer"] == "Contact support and we will close it."
    assert [(c["id"], c["source"]) for c in close["contexts"]] == [
        ("account#3", "account"),
        ("billing#2", "billing"),
    ]
    # the root span's status is ERROR: the question's error, with its message
    assert refund["error"] == "RateLimitError: Error code: 429" and "answer" not in refund
    (project / "golden.json").write_text(
        json.dumps(
            [
                {"id": "close-account", "question": "How do I close my account?",
                 "sources": ["account"], "facts": ["contact support"]},
                {"id": "refund-timing", "question": "When will I get my refund?",
                 "sources": ["returns"], "facts": ["5 business days"]},
            ]
        )
    )  # fmt: skip
    result = scores(cli, project, code=3)
    cases = result["by_id"]
    assert cases["refund-timing"]["trace"]["error"] == "RateLimitError: Error code: 429"
    assert cases["refund-timing"]["answer_pass"] is None  # never a pass, never a fail
    assert cases["refund-timing"]["retrieval_recall"] == 1.0  # what it retrieved still counts
    assert cases["close-account"]["problems"] == []  # no answer cites: none is required
    assert cases["close-account"]["correctness"] == 1.0


def test_the_readme_shows_what_import_prints(cli, project):
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    command = "$ ragrail import ragas evaluation_dataset.jsonl --golden golden.json --outputs outputs.jsonl\n"
    shown = readme.split(command, 1)[1].split("```", 1)[0]
    shutil.copy(DATA / "ragas" / "evaluation_dataset.jsonl", project)
    r = cli("import", *command.split()[3:], cwd=project)
    assert r.code == 0 and r.out == shown
