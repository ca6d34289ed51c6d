"""Reading a history's validations for a run's corrected totals (load_validations): the
latest validation per judge and criterion; never a created, nor a failed, run."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

import pytest

from ragrail.store.history import History
from ragrail.store.validations import load_validations


@dataclass
class Agreement:  # the fields History.record_validation reads
    n: int
    pairs: list[tuple[str, float, float]]
    agreement: float | None = None
    kappa: float | None = 0.8
    kappa_ci: tuple[float, float] | None = None
    spearman: float | None = None
    spearman_ci: tuple[float, float] | None = None
    extra: dict = field(default_factory=dict)


def store_two(path) -> None:
    store = History(path)
    try:
        store.record_validation(
            "k", "j", "polite", Agreement(2, [("a", 1.0, 0.0), ("b", 1.0, 1.0)])
        )
        store.record_validation("k", "j", "polite", Agreement(1, [("c", 0.0, 0.0)]))
        store.record_validation("k", "j", "tone", Agreement(1, [("d", 1.0, 1.0)]))
    finally:
        store.close()


def test_the_latest_validation_per_key_and_criterion(tmp_path):
    path = tmp_path / "history.sqlite"
    store_two(path)
    found = load_validations(path, [("k", "polite"), ("k", "tone"), ("other", "polite")])
    assert set(found) == {("k", "polite"), ("k", "tone")}
    assert found["k", "polite"].id == 2 and found["k", "polite"].pairs == [("c", 0.0, 0.0)]
    assert found["k", "tone"].pairs == [("d", 1.0, 1.0)]


def test_no_history_file_is_no_validation_and_creates_nothing(tmp_path):
    path = tmp_path / "state" / "history.sqlite"
    assert load_validations(path, [("k", "polite")]) == {}
    assert not path.exists() and not path.parent.exists()


def test_an_unreadable_history_warns_and_leaves_the_totals_uncorrected(tmp_path):
    path = tmp_path / "history.sqlite"
    store_two(path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 99")  # from a newer ragrail
    db.commit()
    db.close()
    with pytest.warns(UserWarning, match="judged totals are left uncorrected"):
        assert load_validations(path, [("k", "polite")]) == {}


def test_a_hand_edited_pair_that_is_not_a_number_is_skipped(tmp_path):
    path = tmp_path / "history.sqlite"
    store_two(path)
    db = sqlite3.connect(path)
    db.execute("UPDATE judge_validation_pairs SET human = 'yes' WHERE case_id = 'a'")
    db.execute("INSERT INTO judge_validation_pairs VALUES (1, 'e', 1.0, 1.0)")
    db.execute("UPDATE judge_validations SET id = 9 WHERE id = 1")  # now the latest
    db.execute("UPDATE judge_validation_pairs SET validation_id = 9 WHERE validation_id = 1")
    db.commit()
    db.close()
    found = load_validations(path, [("k", "polite")])
    assert found["k", "polite"].pairs == [("b", 1.0, 1.0), ("e", 1.0, 1.0)]
