"""Reading a compact baseline fast: pydantic-core parses it and a count of colons stands in
for the duplicate-key check, so the fast reader must take exactly what the strict one
(``jsonio.parse_json``) takes, give the same baseline, and refuse with the same message."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ragrail.errors import InputError
from ragrail.jsonio import parse_json
from ragrail.project import example_dir
from ragrail.store.baseline import load_baseline, parse_baseline
from ragrail.store.baseline.read import read_baseline_text
from tests.helpers import KITEBASE_V1

FIRST_ERRORED = '      "errored": false,\n      "id": "no-recovery-email",'


@pytest.fixture
def path(tmp_path: Path) -> Path:
    """A copy of the bundled Kitebase baseline (12 questions, compact)."""
    target = tmp_path / "baseline.json"
    shutil.copyfile(example_dir("kitebase") / "baseline.json", target)
    return target


def edited(path: Path, old: str, new: str) -> str:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    text = text.replace(old, new, 1)
    path.write_text(text, encoding="utf-8")
    return text


def strict(text: str, path: Path):
    """The baseline as the strict reader (Python's json with every check) makes it."""
    return parse_baseline(parse_json(text, path), path)


# A key given twice, with the same value or another: a parser keeps one pair silently.
TWICE = [
    ("case-same-value", '"errored": false,', '"errored": false, "errored": false,', "cases.0.errored"),
    ("case-other-value", '"errored": false,', '"errored": true, "errored": false,', "cases.0.errored"),
    ("retrieval", '"recall": 1.0, "retrieved"', '"recall": 1.0, "recall": 1.0, "retrieved"', "cases.0.retrieval.recall"),
    ("answer", '"passes": 1, ', '"passes": 1, "passes": 1, ', "cases.0.answer.passes"),
    ("metrics", '"correctness": 1.0, ', '"correctness": 1.0, "correctness": 1.0, ', "cases.0.metrics.correctness"),
    ("id-with-colons", '"id": "no-recovery-email",', '"id": "a:b", "id": "no-recovery-email",', "cases.0.id"),
    ("top-level", '  "format": "ragrail-baseline",', '  "format": "ragrail-baseline",\n  "format": "ragrail-baseline",', "format"),
    ("config", '"repeats": 1,', '"repeats": 1,\n    "repeats": 1,', "config.repeats"),
    # the escape adds the one colon the dropped pair takes away: the counts alone agree
    ("hidden-by-an-escape", FIRST_ERRORED, '      "errored": false, "errored": false,\n      "id": "a\\u003ab",', "cases.0.errored"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "old", "new", "field"), TWICE, ids=[t[0] for t in TWICE])
def test_a_key_given_twice_is_refused_naming_it_and_its_line(path, name, old, new, field):
    text = edited(path, old, new)
    with pytest.raises(InputError) as info:
        load_baseline(path)
    assert f"field {field!r} is given twice in the same object" in info.value.message
    key = f'"{field.rpartition(".")[2]}"'
    second = text.index(new) + new.index(key, new.index(key) + 1)
    line = text[:second].count("\n") + 1
    assert info.value.where is not None
    assert info.value.where.startswith(f"{path}:{line}:"), (info.value.where, line)


def test_a_key_given_twice_is_named_before_a_bad_field_elsewhere(path):
    edited(path, '"recall": 1.0, "retrieved"', '"recall": 1.5, "retrieved"')
    edited(path, '"id": "link-expiry",', '"id": "link-expiry", "id": "link-expiry",')
    with pytest.raises(InputError, match=r"'cases\.1\.id' is given twice"):
        load_baseline(path)


TEXTS = [
    ("as-written", "", ""),
    ("colons-in-strings", '"id": "no-recovery-email"', '"id": "q: \\"a\\": {\\"b\\": 1}"'),
    ("colon-escaped", '"id": "no-recovery-email"', '"id": "time\\u003a 30"'),
    ("colon-escaped-upper", '"id": "no-recovery-email"', '"id": "time\\u003A 30"'),
    ("colons-in-problems", '"problems": ["missing \\"backup codes\\""]', '"problems": ["a: b", "::"]'),
    ("keys-reordered", FIRST_ERRORED, '      "id": "no-recovery-email",\n      "errored": false,'),
    ("integer-rates", '"recall": 1.0, "retrieved"', '"recall": 1, "retrieved"'),
    ("emoji-escape", '"id": "no-recovery-email"', '"id": "\\ud83d\\ude00"'),
    ("whitespace", '"cause": null,', '"cause"  :\tnull ,'),
]  # fmt: skip


@pytest.mark.parametrize(("name", "old", "new"), TEXTS, ids=[t[0] for t in TEXTS])
def test_the_fast_reader_gives_the_baseline_the_strict_one_gives(path, name, old, new):
    text = edited(path, old, new) if old else path.read_text(encoding="utf-8")
    loaded = load_baseline(path)
    assert loaded == strict(text, path)
    assert len(loaded.cases) == 12


@pytest.mark.parametrize(("name", "old", "new"), TEXTS, ids=[t[0] for t in TEXTS])
def test_a_well_formed_baseline_never_needs_the_slow_strict_parser(
    path, monkeypatch, name, old, new
):
    """The strict parser is the fallback for problems (and escaped colons): a baseline that
    loads takes the fast path, colons in its strings included."""
    if old:
        edited(path, old, new)

    def refused(*args: object) -> None:
        raise AssertionError("parsed twice")

    monkeypatch.setattr("ragrail.store.baseline.read.parse_json", refused)
    if "escaped" in name:
        with pytest.raises(AssertionError, match="parsed twice"):
            load_baseline(path)
    else:
        assert len(load_baseline(path).cases) == 12


def test_an_escaped_colon_reads_as_a_colon(path):
    edited(path, '"id": "no-recovery-email"', '"id": "time\\u003a 30"')
    assert load_baseline(path).cases[0].id == "time: 30"


def test_a_byte_order_mark_and_windows_line_ends_are_read(path):
    text = path.read_text(encoding="utf-8")
    path.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"))
    assert load_baseline(path) == strict(text, path)


REFUSED = [
    ("nan", '"recall": 1.0, "retrieved"', '"recall": NaN, "retrieved"', "NaN is not valid JSON"),
    ("lone-surrogate", '"id": "no-recovery-email"', '"id": "\\ud800"', "without its pair"),
    ("broken", '"cause": null,', '"cause": null,,', "invalid JSON"),
    ("huge", '"recall": 1.0, "retrieved"', '"recall": 1e400, "retrieved"', "finite"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "old", "new", "says"), REFUSED, ids=[t[0] for t in REFUSED])
def test_what_the_strict_reader_refuses_is_refused_with_its_message(path, name, old, new, says):
    text = edited(path, old, new)
    with pytest.raises(InputError) as fast:
        load_baseline(path)
    with pytest.raises(InputError) as slow:
        strict(text, path)
    assert says in fast.value.message
    assert (fast.value.message, fast.value.where) == (slow.value.message, slow.value.where)


def test_text_that_is_not_a_compact_baseline_goes_to_the_strict_reader(path):
    with pytest.raises(InputError):
        read_baseline_text("[]", path)
    whole = KITEBASE_V1
    text = whole.read_text(encoding="utf-8")
    assert read_baseline_text(text, whole) == strict(text, whole)
    twice = text.replace('"schema_version": 1', '"schema_version": 1, "schema_version": 1', 1)
    assert twice != text
    with pytest.raises(InputError, match="given twice"):
        read_baseline_text(twice, whole)


def test_a_large_baseline_reads_the_same_fast_and_strict(path):
    data = json.loads(path.read_text(encoding="utf-8"))
    template = data["cases"]
    data["cases"] = [
        {**template[i % 12], "id": f"q{i}: {template[i % 12]['id']}"} for i in range(3000)
    ]
    text = json.dumps(data, indent=2, ensure_ascii=False)
    path.write_text(text, encoding="utf-8")
    assert load_baseline(path) == strict(text, path)


def test_two_byte_order_marks_are_refused_as_the_strict_reader_refuses_them(path):
    # the fast parser refuses the second mark; the strict reader must then see the
    # text as read (one mark dropped), not the text with the first mark already dropped
    text = path.read_text(encoding="utf-8")
    path.write_bytes(b"\xef\xbb\xbf\xef\xbb\xbf" + text.encode("utf-8"))
    with pytest.raises(InputError) as fast:
        load_baseline(path)
    with pytest.raises(InputError) as slow:
        strict("\ufeff\ufeff" + text, path)
    assert "invalid JSON" in fast.value.message
    assert (fast.value.message, fast.value.where) == (slow.value.message, slow.value.where)
