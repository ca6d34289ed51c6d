from __future__ import annotations

import json

import pytest

from ragrail.errors import InputError
from ragrail.golden import Case, add_case, lint_golden, load_golden
from ragrail.system.corpus import html_to_markdown, load_documents, split_sections

CASES = [
    {
        "id": "a",
        "question": "How long does the reset link last?",
        "sources": ["reset"],
        "facts": ["30 minutes"],
    },
    {"id": "b", "question": "Can I pay by bank transfer?", "sources": [], "facts": []},
]


def test_yaml_and_csv_give_the_same_cases_with_lines(tmp_path):
    yml = tmp_path / "g.yaml"
    yml.write_text(
        "# labelled questions\n- id: a\n  question: How long does the reset link last?\n"
        "  sources: [reset]\n  facts: [30 minutes]\n- id: b\n  question: Can I pay by bank transfer?\n"
    )
    csvf = tmp_path / "g.csv"
    csvf.write_text(
        "id,question,sources,facts,tags\n"
        "a,How long does the reset link last?,reset,30 minutes,\n"
        "b,Can I pay by bank transfer?,,,money|billing\n"
    )
    y, c = load_golden(yml), load_golden(csvf)
    assert [x.model_dump(exclude={"tags"}) for x in y.cases] == [
        x.model_dump(exclude={"tags"}) for x in c.cases
    ]
    assert y.lines == {"a": 2, "b": 6} and c.lines == {"a": 2, "b": 3}
    assert c.cases[1].tags == ["money", "billing"]


def test_yaml_and_csv_errors(tmp_path):
    bad = tmp_path / "g.yaml"
    bad.write_text("- id: a\n  question: [unclosed\n")
    with pytest.raises(InputError, match=r"g\.yaml:\d+:\d+: invalid YAML"):
        load_golden(bad)
    csvf = tmp_path / "g.csv"
    csvf.write_text("id,question,answer\na,q,x\n")
    with pytest.raises(InputError, match=r"unknown CSV column \(header column 3\)"):
        load_golden(csvf)
    csvf.write_text("id,question\na,\n")
    with pytest.raises(
        InputError, match=r"g\.csv:2: case 'a': field 'question': must not be empty"
    ):
        load_golden(csvf)


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".yaml", ".csv"])
def test_add_appends_in_the_files_own_format(tmp_path, suffix):
    path = tmp_path / f"g{suffix}"
    if suffix == ".json":
        path.write_text("[\n  " + ",\n  ".join(json.dumps(c) for c in CASES) + "\n]\n")
    elif suffix == ".jsonl":
        path.write_text("".join(json.dumps(c) + "\n" for c in CASES))
    elif suffix == ".yaml":
        import yaml

        path.write_text(yaml.safe_dump(CASES, sort_keys=False))
    else:
        path.write_text(
            "id,question,sources,facts,tags\n"
            + "".join(
                f"{c['id']},{c['question']},{'|'.join(c['sources'])},{'|'.join(c['facts'])},\n"
                for c in CASES
            )
        )
    before = path.read_text()
    add_case(
        path,
        Case(
            id="c",
            question="Do backup codes work twice?",
            sources=["two-factor"],
            facts=["Each one works once"],
            tags=["2fa"],
        ),
    )
    after = load_golden(path)
    assert [c.id for c in after.cases] == ["a", "b", "c"]
    assert after.cases[2].facts == ["Each one works once"] and after.cases[2].tags == ["2fa"]
    kept = before.rstrip().removesuffix("]").rstrip() if suffix == ".json" else before.rstrip("\n")
    assert path.read_text().startswith(kept)  # the existing text is kept as it was
    with pytest.raises(InputError, match="already exists"):
        add_case(path, Case(id="c", question="other?"))


def test_lint_warns_about_near_duplicates_and_unused_documents(tmp_path):
    path = tmp_path / "g.json"
    path.write_text(
        json.dumps(
            [
                {
                    "id": "a",
                    "question": "How long does the reset link last?",
                    "sources": ["reset"],
                    "facts": ["30 minutes"],
                },
                {
                    "id": "a2",
                    "question": "How long does a reset link last?",
                    "sources": ["reset"],
                    "facts": ["30 minutes"],
                },
            ]
        )
    )
    problems = lint_golden(
        load_golden(path), {"reset": "The link lasts 30 minutes.", "billing": "x"}
    )
    assert all(p.warning for p in problems)
    text = [str(p) for p in problems]
    assert any("near-duplicate of 'a'" in t for t in text)
    assert any("no case uses the document 'billing'" in t for t in text)


def test_html_documents_are_chunked_by_heading(tmp_path):
    (tmp_path / "reset.html").write_text(
        "<html><head><style>h1{}</style></head><body><h1>Reset your password</h1>"
        "<p>The link expires after <b>30 minutes</b>.</p><script>x()</script>"
        "<h2>SSO</h2><p>Ask your IT admin &amp; wait.</p></body></html>"
    )
    [doc] = load_documents(tmp_path)
    assert doc.name == "reset"
    assert split_sections(doc.text) == [
        "Reset your password\n\nThe link expires after 30 minutes.",
        "SSO\n\nAsk your IT admin & wait.",
    ]
    assert "x()" not in html_to_markdown("<script>x()</script><p>hi</p>")


# ------------------------------------------------------------- hostile golden sets


GOOD = {"id": "a", "question": "How long does the reset link last?", "sources": ["reset"]}


@pytest.mark.parametrize(
    ("name", "text", "where", "needle"),
    [
        (
            "g.csv",
            'id,question,sources\na,"How long is the link,reset\nb,q,x\n',
            "g.csv:2",
            "unexpected end of data",
        ),
        ("g.csv", 'id,question\na,"q" and more\n', "g.csv:2", "invalid CSV"),
        (
            "g.csv",
            "id,question,sources,facts\na,How long?,reset,30 minutes,surprise\n",
            "g.csv:2",
            "5 fields but the header has 4",
        ),
        ("g.csv", "id,sources\na,reset\n", "g.csv:1", "no 'question' column"),
        ("g.csv", "id,question,id\na,q,b\n", "g.csv:1", "'id' appears twice"),
        ("g.csv", "id,question\n", "g.csv", "no cases"),
        ("g.csv", "", "g.csv", "no cases"),
        (
            "g.yaml",
            "- id: a\n  question: q\n  question: r\n",
            "g.yaml:3:3",
            "duplicate key 'question' (first at line 2)",
        ),
        (
            "g.yaml",
            "cases:\n  - id: a\n    question: q\ncases: []\n",
            "g.yaml:4:1",
            "duplicate key 'cases'",
        ),
        # libyaml stops at 1,000 levels and says where
        ("g.yaml", "[" * 5000 + "]" * 5000, "g.yaml:1:1001", "nested too deeply"),
        ("g.json", "[" * 100_000 + "]" * 100_000, "g.json:1", "nested too deeply"),
        (
            "g.json",
            '[{"id": "a", "question": "q", "facts": [NaN]}]',
            "g.json:1:41",
            "field '0.facts.0': NaN",
        ),
        (
            "g.json",
            '[\n {"id": "a",\n  "question": "q", "x": -Infinity}]',
            "g.json:3:25",
            "field '0.x': -Infinity",
        ),
        (
            "g.jsonl",
            '{"id": "a", "question": "q"}\n{"id": "b", "w": Infinity}\n',
            "g.jsonl:2:18",
            "field 'w': Infinity",
        ),
        (
            "g.jsonl",
            '{"id": "a", "question": "q"}\n' + "[" * 100_000 + "]" * 100_000 + "\n",
            "g.jsonl:2",
            "nested too deeply",
        ),
        (
            "g.jsonl",
            '{"id": "a", "question": "q"}\n{"id": "a", "question": "r"}\n',
            "g.jsonl:2",
            "duplicate case id 'a' (first at line 1)",
        ),
        (
            "g.yaml",
            "- id: a\n  question: q\n  checks: [{type: number, max: .nan}]\n",
            "g.yaml:1",
            "finite number",
        ),
        ("g.xml", "<cases/>", "g.xml", "unknown golden-set format '.xml'"),
    ],
)
def test_malformed_golden_sets_name_the_file_and_line(tmp_path, name, text, where, needle):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_golden(path)
    assert info.value.where == str(tmp_path / where)
    assert needle in info.value.message


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".yaml", ".csv"])
def test_a_utf8_bom_is_accepted_in_every_format(tmp_path, suffix):
    path = tmp_path / f"g{suffix}"
    body = {
        ".json": json.dumps([GOOD]),
        ".jsonl": json.dumps(GOOD) + "\n",
        ".yaml": "- id: a\n  question: How long does the reset link last?\n  sources: [reset]\n",
        ".csv": "id,question,sources\na,How long does the reset link last?,reset\n",
    }[suffix]
    path.write_bytes(b"\xef\xbb\xbf" + body.encode())
    golden = load_golden(path)
    assert [c.model_dump(exclude_defaults=True) for c in golden.cases] == [GOOD]
    assert golden.lines["a"] == 1 if suffix != ".csv" else golden.lines["a"] == 2


def test_line_separators_inside_jsonl_strings_are_not_line_breaks(tmp_path):
    path = tmp_path / "g.jsonl"
    odd = "reset\u2028link\u2029and\x85more\x1c"
    path.write_text(
        json.dumps({"id": "a", "question": odd}, ensure_ascii=False)
        + "\n"
        + json.dumps({"id": "b", "question": "second?"})
        + "\n",
        encoding="utf-8",
    )
    golden = load_golden(path)
    assert [c.question for c in golden.cases] == [odd, "second?"]
    assert golden.lines == {"a": 1, "b": 2}


def test_a_131k_character_csv_cell_is_read_whole_and_a_huge_one_is_refused(tmp_path):
    from ragrail.golden import CSV_MAX_CELL

    path = tmp_path / "g.csv"
    question = "How long does the reset link last? " + "padding " * 16_400
    assert len(question) > 131_072
    path.write_text(f'id,question,sources\na,"{question}",reset\nb,next?,\n')
    golden = load_golden(path)
    assert golden.cases[0].question == question and golden.lines == {"a": 2, "b": 3}

    path.write_text('id,question\na,"' + "x" * (CSV_MAX_CELL + 1) + '"\n')
    with pytest.raises(InputError, match="longer than 10,485,760 characters") as info:
        load_golden(path)
    assert info.value.where == f"{path}:2"


def test_csv_rows_may_leave_trailing_cells_out_and_multiline_cells_keep_their_start_line(
    tmp_path,
):
    path = tmp_path / "g.csv"
    path.write_text(
        'id,question,sources,facts,tags\nidk,Do you ship to Mars?\n\nb,"two\nlines",x,y\n'
    )
    golden = load_golden(path)
    assert golden.cases[0].sources == [] and golden.cases[0].expects_abstain
    assert golden.cases[1].question == "two\nlines"
    assert golden.lines == {"idk": 2, "b": 4}


def test_yaml_merge_keys_are_not_duplicates(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text(
        "base: &base {sources: [reset]}\n"
        "cases:\n"
        "  - <<: *base\n    id: a\n    question: How long?\n    sources: [other]\n"
    )
    assert load_golden(path).cases[0].sources == ["other"]


# ------------------------------------------------------------- ragrail add


def test_add_to_a_csv_with_a_quoted_header_keeps_the_new_case(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text(
        '"id","question","sources","facts"\n'
        '"a","How long does the reset link last?","reset","30 minutes"\n'
    )
    before = path.read_text()
    new = Case(
        id="b",
        question='Does "pay, then ship" work?',
        sources=["billing", "shipping"],
        facts=["yes, it does"],
    )
    add_case(path, new)
    assert path.read_text().startswith(before)
    golden = load_golden(path)
    assert golden.cases[1] == new
    assert golden.lines["b"] == 3


def test_add_to_a_csv_keeps_crlf_line_ends_and_column_order(tmp_path):
    path = tmp_path / "g.csv"
    path.write_bytes(b"question,id,sources\r\nHow long?,a,reset\r\n")
    add_case(path, Case(id="b", question="Second?", sources=["x"]))
    assert path.read_bytes() == b"question,id,sources\r\nHow long?,a,reset\r\nSecond?,b,x\r\n"


def test_add_refuses_a_case_the_csv_has_no_column_for_and_writes_nothing(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text("id,question,sources\na,How long?,reset\n")
    before = path.read_bytes()
    with pytest.raises(InputError, match="no 'facts' column"):
        add_case(path, Case(id="b", question="Second?", sources=["x"], facts=["y"]))
    with pytest.raises(InputError, match="cannot append"):  # "|" would split the source
        add_case(path, Case(id="b", question="Second?", sources=["x|y"]))
    assert path.read_bytes() == before


def test_add_to_yaml_cases_follows_the_files_indentation(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text("cases:\n    - id: a\n      question: How long?\n")
    add_case(path, Case(id="b", question="Second?", sources=["x"]))
    assert [c.id for c in load_golden(path).cases] == ["a", "b"]
    path.write_text("cases:\n- id: a\n  question: How long?\n")
    add_case(path, Case(id="b", question="Second?", sources=["x"]))
    assert [c.id for c in load_golden(path).cases] == ["a", "b"]


def test_add_refuses_a_layout_it_cannot_append_to(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text('[{id: a, question: "How long"}]\n')
    before = path.read_bytes()
    with pytest.raises(InputError, match="nothing was written"):
        add_case(path, Case(id="b", question="Second?"))
    assert path.read_bytes() == before


def test_add_keeps_a_bom(tmp_path):
    path = tmp_path / "g.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps([GOOD]).encode())
    add_case(path, Case(id="b", question="Second?"))
    assert path.read_bytes().startswith(b"\xef\xbb\xbf[")
    assert [c.id for c in load_golden(path).cases] == ["a", "b"]


def test_add_cli_on_a_quoted_header_csv(cli, tmp_path):
    path = tmp_path / "g.csv"
    path.write_text('"id","question","sources","facts","tags"\n"a","How long?","reset","",""\n')
    r = cli(
        "add",
        "--golden",
        str(path),
        "--id",
        "b",
        "--question",
        "Is it, really?",
        "--source",
        "reset",
        "--fact",
        "30 minutes",
        "--tag",
        "x",
    )
    assert r.code == 0, r.err
    assert load_golden(path).cases[1] == Case(
        id="b", question="Is it, really?", sources=["reset"], facts=["30 minutes"], tags=["x"]
    )


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("g.csv", 'id,question\na,"unterminated\n', "g.csv:2"),
        ("g.csv", "id,question\na,q,extra\n", "g.csv:2"),
        ("g.yaml", "- id: a\n  question: q\n  id: b\n", "g.yaml:3"),
        ("g.jsonl", '{"id": "a", "question": "q", "w": NaN}\n', "g.jsonl:1"),
        ("g.json", "[" * 100_000 + "]" * 100_000, "g.json"),
    ],
)
def test_a_bad_golden_set_is_exit_2_through_the_cli_and_changes_nothing(
    cli, tmp_path, name, text, where
):
    import hashlib

    project = tmp_path / "kb"
    assert cli("example", "kitebase", str(project)).code == 0
    (project / name).write_text(text, encoding="utf-8")
    cfg = project / "ragrail.toml"
    cfg.write_text(cfg.read_text().replace('golden = "golden.json"', f'golden = "{name}"'))
    before = hashlib.sha256((project / "baseline.json").read_bytes()).hexdigest()
    r = cli("run", "--save-baseline", cwd=project)
    assert r.code == 2
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in r.err, r.err
    assert lines[0].startswith("ragrail: error: ")
    assert str(project / where) in lines[0]
    assert hashlib.sha256((project / "baseline.json").read_bytes()).hexdigest() == before


PROVENANCE = {
    "from": "production",
    "conversation": "c,42",
    "date": "2024-05-01T08:00:00Z",
    "version": "v2",
}


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("g.json", '[{"id": "a", "question": "q?"}]\n'),
        ("g.jsonl", '{"id": "a", "question": "q?"}\n'),
        ("g.yaml", "cases:\n  - id: a\n    question: q?\n"),
        ("g.csv", "id,question,sources,facts,tags,provenance\na,q?\n"),
    ],
)
def test_provenance_is_written_and_read_back_in_every_format(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    case = Case(id="b", question="Other?", sources=["reset"], provenance=PROVENANCE)
    add_case(path, case)
    assert load_golden(path).cases == [Case(id="a", question="q?"), case]


def test_a_csv_without_a_provenance_column_is_refused_unchanged(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text("id,question\na,q?\n")
    with pytest.raises(InputError, match="provenance"):
        add_case(path, Case(id="b", question="Other?", provenance=PROVENANCE))
    assert path.read_text() == "id,question\na,q?\n"


@pytest.mark.parametrize(
    ("cell", "says"),
    [('"{not json"', "g.csv:2"), ('"[1, 2]"', "provenance"), ('"{""from"": 1}"', "provenance")],
)
def test_a_bad_provenance_cell_names_the_line(tmp_path, cell, says):
    path = tmp_path / "g.csv"
    path.write_text(f"id,question,provenance\na,q?,{cell}\n")
    with pytest.raises(InputError, match=says):
        load_golden(path)
