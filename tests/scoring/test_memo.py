"""The per-run scoring cache: bounded by keys and by characters, oldest forgotten first."""

from __future__ import annotations

import copy
import pickle

from ragrail.scoring.memo import BoundedMemo, ScoringCache


def test_a_full_memo_forgets_its_oldest_quarter():
    memo = BoundedMemo(max_entries=8)
    for i in range(8):
        memo.put(i, str(i))
    memo.put(8, "8")  # full: 0 and 1 (the oldest quarter) go, then 8 comes in
    assert list(memo) == [2, 3, 4, 5, 6, 7, 8]
    for i in range(9, 100):
        memo.put(i, str(i))
        assert len(memo) <= 8
    assert memo[99] == "99" and 0 not in memo


def test_text_keys_are_bounded_by_their_characters():
    memo = BoundedMemo(max_entries=1_000, max_chars=100)
    for i in range(50):
        memo.put(f"{i:02d}" + "x" * 18, i)  # 20 characters each
        assert memo.chars <= 100
        assert memo.chars == sum(len(k) for k in memo)
    assert len(memo) <= 5
    assert f"{49:02d}" + "x" * 18 in memo  # the newest stays


def test_putting_a_key_again_does_not_count_it_twice():
    memo = BoundedMemo(max_chars=10)
    for _ in range(5):
        assert memo.put("abcd", 1) == 1
    assert memo.chars == 4 and len(memo) == 1


def test_one_key_larger_than_the_budget_is_still_kept_alone():
    memo = BoundedMemo(max_chars=5)
    memo.put("ab", 1)
    memo.put("a" * 20, 2)
    assert list(memo) == ["a" * 20]


def test_memoised_calls_a_function_once_per_distinct_text():
    calls: list[str] = []

    def shout(text: str) -> str:
        calls.append(text)
        return text.upper()

    cache = ScoringCache()
    loud = cache.memoised(shout)
    assert cache.memoised(shout) is loud  # one wrapper, one table per function
    assert [loud(t) for t in ["a", "b", "a", "a", "b"]] == ["A", "B", "A", "A", "B"]
    assert calls == ["a", "b"]
    assert len(cache) == 2
    cache.clear()
    assert len(cache) == 0


def test_tables_are_separate_and_share_the_bounds():
    cache = ScoringCache(max_entries=4, max_chars=50)
    terms, claims = cache.table(("terms", "en")), cache.table(("claims", "en"))
    assert cache.table(("terms", "en")) is terms and terms is not claims
    assert (terms.max_entries, terms.max_chars) == (4, 50)
    terms.put("x", 1)
    assert "x" not in claims


def test_a_copied_or_pickled_cache_starts_empty():
    cache = ScoringCache(max_entries=10, max_chars=99)
    cache.memoised(str.upper)("a")
    cache.table("t").put("k", 1)
    for other in (copy.deepcopy(cache), pickle.loads(pickle.dumps(cache))):
        assert len(other) == 0
        assert (other.max_entries, other.max_chars) == (10, 99)
