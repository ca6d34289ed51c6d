from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from pydantic import TypeAdapter, ValidationError

from ragrail.errors import InputError
from ragrail.golden import Case
from ragrail.results import Trace
from ragrail.scoring.case import ScoringOptions, score_case
from ragrail.scoring.checks import (
    CheckError,
    CheckSpec,
    error_field,
    find_pii,
    load_function,
    luhn_ok,
    run_check,
)

SPEC = TypeAdapter(CheckSpec)


def check(answer: str, **spec) -> list[str]:
    return run_check(SPEC.validate_python(spec), answer)


def test_pii_catches_a_planted_card_and_email():
    answer = "Refund sent to card 4111 1111 1111 1111; questions to priya.k@example.com."
    problems = check(answer, type="no_pii")
    assert any("card number" in p for p in problems)
    assert any("e-mail address" in p for p in problems)
    assert "4111 1111 1111 1111" not in " ".join(problems)  # not echoed in full


def test_card_numbers_need_luhn_and_ordinary_numbers_pass():
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")
    assert find_pii("order 4111 1111 1111 1112 is late", ["card"]) == []
    assert check("A 10% refund, capped at ₹150, within 30 minutes.", type="no_pii") == []
    assert any("phone" in p for p in check("Call +91 98765 43210 now", type="no_pii"))


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
    assert check("Please wait", type="python", function="mychecks:polite") == []
    assert check("Wait", type="python", function="mychecks:polite") == ["python: not polite"]
    with pytest.raises(InputError, match="cannot import"):
        check("x", type="python", function="nope_module:f")
    with pytest.raises(ValidationError, match=r"package\.module:function"):
        check("x", type="python", function="nocolon")


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


@pytest.fixture
def project(cli, tmp_path) -> Path:
    dest = tmp_path / "kb"
    assert cli("example", "kitebase", str(dest)).code == 0
    return dest


def add_check(project: Path, toml: str) -> None:
    cfg = project / "ragrail.toml"
    cfg.write_text(cfg.read_text() + "\n" + toml + "\n")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def one_error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("ragrail: error: ")
    return lines[0]


def module_name(project: Path) -> str:
    return f"rr_cli_checks_{abs(hash(str(project)))}"


@pytest.mark.parametrize(
    ("toml", "module", "needles"),
    [
        ('type = "contains"\nvalue = "(unclosed"\nregex = true', None, ["regex", "checks.0"]),
        ('type = "json_schema"\nschema = {type = "banana"}', None, ["schema"]),
        ('type = "number"\npattern = "["', None, ["pattern"]),
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
    assert "raised ValueError: boom" in r.out
    assert digest(project / "baseline.json") == before  # no baseline from a run with errors
