from __future__ import annotations

import pytest
from pydantic import TypeAdapter

from ragrail.errors import InputError
from ragrail.scoring.checks import CheckSpec, find_pii, luhn_ok, run_check

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
    with pytest.raises(InputError, match=r"package\.module:function"):
        check("x", type="python", function="nocolon")
