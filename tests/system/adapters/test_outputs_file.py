"""Precomputed outputs (``[system] kind = "outputs"``): every line checked, every number finite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragrail.errors import InputError
from ragrail.golden import Case
from ragrail.records.results import Sample
from ragrail.system.adapters import OutputsFile, parse_output
from tests.helpers import digest, one_error_line

OUTPUTS_TOML = """name = "outputs bot"
docs = "docs"
golden = "golden.json"
baseline = "baseline.json"

[system]
kind = "outputs"
path = "outputs.jsonl"
"""
CONTEXT = {"id": "faq#1", "source": "faq", "text": "some text", "score": 0.5}


@pytest.fixture
def project(cli, tmp_path) -> Path:
    """Kitebase scored from an outputs file, with a baseline saved from it."""
    dest = tmp_path / "kb"
    assert cli("example", "kitebase", str(dest)).code == 0
    (dest / "ragrail.toml").write_text(OUTPUTS_TOML)
    ids = [c["id"] for c in json.loads((dest / "golden.json").read_text())]
    lines = [json.dumps({"id": i, "answer": "I don't know.", "contexts": [CONTEXT]}) for i in ids]
    (dest / "outputs.jsonl").write_text("\n".join(lines) + "\n")
    r = cli("run", "--save-baseline", "--no-history", cwd=dest)
    assert r.code == 0, r.out + r.err
    return dest


def spoil(project: Path, index: int, text: str) -> None:
    path = project / "outputs.jsonl"
    lines = path.read_text().split("\n")
    lines[index] = text
    path.write_text("\n".join(lines))


def with_score(score: str) -> str:
    line = json.dumps({"id": "link-expiry", "answer": "x", "contexts": [{**CONTEXT, "score": 0}]})
    return line.replace('"score": 0', f'"score": {score}')


BAD_LINES = [
    ("nan-score", with_score("NaN"), "outputs.jsonl:2:", "field 'contexts.0.score': NaN"),
    ("infinity-score", with_score("Infinity"), "outputs.jsonl:2:", "field 'contexts.0.score'"),
    ("minus-infinity", with_score("-Infinity"), "outputs.jsonl:2:", "-Infinity is not valid JSON"),
    ("nan-as-string", with_score('"NaN"'), "outputs.jsonl:2", "finite number"),
    ("overflow-to-inf", with_score("1e999"), "outputs.jsonl:2", "finite number"),
    ("deep", "[" * 100_000 + "]" * 100_000, "outputs.jsonl:2", "nested too deeply"),
    ("not-an-object", "[1]", "outputs.jsonl:2", "must be a JSON object"),
    ("broken-json", '{"id": "x", ', "outputs.jsonl:2:", "invalid JSON"),
    (
        "duplicate-id",
        json.dumps({"id": "no-recovery-email", "answer": "again"}),
        "outputs.jsonl:2",
        "duplicate id 'no-recovery-email' on lines 1 and 2",
    ),
]


@pytest.mark.parametrize(
    ("name", "line", "where", "needle"), BAD_LINES, ids=[b[0] for b in BAD_LINES]
)
def test_a_bad_outputs_line_is_exit_2_and_the_baseline_is_byte_identical(
    cli, project, name, line, where, needle
):
    spoil(project, 1, line)
    before = digest(project / "baseline.json")
    r = cli("run", "--save-baseline", cwd=project)
    assert r.code == 2, r.out + r.err
    message = one_error_line(r.err)
    assert where in message and needle in message
    assert digest(project / "baseline.json") == before
    assert not (project / ".ragrail" / "history.sqlite").exists()


def test_a_huge_but_finite_score_is_fine(cli, project):
    spoil(project, 1, with_score("1e300"))
    assert cli("run", "--baseline", "none.json", cwd=project).code == 0


def test_bom_and_line_separators_inside_strings_are_accepted(tmp_path):
    path = tmp_path / "outputs.jsonl"
    answer = "I don't\u2028know.\u2029Really\x85."
    lines = [
        json.dumps({"id": "a", "answer": answer, "contexts": [CONTEXT]}, ensure_ascii=False),
        json.dumps({"question": "Second?", "answer": "b"}),
    ]
    path.write_bytes(b"\xef\xbb\xbf" + "\n".join(lines).encode())
    outputs = OutputsFile(path)
    assert outputs.trace(Case(id="a", question="q?")).answer == answer
    assert outputs.trace(Case(id="x", question="Second?")).answer == "b"


def test_two_lines_for_the_same_question_are_refused(tmp_path):
    path = tmp_path / "outputs.jsonl"
    path.write_text('{"question": "Q?", "answer": "a"}\n\n{"question": " Q?", "answer": "b"}\n')
    with pytest.raises(InputError, match="duplicate question 'Q\\?' on lines 1 and 3") as info:
        OutputsFile(path)
    assert info.value.where == f"{path}:3"


@pytest.mark.parametrize("score", [float("nan"), float("inf"), float("-inf"), "nan"])
def test_a_reply_with_a_non_finite_score_is_refused_naming_the_field(score):
    reply = {"answer": "x", "contexts": [{"id": "a", "text": "t", "score": score}]}
    with pytest.raises(InputError, match=r"'contexts\.0\.score': Input should be a finite number"):
        parse_output(reply, "system.target bot:answer")


@pytest.mark.parametrize("bad_line", [1, 2, 5000])
def test_invalid_utf8_names_its_own_line_however_far_the_reader_has_buffered(tmp_path, bad_line):
    # a text-mode reader decodes 8 KB ahead: the error must still name the line that holds it
    path = tmp_path / "outputs.jsonl"
    lines = [
        json.dumps({"id": f"q{i}", "answer": "x" * (i % 50 + 1)}).encode() for i in range(6000)
    ]
    lines[bad_line - 1] = lines[bad_line - 1].replace(b'"x', b'"\xff', 1)
    path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(InputError, match="not UTF-8") as info:
        OutputsFile(path)
    assert info.value.where.startswith(f"{path}:{bad_line}:")


def test_a_multibyte_character_cut_off_at_the_end_names_the_last_line(tmp_path):
    path = tmp_path / "outputs.jsonl"
    path.write_bytes(b'{"id": "a"}\n{"id": "\xe4\xb8')
    with pytest.raises(InputError, match="not UTF-8") as info:
        OutputsFile(path)
    assert info.value.where.startswith(f"{path}:2:")


def test_a_line_given_to_two_cases_gives_each_its_own_trace(tmp_path):
    # one line with an id and a question, one with a question only, each matched by two cases
    path = tmp_path / "outputs.jsonl"
    path.write_text(
        json.dumps({"id": "a", "question": "Q?", "answer": "A", "contexts": [CONTEXT]})
        + "\n"
        + json.dumps({"question": "R?", "answer": "B", "contexts": [CONTEXT]})
        + "\n"
    )
    outputs = OutputsFile(path)
    cases = [
        Case(id=i, question=q) for i, q in (("b", "Q?"), ("a", "Q?"), ("c", "R?"), ("d", "R?"))
    ]
    traces = outputs.traces(cases)
    assert [t.case_id for t in traces] == ["b", "a", "c", "d"]
    traces[0].retrieved[0].score = 0.9
    traces[2].retrieved[0].score = 0.1
    assert [t.retrieved[0].score for t in traces] == [0.9, 0.5, 0.1, 0.5]
    for t in traces:
        t.retrieved.append(t.retrieved[0])
        t.samples.append(Sample(answer="x"))
    assert [len(t.retrieved) for t in traces] == [2, 2, 2, 2]
    assert [len(t.samples) for t in traces] == [1, 1, 1, 1]
    traces[0].answer = "changed"
    assert [t.answer for t in traces] == ["changed", "A", "B", "B"]


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
def test_every_line_ending_read_text_reads_is_a_line_end(tmp_path, end):
    # the file was read with read_text (universal newlines) before it was read line by
    # line: a file whose lines end in a bare "\r" must still be one record a line, and
    # a line number must count them as before
    lines = [
        json.dumps({"id": "a", "answer": "A", "contexts": [CONTEXT]}),
        # a raw U+2028 inside a string is not a line end
        json.dumps({"id": "b", "answer": "B \u2028 C"}, ensure_ascii=False),
        "[1]",
    ]
    path = tmp_path / "outputs.jsonl"
    path.write_bytes(end.join(lines[:2]).encode("utf-8") + end.encode())
    outputs = OutputsFile(path)
    assert sorted(outputs.records) == ["a", "b"]
    assert outputs.records["b"].answer == "B \u2028 C"
    path.write_bytes(end.join(lines).encode("utf-8"))
    with pytest.raises(InputError, match="must be a JSON object") as info:
        OutputsFile(path)
    assert info.value.where == f"{path}:3"
