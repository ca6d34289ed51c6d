from __future__ import annotations

import json

import pytest

from ragrail.errors import InputError
from ragrail.golden import lint_golden, load_golden


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_kitebase_golden_set_has_the_articles_cases(kitebase):
    golden = load_golden(kitebase / "golden.json")
    ids = [c.id for c in golden.cases]
    assert len(ids) == 12
    for required in [
        "no-recovery-email",
        "link-expiry",
        "lost-phone",
        "change-sign-in-email",
        "secure-account",
        "paraphrase",
        "bank-transfer",
        "sso-reset",
        "downgrade-timing",
    ]:
        assert required in ids
    secure = next(c for c in golden.cases if c.id == "secure-account")
    assert len(secure.sources) == 2 and len(secure.facts) == 2
    bank = next(c for c in golden.cases if c.id == "bank-transfer")
    assert bank.sources == [] and bank.facts == [] and bank.expects_abstain


def test_line_numbers_point_at_each_case(tmp_path):
    path = write(
        tmp_path,
        "g.json",
        '[\n  {"id": "a", "question": "q?"},\n\n  {"id": "b",\n "question": "r?"}\n]',
    )
    golden = load_golden(path)
    assert golden.lines == {"a": 2, "b": 4}
    assert golden.where("b") == f"{path}:4"


def test_jsonl_and_cases_object(tmp_path):
    path = write(
        tmp_path, "g.jsonl", '{"id": "a", "question": "q?"}\n\n{"id": "b", "question": "r?"}\n'
    )
    assert load_golden(path).lines == {"a": 1, "b": 3}
    obj = write(tmp_path, "o.json", json.dumps({"cases": [{"id": "a", "question": "q?"}]}))
    assert [c.id for c in load_golden(obj).cases] == ["a"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[{"id": "a"}]', "case 'a': missing field 'question'"),
        ('[{"id": "a", "question": "q", "fact": ["x"]}]', "unknown field 'fact'"),
        (
            '[{"id": "a", "question": "q", "facts": [""]}]',
            "field 'facts.0': a fact must not be empty",
        ),
        ('[{"id": "a", "question": "q", "facts": "x"}]', "field 'facts'"),
        ("[]", "no cases"),
        ('{"a": 1}', "expected a JSON array"),
        ("[1]", "must be an object"),
    ],
)
def test_invalid_cases(tmp_path, text, message):
    with pytest.raises(InputError) as info:
        load_golden(write(tmp_path, "g.json", text))
    assert message in str(info.value)
    assert "g.json" in str(info.value)


def test_jsonl_syntax_error_has_line_and_column(tmp_path):
    path = write(
        tmp_path, "g.jsonl", '{"id": "a", "question": "q?"}\n{"id": "b" "question": "r?"}\n'
    )
    with pytest.raises(InputError) as info:
        load_golden(path)
    assert str(info.value).startswith(f"{path}:2:12: invalid JSON")


def test_lint_passes_on_the_example_and_names_a_typo(kitebase, tmp_path):
    from ragrail.system.corpus import load_documents

    docs = {d.name: d.text for d in load_documents(kitebase / "docs")}
    golden = load_golden(kitebase / "golden.json")
    assert lint_golden(golden, docs) == []

    cases = json.loads((kitebase / "golden.json").read_text())
    cases[1]["facts"] = ["30 minuets"]
    cases[2]["sources"] = ["two-factr"]
    broken = load_golden(write(tmp_path, "g.json", json.dumps(cases, indent=1)))
    problems = [str(p) for p in lint_golden(broken, docs)]
    assert any(
        "case 'link-expiry'" in p and 'fact "30 minuets" not found in reset-password' in p
        for p in problems
    )
    assert any("case 'lost-phone'" in p and "unknown source 'two-factr'" in p for p in problems)


def test_lint_matches_facts_across_line_breaks_and_curly_quotes(tmp_path):
    golden = load_golden(
        write(
            tmp_path,
            "g.json",
            '[{"id": "a", "question": "q", "sources": ["d"], "facts": ["can\'t open it"]}]',
        )
    )
    assert lint_golden(golden, {"d": "If you can’t\nopen it, ..."}) == []


def test_lint_cli(cli, kitebase, tmp_path):
    r = cli("lint", "--example", "kitebase")
    assert r.code == 0 and "12 cases, 10 documents: OK" in r.out
    dest = tmp_path / "kb"
    cli("example", "kitebase", str(dest))
    golden = dest / "golden.json"
    golden.write_text(golden.read_text().replace('"backup codes"', '"backup kodes"'))
    r = cli("lint", cwd=dest)
    assert r.code == 1
    assert "case 'lost-phone'" in r.err and '"backup kodes"' in r.err


def test_lint_warns_when_a_case_from_production_left_this_golden_set(tmp_path):
    from ragrail.golden.lint import lint_from_log

    path = tmp_path / "golden.json"
    path.write_text(json.dumps([{"id": "kept", "question": "Still here?"}]))
    gold = load_golden(path)
    other = tmp_path / "other.json"
    other.write_text("[]")
    rows = [
        ("kept", "c1", str(path), 1_714_550_400.0),
        ("gone", "c2", str(path), 1_714_550_400.0),
        ("elsewhere", "c3", str(other), 1_714_550_400.0),  # another golden set's case
        ("moved", "c4", str(tmp_path / "old-name.json"), 1_714_636_800.0),  # its file is gone
    ]
    problems = lint_from_log(gold, rows, str(path))
    assert [p.case_id for p in problems] == ["gone", "moved"]
    assert all(p.warning for p in problems)
    assert str(problems[0]) == (
        f"{path}: warning: case 'gone': came from production conversation 'c2' (added "
        "2024-05-01) and is no longer in golden.json: production failures are never removed "
        "silently (add it back, or keep it out on purpose and say why)"
    )
    assert "(added 2024-05-02)" in str(problems[1])
