"""End-to-end: the metrics that point at the cause (the second article's figures)."""

from __future__ import annotations

import json

import pytest


def metrics_rows(out: str) -> dict[str, list[str]]:
    lines = out.splitlines()
    start = next(
        i for i, ln in enumerate(lines) if ln.strip().startswith("question") and "precision" in ln
    )
    rows = {}
    for ln in lines[start + 1 :]:
        if not ln.strip():
            break
        case_id, *values = ln.split()
        rows[case_id] = values
    return rows


def why_line(out: str, case_id: str) -> str:
    lines = out.splitlines()
    start = lines.index("Why they failed:")
    for i, ln in enumerate(lines[start:], start):
        if ln.startswith(f"  {case_id} "):
            more = []
            for nxt in lines[i + 1 :]:
                if (
                    nxt.startswith("    ")
                    and not nxt.strip().startswith(("causes", "vs "))
                    and nxt.strip()
                ):
                    if nxt.startswith("  ") and not nxt.startswith("   "):
                        break
                    more.append(nxt.strip())
                else:
                    break
            return " ".join([ln.strip(), *more])
    raise AssertionError(f"{case_id} not in the failure list:\n{out}")


def test_late_refund_scenarios_match_the_article(cli):
    r = cli("run", "--example", "late-refund")
    assert r.code == 0, r.err
    rows = metrics_rows(r.out)
    # columns: context precision, context recall, MRR, faithfulness, correctness
    pick = {k: (v[0], v[1], v[3], v[4]) for k, v in rows.items()}
    assert pick["right-answer"] == ("0.67", "1.00", "1.00", "1.00")
    assert pick["invented-voucher"] == ("0.67", "1.00", "0.67", "1.00")
    assert pick["noisy-retrieval"][1:] == ("0.50", "0.50", "1.00")
    assert pick["only-ten-percent"][2:] == ("1.00", "0.50")
    assert "invented-voucher  unsupported claim" in r.out
    assert '"capped at ₹150": number 150 not in the context' in " ".join(r.out.split())


def test_late_refund_bundled_baseline_matches_its_own_config(cli):
    # the bundled baseline records what a run records: no spurious "changed:" line
    r = cli("run", "--example", "late-refund", "--no-history")
    assert r.code == 0, r.err
    assert "changed:" not in r.out
    assert "No regressions." in r.out


def test_late_refund_json_carries_every_metric_and_cause(cli, tmp_path):
    out = tmp_path / "r.json"
    cli("run", "--example", "late-refund", "--json", str(out))
    cases = {c["id"]: c for c in json.loads(out.read_text())["cases"]}
    noisy = cases["noisy-retrieval"]
    assert noisy["context_precision"] == pytest.approx(1 / 3)
    assert noisy["retrieval_recall"] == 0.5 and noisy["faithfulness"] == 0.5
    assert noisy["correctness"] == 1.0 and noisy["cause"] == "unsupported claim"
    assert [c["supported"] for c in noisy["claims"]] == [True, False]
    assert noisy["articles"]["precision_at_k"] == pytest.approx(1 / 3)
    assert cases["only-ten-percent"]["cause"] == "answer missed a retrieved fact"
    assert cases["right-answer"]["cause"] is None


def test_kitebase_sentence_split_from_its_fact_at_50_words(cli, tmp_path):
    # "Downgrades apply at the | end of the billing period.": the fact is whole in
    # plans#2, only its sentence is cut (issue 11: not "fact split across chunks")
    r = cli("demo", "--chunk-words", "50", "--json", str(tmp_path / "r.json"))
    assert "fact's sentence split from its context" in why_line(r.out, "downgrade-timing")
    cases = {c["id"]: c for c in json.loads((tmp_path / "r.json").read_text())["cases"]}
    detail = cases["downgrade-timing"]["cause_detail"]
    assert "whole in plans#2" in detail and "part of it in plans#1" in detail
    assert "fact split across chunks" not in r.out


def test_kitebase_fact_split_across_two_chunks_at_25_words(cli, tmp_path):
    # '... click "I can't access | my email"': the fact's own text is cut
    r = cli("demo", "--chunk-words", "25", "--json", str(tmp_path / "r.json"))
    assert "fact split across chunks" in why_line(r.out, "no-recovery-email")
    cases = {c["id"]: c for c in json.loads((tmp_path / "r.json").read_text())["cases"]}
    assert cases["no-recovery-email"]["cause"] == "fact split across chunks"
    assert "account-recovery#1 and account-recovery#2" in cases["no-recovery-email"]["cause_detail"]


def test_kitebase_lost_phone_is_an_answering_failure_at_rank_2(cli):
    r = cli("demo")
    line = why_line(r.out, "lost-phone")
    assert line.startswith("lost-phone")
    assert (
        'answer missed a retrieved fact: "backup codes" was retrieved at rank 2 (two-factor#2)'
        in line
    )
    assert "causes: 2 retrieval miss, 2 answer missed a retrieved fact" in r.out


def test_undefined_values_are_dashes_and_totals_say_how_many_cases(cli):
    r = cli("demo", "--metrics")
    rows = metrics_rows(r.out)
    assert rows["bank-transfer"] == ["-", "-", "-", "-", "-"]  # nothing to retrieve or claim
    assert "n=11" in next(
        ln for ln in r.out.splitlines() if ln.strip().startswith("context precision")
    )
    assert "n=12" in next(ln for ln in r.out.splitlines() if ln.strip().startswith("answers pass"))
    assert "nan" not in r.out.lower()


@pytest.mark.parametrize(
    "args",
    [
        ("demo",),
        ("demo", "--metrics"),
        ("demo", "--chunk-words", "50"),
        ("demo", "--chunk-words", "25"),
        ("run", "--example", "late-refund"),
    ],
)
def test_scorecard_fits_80_columns(cli, args, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")  # the layout follows the terminal's width
    r = cli(*args)
    too_long = [
        ln for ln in r.out.splitlines() if len(ln) > 80 and not ln.startswith("No baseline")
    ]
    assert too_long == []


def test_diff_reports_a_paired_test_beside_the_per_question_lines(cli):
    r = cli("demo", "--chunk-words", "50")
    flat = " ".join(r.out.split())  # the line wraps at the terminal's width
    assert (
        "answer verdicts that flipped: 2 fail -> pass, 2 pass -> fail "
        "(McNemar exact test p=1.00, not significant)"
    ) in flat
    assert r.code == 1  # the per-question diff still decides


def test_a_bound_check_from_the_config_fails_the_answer(cli, tmp_path):
    dest = tmp_path / "lr"
    assert cli("example", "late-refund", str(dest)).code == 0
    outputs = dest / "outputs.jsonl"
    outputs.write_text(
        outputs.read_text().replace(
            "capped at ₹150 [refund-policy#2].", "capped at ₹200 [refund-policy#2]."
        )
    )
    r = cli("run", cwd=dest)
    assert r.code == 1
    assert "refund within the ₹150 cap: 200 is above the maximum 150" in " ".join(r.out.split())
    assert "WORSE:  right-answer: answer now fails" in r.out
