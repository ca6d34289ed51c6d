"""The stratified sample: which stratum a conversation falls in, each stratum's share,
the seeded draw, and the labelling file's rows."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter

import pytest

from ragrail.online.record import Context, Conversation
from ragrail.online.sample import COLUMNS, draw, iso_date, render, shares, stratum_of


def conv(i: int, **kw) -> Conversation:
    return Conversation(
        id=f"c{i:04}", at=1_714_550_400.0 + i, version="v1", question=f"q{i}?", answer="a", **kw
    )


def test_a_conversation_is_counted_in_its_first_stratum_only():
    both = conv(1, thumbs=-1, escalated=True, flags=("pii",))
    assert stratum_of(both, reasked={both.id}) == "thumbs-down"
    assert stratum_of(conv(2, escalated=True, flags=("pii",)), {"c0002"}) == "escalated"
    assert stratum_of(conv(3, flags=("pii",)), {"c0003"}) == "re-asked"
    assert stratum_of(conv(4, flags=("unfaithful",), thumbs=1), set()) == "flagged"
    assert stratum_of(conv(5, flags=("abstained",)), set()) == "random"  # informational
    assert stratum_of(conv(6, escalated=False, thumbs=1), set()) == "random"


@pytest.mark.parametrize(
    ("n", "available", "expected"),
    [
        # plenty everywhere: n/5 each, the remainder to the random slice
        (12, dict.fromkeys(("thumbs-down", "escalated", "re-asked", "flagged", "random"), 100),
         {"thumbs-down": 2, "escalated": 2, "re-asked": 2, "flagged": 2, "random": 4}),
        # a short stratum leaves its places to the random slice
        (10, {"thumbs-down": 1, "escalated": 5, "re-asked": 0, "flagged": 5, "random": 100},
         {"thumbs-down": 1, "escalated": 2, "re-asked": 0, "flagged": 2, "random": 5}),
        # the random slice short too: the rest go to the signal strata in order
        (10, {"thumbs-down": 9, "escalated": 9, "re-asked": 0, "flagged": 0, "random": 1},
         {"thumbs-down": 7, "escalated": 2, "re-asked": 0, "flagged": 0, "random": 1}),
        # fewer conversations than asked: all of them
        (10, {"thumbs-down": 1, "escalated": 0, "re-asked": 0, "flagged": 2, "random": 3},
         {"thumbs-down": 1, "escalated": 0, "re-asked": 0, "flagged": 2, "random": 3}),
        # n below 5: no signal stratum has a share of its own, the random slice takes it
        (3, {"thumbs-down": 5, "escalated": 0, "re-asked": 0, "flagged": 0, "random": 5},
         {"thumbs-down": 0, "escalated": 0, "re-asked": 0, "flagged": 0, "random": 3}),
    ],
)  # fmt: skip
def test_shares(n, available, expected):
    assert shares(n, available) == expected


def _log() -> list[Conversation]:
    rows = [conv(i, thumbs=-1) for i in range(30)]
    rows += [conv(100 + i, escalated=True) for i in range(3)]
    rows += [conv(200 + i, flags=("unfaithful",)) for i in range(40)]
    rows += [conv(1000 + i) for i in range(500)]
    return sorted(rows, key=lambda c: (c.at, c.id))


def test_the_draw_fills_each_share_and_is_the_same_for_the_same_seed():
    log = _log()
    sample = draw(log, 20, seed=1, reasked={"c1000", "c1001"})
    strata = Counter(d.stratum for d in sample)
    assert strata == {"thumbs-down": 4, "escalated": 3, "re-asked": 2, "flagged": 4, "random": 7}
    assert len({d.conversation.id for d in sample}) == 20  # none twice
    assert all(d.conversation.thumbs == -1 for d in sample if d.stratum == "thumbs-down")
    same = draw(log, 20, seed=1, reasked={"c1000", "c1001"})
    other = draw(log, 20, seed=2, reasked={"c1000", "c1001"})
    assert [d.conversation.id for d in same] == [d.conversation.id for d in sample]
    assert {d.conversation.id for d in other} != {d.conversation.id for d in sample}
    # within a stratum, oldest first
    random_part = [d.conversation.at for d in sample if d.stratum == "random"]
    assert random_part == sorted(random_part)


def test_the_draw_is_uniform_within_a_stratum():
    """Each of 50 conversations of the random slice, drawn 5 at a time over 2,000 seeds,
    is picked 200 times on average; Algorithm R's bias would show as a trend by position."""
    log = [conv(i) for i in range(50)]
    picks: Counter[str] = Counter()
    for seed in range(2_000):
        picks.update(d.conversation.id for d in draw(log, 5, seed=seed, reasked=set()))
    first, last = (
        sum(picks[f"c{i:04}"] for i in range(10)),
        sum(picks[f"c{i:04}"] for i in range(40, 50)),
    )
    # 2,000 draws x 5 places / 50 = 200 per conversation, 2,000 per ten; sd about 40
    assert 1_800 < first < 2_200 and 1_800 < last < 2_200


def _sample():
    ctx = (Context("sso#1", "sso", 'Admins set it up, "quoted", under Settings > SSO.'),)
    c = Conversation(
        id="c,1", at=1_714_550_400.0, version="v2", question="How, exactly?",
        answer="Line one\nline two", contexts=ctx, thumbs=-1,
    )  # fmt: skip
    return draw([c], 5, seed=0, reasked=set())


def test_the_csv_rows_read_back_with_the_contexts_as_json():
    text = "".join(render(_sample(), ".csv"))
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == list(COLUMNS)
    row = rows[0]
    assert (row["id"], row["stratum"], row["version"], row["date"]) == (
        "c,1", "thumbs-down", "v2", "2024-05-01T08:00:00Z",
    )  # fmt: skip
    assert row["answer"] == "Line one\nline two"
    assert json.loads(row["contexts"]) == [
        {
            "id": "sso#1",
            "source": "sso",
            "text": 'Admins set it up, "quoted", under Settings > SSO.',
        }
    ]
    assert [row[c] for c in ("facts", "sources", "expect", "notes")] == ["", "", "", ""]


def test_the_jsonl_rows_hold_the_contexts_as_a_list():
    lines = "".join(render(_sample(), ".jsonl")).splitlines()
    assert len(lines) == 1
    row = json.loads(lines[0])
    assert list(row) == list(COLUMNS)
    assert row["contexts"][0]["id"] == "sso#1" and row["notes"] == ""


def test_an_empty_sample_is_a_header_only_csv():
    assert "".join(render([], ".csv")) == ",".join(COLUMNS) + "\r\n"


def test_iso_date_is_utc():
    assert iso_date(0.0) == "1970-01-01T00:00:00Z"


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"),
        ("+1 555 0100", "'+1 555 0100"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tTAB", "'\tTAB"),
        ("How do I export? =)", "How do I export? =)"),
        ("Wie lange dauert es?", "Wie lange dauert es?"),
    ],
)
def test_csv_cells_that_open_like_a_formula_are_made_inert(cell: str, written: str) -> None:
    from dataclasses import replace

    sample = draw([replace(conv(1), question=cell, answer=cell)], 1, 0, set())
    rows = list(csv.reader(io.StringIO("".join(render(sample, ".csv")))))
    got = dict(zip(rows[0], rows[1], strict=True))
    assert (got["question"], got["answer"]) == (written, written)
    jsonl = json.loads("".join(render(sample, ".jsonl")))
    assert jsonl["question"] == cell  # JSON Lines is not opened by spreadsheets: unchanged


def test_cells_with_line_breaks_read_back_as_the_cells_written():
    """Issue 29: a bare CR went out unquoted; read back, 3 rows became 6 and a cell opened
    with an unneutralised formula."""
    from dataclasses import replace

    texts = ["before\r=1+2*3", "a\r\nb\nc\rd", "\n=HYPERLINK(1)", "\r@SUM(A1)"]
    convs = [replace(conv(i), question=t, answer=t[::-1]) for i, t in enumerate(texts[:3])]
    convs[2] = replace(convs[2], answer=texts[3])
    written = "".join(render(draw(convs, 3, 0, set()), ".csv"))
    rows = list(csv.reader(io.StringIO(written, newline="")))
    assert len(rows) == 4
    got = {r[0]: dict(zip(rows[0], r, strict=True)) for r in rows[1:]}
    assert got["c0000"]["question"] == "before\r=1+2*3"
    assert got["c0001"]["question"] == "a\r\nb\nc\rd"
    assert got["c0002"]["question"] == "'\n=HYPERLINK(1)"
    assert got["c0002"]["answer"] == "'\r@SUM(A1)"
    for row in rows:
        assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r", "\n")) for cell in row)
