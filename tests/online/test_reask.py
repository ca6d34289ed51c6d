"""Re-asks: hand-computed Jaccard similarities, windows, users and turns."""

from __future__ import annotations

import pytest

from ragrail.online.reask import jaccard, reasked_ids, token_set
from ragrail.online.record import Conversation, Turn

T0 = 1_700_000_000.0


def conv(cid: str, at: float, question: str, user: str | None = "u1", turns=()) -> Conversation:
    return Conversation(
        id=cid, at=at, version="v1", question=question, answer="", user=user, turns=tuple(turns)
    )


def test_jaccard_by_hand():
    # {how, do, i, reset, my, password} vs {how, to, reset, my, password}:
    # common {how, reset, my, password} = 4, union 7
    a = token_set("How do I reset my password?")
    b = token_set("how to RESET my password")
    assert jaccard(a, b) == 4 / 7
    assert jaccard(frozenset(), frozenset()) == 0.0
    assert jaccard(a, a) == 1.0


def test_cjk_questions_compare_by_bigrams():
    # パスワード -> パス スワ ワー ード ; パスワードを -> adds ドを: 4 common of 5
    a = token_set("パスワード")
    b = token_set("パスワードを")
    assert jaccard(a, b) == 4 / 5


def test_a_paraphrase_by_the_same_user_within_the_window_marks_the_first():
    log = [
        conv("a", T0, "How do I reset my password?"),
        conv("b", T0 + 10 * 60, "how to reset my password"),  # J = 4/7 = 0.571
    ]
    assert reasked_ids(log, window_minutes=30, min_similarity=0.5) == {"a"}
    # the threshold is inclusive and strict above 4/7
    assert reasked_ids(log, 30, 4 / 7) == {"a"}
    assert reasked_ids(log, 30, 0.6) == set()


def test_outside_the_window_or_another_user_is_not_a_reask():
    late = [conv("a", T0, "reset my password"), conv("b", T0 + 31 * 60, "reset my password")]
    assert reasked_ids(late, 30, 0.5) == set()
    edge = [conv("a", T0, "reset my password"), conv("b", T0 + 30 * 60, "reset my password")]
    assert reasked_ids(edge, 30, 0.5) == {"a"}  # exactly at the window's end counts
    other = [conv("a", T0, "reset my password"), conv("b", T0 + 60, "reset my password", "u2")]
    assert reasked_ids(other, 30, 0.5) == set()
    anonymous = [
        conv("a", T0, "reset my password", None),
        conv("b", T0 + 60, "reset my password", None),
    ]
    assert reasked_ids(anonymous, 30, 0.5) == set()


def test_a_different_question_is_not_a_reask():
    log = [conv("a", T0, "reset my password"), conv("b", T0 + 60, "cancel my subscription")]
    # {reset, my, password} vs {cancel, my, subscription}: 1 / 5 = 0.2
    assert reasked_ids(log, 30, 0.5) == set()
    assert reasked_ids(log, 30, 0.2) == {"a"}


def test_a_follow_up_turn_marks_its_own_conversation_even_without_a_user():
    c = conv("a", T0, "reset my password", None, [Turn("how do i reset my password", T0 + 120)])
    # {reset, my, password} vs {how, do, i, reset, my, password}: 3 / 6
    assert reasked_ids([c], 30, 0.5) == {"a"}
    untimed = conv("a", T0, "reset my password", None, [Turn("reset password", None)])
    assert reasked_ids([untimed], 30, 0.5) == {"a"}  # 2 / 3, no time: same chat counts
    late = conv("a", T0, "reset my password", None, [Turn("reset my password", T0 + 3600)])
    assert reasked_ids([late], 30, 0.5) == set()


def test_input_order_does_not_matter_and_only_the_earlier_is_marked():
    log = [
        conv("c", T0 + 1200, "reset my password"),
        conv("a", T0, "reset my password"),
        conv("b", T0 + 600, "reset my password"),
        conv("z", T0 + 600, "unrelated words here"),
    ]
    # a -> b and b -> c are re-asks (each within 30 minutes of the one after it)
    assert reasked_ids(log, 30, 0.5) == {"a", "b"}
    assert reasked_ids(log[::-1], 30, 0.5) == {"a", "b"}
    # a stream (the log database's) is read oldest first, with one window in memory
    stream = sorted(log, key=lambda c: (c.at, c.id))
    assert reasked_ids(iter(stream), 30, 0.5) == {"a", "b"}
    with pytest.raises(ValueError, match="oldest first"):
        reasked_ids(iter(log), 30, 0.5)
    # a 15-minute window: a->b (10 min) and b->c (10 min) still count
    assert reasked_ids(log, 15, 0.5) == {"a", "b"}
    assert reasked_ids(log, 5, 0.5) == set()


def test_same_second_ties_break_by_id():
    log = [conv("b", T0, "reset my password"), conv("a", T0, "reset my password")]
    assert reasked_ids(log, 30, 0.5) == {"a"}


def test_many_conversations_stay_fast():
    # one user, 20,000 conversations an hour apart: nothing is within the window, and the
    # scan stops at the first later conversation instead of comparing all pairs
    log = [conv(str(i), T0 + 3600 * i, "reset my password") for i in range(20_000)]
    assert reasked_ids(log, 30, 0.5) == set()
