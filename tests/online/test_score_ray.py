"""``ragrail logs score --backend ray``: the same stored flags and printed counts as the
local backend, and the refusals that need no Ray.

The equality test uses the Ray head of tests/backends/test_backend_ray.py (127.0.0.1, two CPUs,
started for this module and stopped after; skipped without Ray unless
``RAGRAIL_REQUIRE_RAY=1``).
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from ragrail.backends.work import LogJob, log_flags_piece
from ragrail.online.record import Context, Conversation
from ragrail.online.score import JUDGE_UNFAITHFUL
from ragrail.online.store import LogStore
from ragrail.scoring.case import ScoringOptions
from tests.backends.test_backend_ray import (  # noqa: F401  (ray_head: the module's Ray head)
    _ragrail,
    hide_ray,
    ray_head,
    run_without_importing_ray,
)
from tests.online.test_score import counted_term_sets

N = 3000
REFUNDS = Context(
    "refunds#1", "refunds",
    "Refunds are issued within 30 days of purchase. Refunds are capped at ₹150 or ₹500.",
)  # fmt: skip
GOOD = "Refunds are issued within 30 days of purchase [refunds#1]."
# by i % 10: which flags conversation i earns (6-9 are fine answers)
ANSWERS = {
    0: GOOD,
    1: "Refunds are issued within 90 days of purchase [refunds#1].",  # unfaithful
    2: "Refunds are issued within 30 days of purchase [sso#2].",  # bad-citation
    3: "I don't know. Ask the billing team.",  # abstained
    4: GOOD + " Write to anna@example.com.",  # pii, and the added claim is unfaithful
    5: "Refunds are issued within 30 days of purchase, up to ₹500 [refunds#1].",  # check:cap
}
CHECK = '\n[[checks]]\ntype = "number"\nname = "cap"\npattern = \'₹(\\d+)\'\nmax = 150\n'


def _log() -> list[Conversation]:
    rows = []
    for i in range(N):
        stale: tuple[str, ...] = ("pii",) if i % 20 == 0 else ()  # replaced by scoring
        if i == 5:
            stale = (JUDGE_UNFAITHFUL,)  # kept: only --judge-sample sets or clears it
        row = Conversation(
            id=f"c{i:05}", at=1_714_550_400.0 + i, version="v1" if i < 2000 else "v2",
            question=f"Question {i}?", answer=ANSWERS.get(i % 10, GOOD),
            contexts=(REFUNDS,), flags=stale,
        )  # fmt: skip
        rows.append(row)
    return rows


@pytest.fixture
def project(cli, tmp_path: Path) -> Path:
    """The Kitebase example with a [[checks]] entry and a log of N conversations."""
    dest = tmp_path / "kb"
    assert cli("example", "kitebase", str(dest)).code == 0
    toml = dest / "ragrail.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + CHECK, encoding="utf-8")
    with LogStore(dest / ".ragrail" / "logs.sqlite") as store:
        store.add(_log())
    return dest


def _flags(db: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT id, flags FROM conversations ORDER BY id").fetchall()


def test_logs_score_on_ray_equals_local(ray_head: str, project: Path) -> None:  # noqa: F811
    local_db, ray_db = project / "local.sqlite", project / "ray.sqlite"
    shutil.copyfile(project / ".ragrail" / "logs.sqlite", local_db)
    shutil.copyfile(project / ".ragrail" / "logs.sqlite", ray_db)
    before = _flags(ray_db)
    local = _ragrail("logs", "score", "--db", str(local_db), cwd=project)
    ray = _ragrail("logs", "score", "--db", str(ray_db), "--backend", "ray",
                   "--address", ray_head, cwd=project)  # fmt: skip
    assert local.returncode == ray.returncode == 0, ray.stderr
    assert ray.stdout == local.stdout
    assert _flags(ray_db) == _flags(local_db) != before
    # hand-counted from ANSWERS: classes 1, 2, 4, 5 are risky (300 each); 1-5 change,
    # and the stale "pii" of 150 fine ones (i % 20 == 0) goes
    assert "3,000 conversation(s) scored, 1,200 flagged; flags of 1,650 changed" in ray.stdout
    table = [line.split() for line in ray.stdout.splitlines()]
    flags = ["abstained", "bad-citation", "check:cap", JUDGE_UNFAITHFUL, "pii", "unfaithful"]
    assert ["version", "conversations", *flags] in table
    assert ["v1", "2,000", "200", "(10%)", "200", "(10%)", "200", "(10%)",
            "1", "(0%)", "200", "(10%)", "400", "(20%)"] in table  # fmt: skip
    stored = dict(_flags(ray_db))
    assert stored["c00004"] == "unfaithful,pii"
    assert stored["c00005"] == f"check:cap,{JUDGE_UNFAITHFUL}"
    assert stored["c00020"] == ""


# ---------------------------------------------------------------- without Ray


def test_a_worker_flags_its_batches_of_one_scoring_through_one_cache(monkeypatch) -> None:
    seen = counted_term_sets(monkeypatch)
    log = _log()[:20]
    job = LogJob(ScoringOptions(), "scoring-1")
    first, second = log_flags_piece(job, log[:10]), log_flags_piece(job, log[10:])
    assert first[1] == second[1] == ("unfaithful",) and first[3] == ("abstained",)
    assert seen.count(REFUNDS.text) == 1  # the second batch reused the first's terms
    log_flags_piece(LogJob(ScoringOptions(), "scoring-2"), log[:2])
    assert seen.count(REFUNDS.text) == 2  # a new scoring starts with a new cache


def test_logs_score_backend_ray_without_ray_is_exit_2(cli, project, monkeypatch) -> None:
    hide_ray(monkeypatch)
    db = project / ".ragrail" / "logs.sqlite"
    before = db.read_bytes()
    r = cli("logs", "score", "--backend", "ray", cwd=project)
    assert r.code == 2
    assert r.err.strip().splitlines() == [
        "ragrail: error: --backend ray needs Ray, which is not installed: pip install 'ragrail[ray]'"
    ]
    # [run] backend = "ray" is read too; --backend local wins over it
    toml = project / "ragrail.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + '\n[run]\nbackend = "ray"\n', "utf-8")
    assert cli("logs", "score", cwd=project).code == 2
    assert db.read_bytes() == before  # nothing scored, nothing written
    r = cli("logs", "score", "--backend", "local", cwd=project)
    assert r.code == 0 and "1,200 flagged" in r.out


def test_logs_score_address_without_the_ray_backend_is_exit_2(cli, project) -> None:
    db = project / ".ragrail" / "logs.sqlite"
    before = db.read_bytes()
    r = cli("logs", "score", "--address", "127.0.0.1:6379", cwd=project)
    assert r.code == 2 and "--address" in r.err and "--backend ray" in r.err
    assert db.read_bytes() == before


def test_a_local_logs_score_never_imports_ray(project: Path) -> None:
    proc = run_without_importing_ray(project, ["logs", "score"])
    assert "1,200 flagged" in proc.stdout
