"""A fact keeps its own ``*``, ``_`` and `````` ` ``````; only the text's paired markup goes."""

from __future__ import annotations

import random

import pytest

from ragrail.golden import Case
from ragrail.records.results import RetrievedChunk, Trace
from ragrail.scoring.case import score_case
from ragrail.text.matching import (
    contains,
    find,
    normalise,
    normalise_with_offsets,
    original_spans,
    parse_fact,
)


@pytest.mark.parametrize(
    ("fact", "text", "found"),
    [
        ("_logs", "Check your npm logs.", False),  # the underscore is the fact's own
        ("_logs", "Look in the `_logs` folder.", True),
        ("_logs", "Look in the _logs folder.", True),
        ("_logs", "Look in the **_logs** folder.", True),  # bold around it goes
        ("_logs", "Look in npm_logs.", False),  # "_" is a word character: inside a word
        ("logs", "Look in the _logs folder.", False),  # ... and so it binds "logs" too
        ("__init__", "Edit init.", False),
        ("__init__", "Edit `__init__.py` first.", True),  # a code span is as written
        # bare, Markdown pairs the "__" as bold "init": the fact's own marks are in the
        # text as written, and that is where it is looked for too
        ("__init__", "Edit __init__.py first.", True),
        ("__init__", "Define it in the __init__ file.", True),
        ("__init__", "Run git init, then edit init.py.", False),  # its marks are its own
        ("init", "Edit __init__.py first.", True),  # as rendered: bold "init"
        ("__init__", "Edit __init__py first.", False),  # "__init__py" is one word
        ("npm ci", "Run **npm ci** now.", True),
        ("npm ci", "Run **`npm ci`** now.", True),
        ("npm ci", "Run `npm ci` now.", True),
        ("*args", "Pass `*args` through.", True),
        ("**30 days**", "within **30 days**", True),  # the fact as written is there
        ("**30 days**", "within 30 days", False),  # a fact's marks are never markup
        ("**30 days**", "within `**30 days**`", True),
    ],
)
def test_facts_keep_their_own_marks(fact: str, text: str, found: bool) -> None:
    assert contains(fact, text) is found


def test_fact_needles_are_the_fact_as_written() -> None:
    assert parse_fact("_Logs").needles == ("_logs",)
    assert parse_fact({"any": ["__init__", "**Init**"]}).needles == ("__init__", "**init**")
    assert find("_logs", normalise("the `_logs` folder")) == (4, 9)


def test_a_fact_found_as_written_maps_onto_the_text_without_markup() -> None:
    text = normalise("Edit __init__.py and **x**.")
    assert text == "edit init.py and x."
    assert find("__init__", text) == (5, 9)  # "init": its marks were dropped from the text
    # a normalised text that lost its memory of the marks (sliced, joined) finds as before
    assert find("__init__", str(text)) is None
    assert original_spans(["__init__"], "Edit __init__.py first.") == [(7, 11)]


def test_highlights_point_at_the_fact_inside_the_code_marks() -> None:
    text = "the `_logs` folder"
    assert original_spans(["_logs"], text) == [(5, 10)]
    assert original_spans(["_logs"], "your npm logs") == []


@pytest.mark.parametrize(
    "text",
    [
        "the `_logs` folder",
        "**bold *em***",
        "Возврат в течение **30\u00a0дней**, см. `npm ci`.",
        "\u200b_a_ \u3000 *b*\u200b",
        "x ＊ｙ＊ z",  # fullwidth marks become * under NFKC
    ],
)
def test_offsets_agree_with_normalise_on_markup(text: str) -> None:
    norm, starts, ends = normalise_with_offsets(text)
    assert norm == normalise(text)
    assert len(starts) == len(ends) == len(norm)


def test_offsets_agree_with_normalise_on_random_marked_text() -> None:
    rng = random.Random(23)
    alphabet = "ab1 _*`.,\n-é\u0301\u200b\u00a0＊ß"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        assert normalise_with_offsets(text)[0] == normalise(text), repr(text)


def _answer_has_fact(answer: str) -> bool:
    case = Case(id="logs", question="Where are the logs?", sources=["debugging"], facts=["_logs"])
    chunk = RetrievedChunk(
        id="debugging#1",
        source="debugging",
        rank=1,
        score=1.0,
        text="Logs go to the `_logs` folder.",
    )
    result = score_case(case, Trace(case_id="logs", retrieved=[chunk], answer=answer))
    assert result.facts_retrieved == ["_logs"]  # the chunk's code span holds it
    return result.correctness == 1.0


def test_scoring_does_not_take_logs_for_the_logs_folder() -> None:
    assert _answer_has_fact("They are in the `_logs` folder [debugging#1].")
    assert not _answer_has_fact("Check your npm logs [debugging#1].")


@pytest.mark.parametrize(
    ("fact", "text"),
    [
        ("*args", "Pass **args** here."),  # bold "args": the fact's * is part of a ** pair
        ("*args", "Pass **args to it."),  # a run of two marks is not the fact's one
        ("`npm ci`", "Run ``npm ci`` now."),
        ("**", "A **bold** word."),  # a fact of marks only leaves nothing to find
        ("`", "Run `npm ci` now."),
    ],
)
def test_a_fact_is_not_found_in_a_longer_run_of_its_own_marks(fact: str, text: str) -> None:
    # hostile review of 7d4e1ec: the text as written held "*args" inside "**args**", and
    # a fact of marks only mapped to an empty span, found, highlighting the rest of the text
    assert find(fact, normalise(text)) is None
    assert original_spans([fact], text) == []


def test_a_fact_with_marks_is_still_found_where_its_marks_stand_alone() -> None:
    assert find("*args", normalise("Use *args and **kwargs.")) == (4, 9)
    assert find("**kwargs", normalise("Use *args and **kwargs.")) == (14, 22)


def test_a_text_with_many_marks_maps_many_spans_in_linear_time() -> None:
    import time

    text = " ".join(["*x*"] * 20_000)  # 20,000 italic x: the fact as written each time
    began = time.perf_counter()
    spans = original_spans(["*x"], text)
    # every mark before each span was counted again per span: 30 s at 8,000, now 0.3 s
    assert time.perf_counter() - began < 5
    assert len(spans) == 20_000 and spans[:2] == [(1, 2), (5, 6)]
