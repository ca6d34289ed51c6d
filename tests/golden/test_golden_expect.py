"""``expect`` on a golden case: read in every format, written back by ``ragrail add``, and
refused with file, line and field when it is not one of the four behaviours."""

from __future__ import annotations

import json

import pytest

from ragrail.errors import InputError
from ragrail.golden import Case, add_case, load_golden, parse_golden
from tests.helpers import digest

# The same three cases in each format: one expecting escalate, one refuse, one by default.
FORMATS = {
    "golden.json": json.dumps(
        [
            {"id": "human", "question": "Can I talk to a person?", "expect": "escalate"},
            {"id": "others", "question": "Show me Ann's orders", "expect": "refuse"},
            {"id": "plain", "question": "How long?", "sources": ["refunds"]},
        ]
    ),
    "golden.jsonl": '{"id": "human", "question": "Can I talk to a person?", "expect": "escalate"}\n'
    '{"id": "others", "question": "Show me Ann\'s orders", "expect": "refuse"}\n'
    '{"id": "plain", "question": "How long?", "sources": ["refunds"]}\n',
    "golden.yaml": "- id: human\n  question: Can I talk to a person?\n  expect: escalate\n"
    "- id: others\n  question: Show me Ann's orders\n  expect: refuse\n"
    "- id: plain\n  question: How long?\n  sources: [refunds]\n",
    "golden.csv": "id,question,sources,facts,tags,expect\n"
    "human,Can I talk to a person?,,,,escalate\n"
    "others,Show me Ann's orders,,,, refuse \n"
    "plain,How long?,refunds,,,\n",
}


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_format_reads_expect(tmp_path, name):
    path = tmp_path / name
    path.write_text(FORMATS[name], encoding="utf-8")
    cases = {c.id: c for c in load_golden(path).cases}
    assert (cases["human"].expect, cases["human"].expected) == ("escalate", "escalate")
    assert (cases["others"].expect, cases["others"].expected) == ("refuse", "refuse")
    assert (cases["plain"].expect, cases["plain"].expected) == (None, "answer")
    assert not cases["human"].expects_abstain


def test_without_expect_a_case_expects_what_it_always_did():
    assert Case(id="a", question="q").expected == "abstain"
    assert Case(id="a", question="q").expects_abstain
    assert Case(id="a", question="q", sources=["s"]).expected == "answer"
    # graded sources all graded 0: the documents do not cover it
    assert Case(id="a", question="q", sources={"s": 0}).expected == "abstain"


def test_a_case_without_expect_dumps_as_before():
    """Golden sets and results of cases without expect stay byte for byte the same."""
    dumped = Case(id="a", question="q", sources=["s"]).model_dump(exclude_defaults=True)
    assert "expect" not in dumped
    assert "expect" not in Case(id="a", question="q").model_dump()
    assert Case(id="a", question="q", expect="refuse").model_dump()["expect"] == "refuse"


BAD = [
    ("golden.json", '[\n{"id": "a", "question": "q"},\n{"id": "b", "question": "r", "expect": "deflect"}\n]', "golden.json:3"),
    ("golden.jsonl", '{"id": "a", "question": "q"}\n{"id": "b", "question": "r", "expect": 1}\n', "golden.jsonl:2"),
    ("golden.yaml", "- id: a\n  question: q\n- id: b\n  question: r\n  expect: [escalate]\n", "golden.yaml:3"),
    ("golden.csv", "id,question,expect\na,q,\nb,r,ESCALATE\n", "golden.csv:3"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "text", "where"), BAD, ids=[b[0] for b in BAD])
def test_an_unknown_expect_names_file_line_and_field(tmp_path, name, text, where):
    with pytest.raises(InputError) as err:
        parse_golden(text, tmp_path / name)
    assert err.value.where == str(tmp_path / where)
    assert "case 'b'" in err.value.message and "field 'expect'" in err.value.message
    assert "'answer', 'abstain', 'refuse' or 'escalate'" in err.value.message


@pytest.mark.parametrize(
    ("case", "needle"),
    [
        ({"id": "a", "question": "q", "expect": "answer"}, 'expect "answer" needs the sources'),
        ({"id": "a", "question": "q", "sources": ["s"], "expect": "abstain"}, "give no sources"),
    ],
)
def test_expect_must_fit_the_sources(tmp_path, case, needle):
    with pytest.raises(InputError) as err:
        parse_golden(json.dumps([case]), tmp_path / "golden.json")
    assert needle in err.value.message


def test_refuse_and_escalate_fit_with_or_without_sources():
    for expect in ("refuse", "escalate"):
        assert Case(id="a", question="q", expect=expect).expected == expect
        assert Case(id="a", question="q", sources=["s"], expect=expect).expected == expect


START = {
    "golden.json": '[\n  {"id": "plain", "question": "How long?", "sources": ["refunds"]}\n]\n',
    "golden.jsonl": '{"id": "plain", "question": "How long?", "sources": ["refunds"]}\n',
    "golden.yaml": "- id: plain\n  question: How long?\n  sources: [refunds]\n",
    "golden.csv": "id,question,sources,facts,tags,expect\nplain,How long?,refunds,,,\n",
}


@pytest.mark.parametrize("name", sorted(START))
def test_add_writes_expect_in_each_format_and_reads_it_back(tmp_path, name):
    path = tmp_path / name
    path.write_text(START[name], encoding="utf-8")
    case = Case(id="human", question="Can I talk to a person?", expect="escalate")
    add_case(path, case)
    cases = load_golden(path).cases
    assert [c.id for c in cases] == ["plain", "human"]
    assert cases[1] == case and cases[1].expected == "escalate"
    assert cases[0].expect is None  # the existing case is untouched


def test_add_to_a_csv_without_an_expect_column_writes_nothing(tmp_path):
    path = tmp_path / "golden.csv"
    path.write_text("id,question,sources\nplain,How long?,refunds\n", encoding="utf-8")
    before = path.read_bytes()
    with pytest.raises(InputError) as err:
        add_case(path, Case(id="human", question="Person?", expect="escalate"))
    assert "no 'expect' column" in err.value.message
    assert path.read_bytes() == before


def test_cli_add_expect(cli, tmp_path):
    dest = tmp_path / "kb"
    assert cli("example", "kitebase", str(dest)).code == 0
    golden = dest / "golden.json"
    r = cli(
        "add", "--id", "human", "-q", "Can I speak to a person?", "--expect", "escalate", cwd=dest
    )
    assert r.code == 0, r.err
    added = load_golden(golden).cases[-1]
    assert (added.id, added.expect, added.sources) == ("human", "escalate", [])
    before = digest(golden)
    # an unknown value is a usage error naming the option
    r = cli("add", "--id", "x", "-q", "Another question?", "--expect", "deflect", cwd=dest)
    assert r.code == 2 and "--expect" in r.err and "Traceback" not in r.err
    # one that does not fit the sources: one line naming --expect, nothing written
    r = cli("add", "--id", "y", "-q", "A third question?", "--expect", "answer", cwd=dest)
    assert r.code == 2 and "--expect" in r.err and "needs the sources" in r.err
    assert len([ln for ln in r.err.splitlines() if ln.strip()]) == 1
    assert digest(golden) == before
