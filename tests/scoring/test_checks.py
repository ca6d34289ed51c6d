from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from pydantic import TypeAdapter, ValidationError

from ragrail.errors import InputError
from ragrail.golden import Case
from ragrail.records.results import Trace
from ragrail.scoring.case import ScoringOptions, score_case
from ragrail.scoring.checks import (
    CheckError,
    CheckSpec,
    card_shaped,
    error_field,
    iban_ok,
    isbn13_ok,
    load_function,
    luhn_ok,
    run_check,
)
from tests.helpers import digest, one_error_line

SPEC = TypeAdapter(CheckSpec)


def check(answer: str, **spec) -> list[str]:
    return run_check(SPEC.validate_python(spec), answer)


def test_number_bound_fails_a_refund_above_the_cap():
    spec = {"type": "number", "pattern": r"₹\s*(\d+)", "max": 150, "name": "refund cap"}
    assert check("You get ₹200 back.", **spec) == ["refund cap: 200 is above the maximum 150"]
    assert check("You get ₹150 back, within 30 minutes.", **spec) == []


def test_contains_regex_json_and_schema():
    assert check("Go to Settings", type="contains", value="settings") == []
    assert check("x", type="contains", value="Settings") == [
        'contains: does not contain "Settings"'
    ]
    assert check("call 555", type="not_contains", value=r"\d{3}", regex=True) != []
    assert check('{"a": 1}', type="json") == []
    assert check("{a: 1}", type="json")[0].startswith("json: not valid JSON")
    schema = {
        "type": "object",
        "required": ["refund"],
        "properties": {"refund": {"type": "number"}},
    }
    assert check('{"refund": 15}', type="json_schema", schema=schema) == []
    assert "'refund' is a required property" in check("{}", type="json_schema", schema=schema)[0]


def test_python_check(tmp_path, monkeypatch):
    (tmp_path / "mychecks.py").write_text(
        "def polite(answer, case):\n    return [] if 'please' in answer.lower() else ['not polite']\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    # another test's project (run in this process) may have left its own mychecks imported
    monkeypatch.delitem(sys.modules, "mychecks", raising=False)
    assert check("Please wait", type="python", function="mychecks:polite") == []
    assert check("Wait", type="python", function="mychecks:polite") == ["python: not polite"]
    with pytest.raises(InputError, match="cannot import"):
        check("x", type="python", function="nope_module:f")
    with pytest.raises(ValidationError, match=r"package\.module:function"):
        check("x", type="python", function="nocolon")


# ------------------------------------------------------ no_pii: real text, both ways

# (text, region, expected problems without the label): true positives name what they found
PII_FOUND = [
    ("Refund sent to card 4111 1111 1111 1111.", None, ["card number 41…11"]),
    ("card 4111-1111-1111-1111 on file", None, ["card number 41…11"]),
    ("card 4111111111111111.", None, ["card number 41…11"]),
    ("Amex 3782 822463 10005 was charged", None, ["card number 37…05"]),
    ("Card #4111 1111 1111 1111", None, ["card number 41…11"]),
    ("(4111 1111 1111 1111)", None, ["card number 41…11"]),
    ("card:4111111111111111", None, ["card number 41…11"]),
    ("questions to priya.k@example.com.", None, ["e-mail address pr…om"]),
    ("Call +91 98765 43210 now", None, ["phone number 91…10"]),
    ("Tel: +44 20 7946 0958.", None, ["phone number 44…58"]),
    ("Ring +1 (415) 555-0132 today", None, ["phone number 14…32"]),
    ("Call (415) 555-0132", "US", ["phone number 41…32"]),
    ("call 98765 43210", "IN", ["phone number 98…10"]),
    ("call 020 7946 0958", "gb", ["phone number 02…58"]),
    ("Pay to DE89 3704 0044 0532 0130 00 OK", None, ["IBAN DE…00"]),
    ("iban de89370400440532013000.", None, ["IBAN DE…00"]),
    ("GB82 WEST 1234 5698 7654 32", None, ["IBAN GB…32"]),
    # issue 25: a label never protects a card (this was kept as an order number before)
    ("Order #4111111111111111 has shipped", None, ["card number 41…11"]),
    ("WhatsApp ID: +44 7700 900123", None, ["phone number 44…23"]),
    ("tel:+14155552671 or 0049 30 1234567", None, ["phone number 14…71", "phone number 00…67"]),
    ("０９０－１２３４－５６７８", "JP", ["phone number ０９…７８"]),
    (
        "Card 4111 1111 1111 1111, mail a@b.io, IBAN GB82WEST12345698765432",
        None,
        ["card number 41…11", "e-mail address a@…io", "IBAN GB…32"],
    ),
]

# ordinary text a bot writes: none of it is PII (dates, times, orders, ISBNs, amounts)
PII_NOT = [
    ("Your slot is 2024-01-15 10:30.", None),
    ("Your slot is 2024-01-15 10:30.", "US"),
    ("Delivered on 15.01.2024 at 10:30", "DE"),
    ("Delivered on 15.01.2024 10:30:15", None),
    ("Due 01/15/2024, 10:30 am", "US"),
    ("Order #123456789 has shipped", "IN"),
    ("tracking no. 9876543210", "IN"),  # a valid Indian mobile, but labelled
    ("ISBN 978-3-16-148410-0", None),
    ("ISBN 9780306406065", None),
    ("see 9780306406065 on the shelf", None),  # Luhn-valid, but an ISBN-13
    ("logged at 20240115103002", None),  # Luhn-valid, but a timestamp
    ("order 4111 1111 1111 1112 is late", None),  # fails the Luhn check
    ("ids 1234 4111 1111 1111 1111", None),  # a card-valid tail of a longer run
    ("card 4111 1111 1111 1111 1111a", None),
    ("SKU4111111111111112", None),  # glued to a word and not Luhn-valid: an identifier
    ("ratio 0.4111111111111111", None),
    ("DE89 3704 0044 0532 0130 01", None),  # fails mod-97
    ("A 10% refund, capped at ₹150, within 30 minutes.", "IN"),
    ("Call (415) 555-0132", None),  # a national number needs its region
    ("Gold costs ₹149/month; refunds take 5-7 days.", "IN"),
    ("Version 4.1.1111111111111111 and build 20240115", None),
    ("Bestellnummer 4155552671, 注文番号 09012345678", "US"),
    ("USD 4155552671 and 4155552671円 and 415 555 267 euros", "US"),
    ("Windows 10.0.19045.3803, UPC 036000291452, EAN 4006381333931", "US"),
]


def pii(text: str, region: str | None) -> list[str]:
    problems = check(text, type="no_pii", region=region)
    assert all(p.startswith("no_pii: ") for p in problems)
    return [p.removeprefix("no_pii: ") for p in problems]


@pytest.mark.parametrize(("text", "region", "expected"), PII_FOUND)
def test_pii_that_is_there_is_found(text, region, expected):
    assert pii(text, region) == expected


@pytest.mark.parametrize(("text", "region"), PII_NOT)
def test_dates_orders_isbns_and_amounts_are_not_pii(text, region):
    assert pii(text, region) == []


def test_the_exclusions_are_what_saves_luhn_valid_numbers():
    # each of these would be a card by Luhn alone: the test above means something
    for digits in ("4111111111111111", "9780306406065", "20240115103002"):
        assert luhn_ok(digits)
    assert isbn13_ok("9780306406065") and not isbn13_ok("4111111111111111")
    assert iban_ok("GB82 WEST 1234 5698 7654 32") and iban_ok("DE89370400440532013000")
    assert not iban_ok("DE8937040044053201300")  # one character short for Germany
    assert not iban_ok("XX89370400440532013000")  # no such country


def test_card_shapes():
    assert card_shaped("4111111111111111") and card_shaped("4111 1111 1111 1111")
    assert card_shaped("3782 822463 10005") and card_shaped("4111 1111 1111 1")
    assert not card_shaped("4111 1111-1111 1111")  # mixed separators
    assert not card_shaped("41 1111 1111 1111 11")
    assert not card_shaped("411111111111")  # 12 digits


def test_pii_kinds_narrow_the_check_and_the_value_is_never_echoed():
    text = "Card 4111 1111 1111 1111, phone +44 20 7946 0958, IBAN GB82WEST12345698765432"
    assert check(text, type="no_pii", kinds=["iban"]) == ["no_pii: IBAN GB…32"]
    assert check(text, type="no_pii", kinds=["phone"]) == ["no_pii: phone number 44…58"]
    everything = " ".join(check(text, type="no_pii"))
    for secret in ("4111 1111 1111 1111", "7946 0958", "WEST1234"):
        assert secret not in everything
    # the IBAN's digits are not read again as a card or a phone number
    assert len(check(text, type="no_pii")) == 3


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ({"type": "no_pii", "region": "Narnia"}, "region 'Narnia'"),
        ({"type": "no_pii", "region": "XX"}, "two letters"),
        ({"type": "no_pii", "kinds": ["ssn"]}, "kinds"),
        ({"type": "no_pii", "kinds": []}, "kinds"),
    ],
)
def test_a_bad_pii_option_is_refused_when_it_is_read(spec, needle):
    with pytest.raises(ValidationError) as info:
        SPEC.validate_python(spec)
    assert needle in str(info.value)


# ------------------------------------------------------ validated when loaded


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ({"type": "contains", "value": "(unclosed", "regex": True}, "invalid regex in value"),
        ({"type": "not_contains", "value": "*", "regex": True}, "nothing to repeat"),
        ({"type": "number", "pattern": "(", "max": 3}, "invalid regex in pattern"),
        ({"type": "json_schema", "schema": {"type": "banana"}}, "not a valid JSON schema"),
        ({"type": "json_schema", "schema": {"type": 12}}, "not a valid JSON schema"),
        ({"type": "json_schema", "schema": {"minLength": -1}}, "minLength"),
        ({"type": "number", "min": float("nan")}, "finite number"),
        ({"type": "number", "max": float("inf")}, "finite number"),
        ({"type": "python", "function": "justaname"}, "package.module:function"),
    ],
)
def test_a_broken_check_is_refused_when_it_is_read(spec, needle):
    with pytest.raises(ValidationError) as info:
        SPEC.validate_python(spec)
    assert needle in str(info.value)


def test_a_literal_value_is_not_a_regex():
    # without regex = true the value is a plain string, so "(" is fine
    assert check("a (b", type="contains", value="(") == []


def test_error_field_drops_the_check_type_pydantic_adds():
    assert error_field(("checks", 0, "contains", "value")) == "checks.0.value"
    assert error_field(("checks", 2, "number")) == "checks.2"
    assert error_field(("pipeline", "top_k")) == "pipeline.top_k"


# ------------------------------------------------------ a function that fails


@pytest.fixture
def checks_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Write a module of check functions under a name no other test uses."""
    counter = iter(range(1000))

    def write(body: str) -> str:
        name = f"rr_checks_{tmp_path.name.replace('-', '_')}_{next(counter)}"
        (tmp_path / f"{name}.py").write_text(body)
        monkeypatch.syspath_prepend(str(tmp_path))
        return name

    return write


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("def f(answer, case):\n    raise ValueError('boom')\n", "raised ValueError: boom"),
        ("import sys\ndef f(answer, case):\n    sys.exit(0)\n", "raised SystemExit"),
        ("def f(answer, case):\n    return 'not polite'\n", "returned str"),
        ("def f(answer, case):\n    return 3\n", "returned int"),
    ],
)
def test_a_check_function_that_fails_raises_check_error(checks_module, body, needle):
    name = checks_module(body)
    with pytest.raises(CheckError, match=needle):
        check("x", type="python", function=f"{name}:f", name="polite")


def test_a_check_function_that_raises_makes_the_question_an_error(checks_module):
    name = checks_module("def f(answer, case):\n    raise RuntimeError('db down')\n")
    spec = SPEC.validate_python({"type": "python", "function": f"{name}:f"})
    case = Case(id="a", question="q?", sources=["doc"], facts=["30 minutes"])
    trace = Trace(case_id="a", answer="It lasts 30 minutes [doc#1].")
    result = score_case(case, trace, ScoringOptions(checks=(spec,)))
    assert result.errored
    assert "raised RuntimeError: db down" in (result.trace.error or "")
    assert result.answer_pass is None and result.answer_runs == 0
    assert result.correctness is None  # no half-scored answer beside the error


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("def f(a, c)\n    return []\n", "SyntaxError"),
        ("raise RuntimeError('import-time failure')\n", "import-time failure"),
        ("import sys\nsys.exit(3)\n", "SystemExit"),
        ("def other(a, c):\n    return []\n", "has no function 'f'"),
    ],
)
def test_a_check_module_that_cannot_be_imported_is_an_input_error(checks_module, body, needle):
    name = checks_module(body)
    with pytest.raises(InputError, match=needle):
        load_function(f"{name}:f")


def test_check_functions_import_from_the_project_folder(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for folder, verdict in ((a, "[]"), (b, "['from b']")):
        folder.mkdir()
        (folder / "rr_samename_checks.py").write_text(
            f"def f(answer, case):\n    return {verdict}\n"
        )
    # the same module name in two projects, one after the other in one process
    assert load_function("rr_samename_checks:f", a)("x", None) == []
    assert load_function("rr_samename_checks:f", b)("x", None) == ["from b"]


# ------------------------------------------------------ through the CLI


def add_check(project: Path, toml: str) -> None:
    cfg = project / "ragrail.toml"
    cfg.write_text(cfg.read_text() + "\n" + toml + "\n")


def module_name(project: Path) -> str:
    # short: the scorecard cell that quotes it (and the error after it) has a width
    return f"rrc{abs(hash(str(project))) % 10**8}"


@pytest.mark.parametrize(
    ("toml", "module", "needles"),
    [
        ('type = "contains"\nvalue = "(unclosed"\nregex = true', None, ["regex", "checks.0"]),
        ('type = "json_schema"\nschema = {type = "banana"}', None, ["schema"]),
        ('type = "number"\npattern = "["', None, ["pattern"]),
        ('type = "no_pii"\nregion = "Narnia"', None, ["region", "checks.0"]),
        ('type = "python"\nfunction = "rr_nosuch.module:f"', None, ["rr_nosuch", "[[checks]]"]),
        (
            'type = "python"\nfunction = "MODULE:polite"',
            "def polite(a, c)\n    return []\n",
            ["SyntaxError"],
        ),
        (
            'type = "python"\nfunction = "MODULE:polite"',
            "def other(a, c):\n    return []\n",
            ["polite"],
        ),
    ],
)
def test_a_broken_config_check_is_exit_2_before_anything_runs(cli, project, toml, module, needles):
    name = module_name(project)
    if module is not None:
        (project / f"{name}.py").write_text(module)
    add_check(project, "[[checks]]\n" + toml.replace("MODULE", name))
    before = digest(project / "baseline.json")
    r = cli("run", "--save-baseline", cwd=project)
    assert r.code == 2
    line = one_error_line(r.err)
    assert "ragrail.toml" in line
    for needle in needles:
        assert needle in line
    assert digest(project / "baseline.json") == before
    assert not (project / ".ragrail" / "history.sqlite").exists()


@pytest.mark.parametrize(
    ("check_spec", "needle"),
    [
        ({"type": "contains", "value": "([", "regex": True}, "regex"),
        ({"type": "json_schema", "schema": {"type": 12}}, "schema"),
        ({"type": "python", "function": "rr_nosuchmod:f"}, "rr_nosuchmod"),
    ],
)
def test_a_broken_golden_check_is_exit_2_naming_the_case_and_line(cli, project, check_spec, needle):
    golden = project / "golden.json"
    cases = json.loads(golden.read_text())
    cases[1]["checks"] = [check_spec]
    golden.write_text(json.dumps(cases, indent=1))
    before = digest(project / "baseline.json")
    r = cli("run", "--save-baseline", cwd=project)
    assert r.code == 2
    line = one_error_line(r.err)
    assert f"case {cases[1]['id']!r}" in line and needle in line
    assert "golden.json:" in line
    assert digest(project / "baseline.json") == before


def test_a_check_function_from_the_project_folder_runs_and_one_that_raises_is_exit_3(cli, project):
    name = module_name(project)
    (project / f"{name}.py").write_text("def polite(answer, case):\n    return []\n")
    add_check(project, f'[[checks]]\ntype = "python"\nfunction = "{name}:polite"')
    r = cli("run", cwd=project)  # imported from the project folder, not the current one
    assert r.code == 0, r.err

    # a new module name: this process already imported the first one
    raising = name + "_raises"
    (project / f"{raising}.py").write_text(
        "def polite(answer, case):\n    raise ValueError('boom')\n"
    )
    cfg = project / "ragrail.toml"
    cfg.write_text(cfg.read_text().replace(f"{name}:polite", f"{raising}:polite"))
    before = digest(project / "baseline.json")
    r = cli("run", "--save-baseline", cwd=project)
    assert r.code == 3, r.out + r.err
    assert "Traceback" not in r.out + r.err
    assert "raised ValueError: boom" in r.out, r.out
    assert digest(project / "baseline.json") == before  # no baseline from a run with errors


@pytest.mark.parametrize(
    ("kind", "value", "answer", "problem"),
    [
        ("contains", "30 days", "Refunds within 130 days.", True),  # not at a token boundary
        ("contains", "30 days", "Refunds within 30 days.", False),
        ("contains", "Straße", "HAUPTSTRASSE 5, STRASSE", False),  # casefold, boundary at both ends
        ("contains", "café", "Cafe\u0301 opens at nine", False),  # decomposed é
        ("not_contains", "$10", "It costs $100.", False),  # "$10" is not in "$100"
        ("not_contains", "$10", "It costs $10.", True),
    ],
)
def test_contains_checks_use_the_fact_matcher(kind, value, answer, problem):
    check = TypeAdapter(CheckSpec).validate_python({"type": kind, "value": value})
    assert bool(run_check(check, answer)) is problem
