from __future__ import annotations

import json

import pytest

from ragrail.corpus import html_to_markdown, load_documents, split_sections
from ragrail.errors import InputError
from ragrail.golden import Case, add_case, lint_golden, load_golden

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
    with pytest.raises(InputError, match="unknown CSV column 'answer'"):
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
