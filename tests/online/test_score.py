"""Label-free scoring of logged conversations: each flag on hand-built answers, the counts
per version, the flags written back, and the judge on a sample (through the fake server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragrail.online.record import Context, Conversation
from ragrail.online.score import (
    JUDGE_UNFAITHFUL,
    flags_for,
    judge_sample,
    score_logs,
)
from ragrail.online.store import LogStore
from ragrail.scoring.case import ScoringOptions
from ragrail.scoring.checks import NumberBound, PythonCheck
from ragrail.scoring.claims import split_claims
from tests.fake_llm import FakeLLM, Reply
from tests.helpers import between

REFUNDS = Context("refunds#1", "refunds", "Refunds are issued within 30 days of purchase.")
SSO = Context("sso#2", "sso", "Single sign-on is configured by an admin under Settings > SSO.")


def conv(cid: str, answer: str, contexts=(REFUNDS,), version: str = "v1", **kw) -> Conversation:
    return Conversation(
        id=cid, at=1_700_000_000.0 + len(cid), version=version, question="How do refunds work?",
        answer=answer, contexts=tuple(contexts), **kw,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Refunds are issued within 30 days of purchase [refunds#1].", ()),
        # 90 is not in the context: the claim is unsupported
        ("Refunds are issued within 90 days of purchase [refunds#1].", ("unfaithful",)),
        # supported text, but it cites a chunk the app never retrieved for it
        ("Refunds are issued within 30 days of purchase [sso#2].", ("bad-citation",)),
        # an abstention is informational; its words are not checked against the context
        ("I don't know. Ask the billing team about vouchers.", ("abstained",)),
        (
            "Refunds are issued within 30 days. Write to anna@example.com.",
            ("unfaithful", "pii"),
        ),
        ("Refunds are issued within 30 days of purchase [Refunds #1].", ()),  # loose citation
    ],
)
def test_each_flag_on_a_hand_built_answer(answer, expected):
    assert flags_for(conv("c", answer), ScoringOptions()) == expected


def test_without_logged_contexts_neither_faithfulness_nor_citations_are_checked():
    answer = "Refunds take 90 days [refunds#1]. Call +44 20 7946 0958."
    assert flags_for(conv("c", answer, contexts=()), ScoringOptions()) == ("pii",)


def test_the_projects_checks_flag_by_name_and_python_checks_are_left_out():
    cap = NumberBound(type="number", name="refund, cap", pattern=r"₹(\d+)", max=150)
    polite = PythonCheck(type="python", name="polite", function="nosuch.module:polite")
    options = ScoringOptions(checks=(cap, polite))
    ok = "Refunds are issued within 30 days of purchase, up to ₹150 [refunds#1]."
    over = "Refunds are issued within 30 days of purchase, up to ₹500 [refunds#1]."
    ctx = Context("refunds#1", "refunds", REFUNDS.text + " Refunds are capped at ₹150 or ₹500.")
    assert flags_for(conv("a", ok, contexts=[ctx]), options) == ()
    # the comma in the name would split the stored flag list: it is written as ";"
    assert flags_for(conv("b", over, contexts=[ctx]), options) == ("check:refund; cap",)


def _store(tmp_path: Path, conversations: list[Conversation]) -> LogStore:
    store = LogStore(tmp_path / "logs.sqlite")
    store.add(conversations)
    return store


def test_score_logs_counts_per_version_and_writes_the_flags_back(tmp_path):
    good = "Refunds are issued within 30 days of purchase [refunds#1]."
    bad = "Refunds are issued within 90 days of purchase [refunds#1]."
    rows = [conv(f"a{i}", bad if i < 3 else good, version="v1") for i in range(10)]
    rows += [conv(f"b{i}", bad if i < 1 else good, version="v2") for i in range(4)]
    rows.append(conv("b9", "Sorry, I don't know.", version="v2"))
    with _store(tmp_path, rows) as store:
        report = score_logs(store, ScoringOptions(), batch=2)
        assert report.scored == {"v1": 10, "v2": 5}
        assert report.counts["v1"] == {"unfaithful": 3}
        assert report.counts["v2"] == {"unfaithful": 1, "abstained": 1}
        assert report.changed == 5
        assert report.examples["unfaithful"] == ["a0", "a1", "a2", "b0"]
        assert store.get("a2").flags == ("unfaithful",)
        assert store.get("a3").flags == ()
        assert store.get("b9").flags == ("abstained",)
        # nothing changed: nothing written again
        assert score_logs(store, ScoringOptions()).changed == 0
        only = score_logs(store, ScoringOptions(), version="v2")
        assert only.scored == {"v2": 5}


def test_scoring_again_replaces_stale_flags_but_keeps_the_judges(tmp_path):
    answer = "Refunds are issued within 30 days of purchase [refunds#1]."
    old = conv("c1", answer, flags=("unfaithful", "pii", JUDGE_UNFAITHFUL))
    with _store(tmp_path, [old]) as store:
        report = score_logs(store, ScoringOptions())
        assert store.get("c1").flags == (JUDGE_UNFAITHFUL,)
        assert report.counts["v1"] == {JUDGE_UNFAITHFUL: 1}


def counted_term_sets(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text the claim checker tokenises from now on, in order (to count cache misses)."""
    from ragrail.scoring import claims

    seen: list[str] = []
    real = claims._term_set

    def counting(text: str, language: str) -> frozenset[str]:
        seen.append(text)
        return real(text, language)

    monkeypatch.setattr(claims, "_term_set", counting)
    return seen


def test_a_context_logged_many_times_is_tokenised_once(tmp_path, monkeypatch):
    seen = counted_term_sets(monkeypatch)
    answers = [f"Refunds are issued within 30 days, case {i} [refunds#1]." for i in range(50)]
    with _store(tmp_path, [conv(f"x{i}", a) for i, a in enumerate(answers)]) as store:
        report = score_logs(store, ScoringOptions())
    assert report.total == 50
    assert seen.count(REFUNDS.text) == 1
    assert seen.count("Refunds are issued within 30 days") == 1  # a claim 50 answers share


# ------------------------------------------------------------------ the judge on a sample


def voucher_judge(req) -> Reply:
    """Every claim mentioning a voucher is unsupported, every other one supported."""
    answer = between(req.prompt, "answer")
    claims = [
        {"claim": c, "supported": "voucher" not in c, "chunk": None} for c in split_claims(answer)
    ]
    return Reply(text=json.dumps({"claims": claims}), input_tokens=100, output_tokens=20)


def _judge(tmp_path: Path, url: str):
    from ragrail.app import default_project
    from ragrail.judge import JudgeConfig
    from ragrail.settings import build_judge

    cfg = JudgeConfig(provider="anthropic", model="claude-opus-5", base_url=url, max_retries=0)
    return build_judge(default_project(tmp_path), cfg)


def test_the_judge_flags_a_seeded_sample(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    good = "Refunds are issued within 30 days of purchase [refunds#1]."
    rows = [conv(f"g{i:02}", good) for i in range(20)]
    rows += [conv(f"v{i:02}", good + " You also get a voucher.") for i in range(20)]
    rows += [conv(f"n{i:02}", "I don't know.") for i in range(5)]  # never sent: abstains
    rows += [conv(f"e{i:02}", good, contexts=()) for i in range(5)]  # never sent: no context
    with _store(tmp_path, rows) as store, FakeLLM(voucher_judge) as fake:
        report = judge_sample(store, _judge(tmp_path, fake.url), 10, seed=7)
        sent = {between(r.prompt, "answer") for r in fake.received}
        assert len(fake.received) == 10 and "I don't know." not in sent
        flagged = {c.id for c in store.conversations() if JUDGE_UNFAITHFUL in c.flags}
        judged = report.judged
        again = judge_sample(store, _judge(tmp_path, fake.url), 10, seed=7)
    assert judged == 10 and again.judged == 10
    assert flagged and all(cid.startswith("v") for cid in flagged)
    assert report.counts["v1"][JUDGE_UNFAITHFUL] == len(flagged)
    assert again.counts.get("v1", {}).get(JUDGE_UNFAITHFUL, 0) == 0  # the same draw: no change


def test_a_judge_error_leaves_the_flags_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    answer = "Refunds are issued within 30 days of purchase [refunds#1]."
    with _store(tmp_path, [conv("c1", answer, flags=(JUDGE_UNFAITHFUL,))]) as store:
        with FakeLLM(lambda req: Reply(text="not json at all")) as fake:
            report = judge_sample(store, _judge(tmp_path, fake.url), 5, seed=0)
        assert report.judged == 0
        assert store.get("c1").flags == (JUDGE_UNFAITHFUL,)
