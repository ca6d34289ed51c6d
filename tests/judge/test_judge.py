"""The LLM judge against a scripted local API (no network), through the real SDKs."""

from __future__ import annotations

import json
import re

import pytest

from ragrail.judge import ClaimsReply, cohen_kappa, model_family, parse_reply
from ragrail.records.results import CaseResult, Trace
from ragrail.scoring.claims import split_claims
from tests.factories import run_result
from tests.fake_llm import FakeLLM, Reply
from tests.helpers import between

KEY = "sk-judge-test-key"


@pytest.fixture(autouse=True)
def env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def claims_judge(req) -> Reply:
    """Scripted claim verdicts: invented vouchers and amounts missing from the excerpts are
    unsupported; everything else is supported."""
    prompt = req.prompt
    answer, context = between(prompt, "answer"), between(prompt, "excerpts")
    claims = []
    for claim in split_claims(answer):
        supported = "voucher" not in claim and not ("₹150" in claim and "₹150" not in context)
        claims.append({"claim": claim, "supported": supported, "chunk": None})
    return Reply(text=json.dumps({"claims": claims}), input_tokens=400, output_tokens=60)


def late_refund(cli, tmp_path, extra: str = ""):
    dest = tmp_path / "lr"
    assert cli("example", "late-refund", str(dest)).code == 0
    if extra:
        cfg = dest / "ragrail.toml"
        cfg.write_text(cfg.read_text() + "\n" + extra)
    return dest


def test_claim_verdicts_give_the_articles_faithfulness(cli, tmp_path):
    dest = late_refund(cli, tmp_path)
    out = tmp_path / "r.json"
    with FakeLLM(claims_judge) as fake:
        r = cli(
            "run", "--judge", "claude", "--judge-base-url", fake.url, "--json", str(out), cwd=dest
        )
        assert r.code == 0, r.out + r.err
        assert len(fake.received) == 4
        assert {c.body["model"] for c in fake.received} == {"claude-opus-5"}
    cases = {c["id"]: c for c in json.loads(out.read_text())["cases"]}
    assert cases["right-answer"]["judge"]["faithfulness"] == 1.0
    assert cases["invented-voucher"]["judge"]["faithfulness"] == pytest.approx(2 / 3)
    assert cases["noisy-retrieval"]["judge"]["faithfulness"] == 0.5
    assert cases["only-ten-percent"]["judge"]["faithfulness"] == 1.0
    assert "Judge: anthropic claude-opus-5" in r.out
    text = " ".join(r.out.split())
    assert 'invented-voucher unsupported "a free dessert voucher"' in text
    assert 'noisy-retrieval unsupported "capped at ₹150"' in text
    # the judge's cost is reported apart from the answers' (precomputed here: no answer calls)
    data = json.loads(out.read_text())
    assert data["judge_usage"]["calls"] == 4 and data["usage"] is None
    assert data["judge_usage"]["cost_usd"] == pytest.approx(4 * (400 * 5 + 60 * 25) / 1e6)
    assert "judge cost        $0.0140 (apart from the answers' cost)" in r.out


def test_a_malformed_reply_is_retried_then_a_judge_error_and_exit_3(cli, tmp_path):
    dest = late_refund(cli, tmp_path)
    out = tmp_path / "r.json"

    def script(req):
        if "capped" not in between(req.prompt, "answer"):  # only-ten-percent
            return Reply(text="Sure! The answer looks faithful to me.")
        return claims_judge(req)

    with FakeLLM(script) as fake:
        r = cli(
            "run", "--judge", "claude", "--judge-base-url", fake.url, "--json", str(out), cwd=dest
        )
        malformed = [c for c in fake.received if "capped" not in between(c.prompt, "answer")]
        assert len(malformed) == 3  # the first try and max_retries = 2 retries
    assert r.code == 3
    assert "JUDGE ERROR faithfulness: unparseable reply: no JSON object in the reply" in " ".join(
        r.out.split()
    )
    raw = out.read_text()
    assert "NaN" not in raw
    data = json.loads(raw)
    assert data["judge_stats"]["judge_faithfulness"]["n"] == 3  # the error is not averaged in
    only = next(c for c in data["cases"] if c["id"] == "only-ten-percent")
    assert only["judge"]["faithfulness"] is None and only["judge"]["errors"]


def test_prompts_are_files_a_project_can_override(cli, tmp_path):
    dest = late_refund(cli, tmp_path, '[judge]\nprompts_dir = "prompts"\n')
    (dest / "prompts").mkdir()
    from ragrail.judge import PROMPTS_DIR

    custom = (
        (PROMPTS_DIR / "claims.txt")
        .read_text()
        .replace("You check whether", "HOUSE RULES v2. You check whether")
    )
    (dest / "prompts" / "claims.txt").write_text(custom)
    with FakeLLM(claims_judge) as fake:
        assert cli("run", "--judge", "claude", "--judge-base-url", fake.url, cwd=dest).code == 0
        assert all(c.prompt.startswith("HOUSE RULES v2.") for c in fake.received)


# ------------------------------------------------------------- rubric, repeats, gates

RUBRIC = """
[judge]
faithfulness = false

[[judge.criteria]]
name = "polite"
description = "The answer is polite and professional."
"""


def rubric_judge(verdict_for):
    def script(req):
        answer = between(req.prompt, "answer")
        verdict = verdict_for(answer)
        if isinstance(verdict, list):
            return [
                Reply(
                    text=json.dumps(
                        {"verdicts": [{"criterion": "polite", "pass": v, "reason": "tone"}]}
                    )
                )
                for v in verdict
            ]
        return Reply(
            text=json.dumps(
                {"verdicts": [{"criterion": "polite", "pass": verdict, "reason": "tone"}]}
            )
        )

    return script


def test_a_verdict_that_flips_between_repeats_is_unstable(cli, tmp_path):
    dest = late_refund(cli, tmp_path, RUBRIC)
    out = tmp_path / "r.json"

    def verdict(answer):
        return [True, False, True] if "voucher" in answer else True

    with FakeLLM(rubric_judge(verdict)) as fake:
        r = cli(
            "run",
            "--judge",
            "claude",
            "--judge-base-url",
            fake.url,
            "--judge-repeats",
            "3",
            "--json",
            str(out),
            cwd=dest,
        )
        assert len(fake.received) == 12
    assert r.code == 0, r.err
    cases = {c["id"]: c for c in json.loads(out.read_text())["cases"]}
    polite = cases["invented-voucher"]["judge"]["criteria"][0]
    # the three concurrent repeats may get the scripted replies in any order
    assert sorted(polite["verdicts"]) == [0.0, 1.0, 1.0]
    assert polite["stable"] is False and polite["passed"] is True  # the majority
    assert cases["right-answer"]["judge"]["criteria"][0]["stable"] is True
    line = next(ln for ln in r.out.splitlines() if "polite unstable (" in ln)
    assert line.strip().startswith("invented-voucher")
    shown = line.split("polite unstable (")[1].split(")")[0].split(", ")
    assert sorted(shown) == ["fail", "pass", "pass"]


def forty_case_run(path):
    cases = []
    for i in range(40):
        cases.append(
            CaseResult(
                id=f"case-{i:02d}",
                question=f"Question number {i}?",
                sources=["doc"],
                facts=["x"],
                trace=Trace(case_id=f"case-{i:02d}", answer=f"Answer number {i}."),
                answer_runs=1,
                answer_passes=1,
                answer_pass=True,
            )
        )
    run = run_result(
        cases,
        name="labelled",
        chunking="precomputed",
        min_score=0.0,
        retriever="x",
        answerer="outputs",
        answerer_label="outputs",
        n_chunks=0,
    )
    run.save(path)


def test_validate_agreement_kappa_and_the_gate(cli, tmp_path):
    dest = late_refund(
        cli,
        tmp_path,
        RUBRIC.replace(
            'description = "The answer is polite and professional."',
            'description = "The answer is polite and professional."\ngate = true',
        ),
    )
    forty_case_run(tmp_path / "labelled.json")
    human = {i: i < 24 for i in range(40)}  # 24 pass, 16 fail
    flipped = {1, 2, 3, 30, 31, 32}  # the scripted judge disagrees on 6
    (tmp_path / "labels.csv").write_text(
        "case_id,criterion,verdict\n"
        + "".join(f"case-{i:02d},polite,{'pass' if human[i] else 'fail'}\n" for i in range(40))
    )

    def verdict(answer):
        m = re.search(r"Answer number (\d+)", answer)
        if m is None:  # the project's own answers, judged after validation
            return True
        i = int(m.group(1))
        return human[i] != (i in flipped)

    with FakeLLM(rubric_judge(verdict)) as fake:
        # a gate on an unvalidated criterion is refused, before any call
        r = cli("run", "--judge", "claude", "--judge-base-url", fake.url, cwd=dest)
        assert r.code == 2 and fake.received == []
        assert "never been validated against human labels" in r.err
        assert "ragrail judge validate --labels FILE" in r.err

        r = cli(
            "judge",
            "validate",
            "--labels",
            str(tmp_path / "labels.csv"),
            "--run",
            str(tmp_path / "labelled.json"),
            "--judge",
            "claude",
            "--judge-base-url",
            fake.url,
            cwd=dest,
        )
        assert r.code == 0, r.err
        assert len(fake.received) == 40

        # by hand: p_o = 34/40; both raters pass 24/40, so p_e = .6*.6 + .4*.4
        pairs = [(int(human[i]), int(human[i] != (i in flipped))) for i in range(40)]
        po, pe = 34 / 40, 0.6 * 0.6 + 0.4 * 0.4
        kappa = (po - pe) / (1 - pe)
        assert cohen_kappa(pairs) == pytest.approx(kappa)
        assert re.search(r"agreement\s+85%\s+\[\d+%, \d+%\]", r.out)
        assert re.search(rf"Cohen's kappa\s+{kappa:.2f}\s+\[-?\d\.\d\d, \d\.\d\d\]", r.out)
        assert re.search(r"true positive\s+88%\s+\[\d+%, \d+%\].*n=24", r.out)
        assert re.search(r"true negative\s+81%\s+\[\d+%, \d+%\].*n=16", r.out)
        assert re.search(r"people pass\s+21\s+3", r.out) and re.search(
            r"people fail\s+3\s+13", r.out
        )
        assert "disagreements (6)" in r.out and "case-01: people pass, judge fail" in r.out
        assert "gates on 'polite' are allowed" in r.out

        # validated (kappa 0.69 >= 0.6): the gate runs now
        r = cli("run", "--judge", "claude", "--judge-base-url", fake.url, cwd=dest)
        assert r.code in (0, 1), r.err


def test_gate_with_trust_unvalidated_fails_impolite_answers(cli, tmp_path):
    dest = late_refund(
        cli,
        tmp_path,
        RUBRIC.replace(
            'description = "The answer is polite and professional."',
            'description = "The answer is polite and professional."\ngate = true',
        ),
    )
    with FakeLLM(rubric_judge(lambda answer: "voucher" not in answer)) as fake:
        r = cli(
            "run",
            "--judge",
            "claude",
            "--judge-base-url",
            fake.url,
            "--trust-unvalidated",
            "--save-baseline",
            "--baseline",
            str(tmp_path / "b.json"),
            cwd=dest,
        )
    assert "judge: polite failed (tone)" in " ".join(r.out.split())  # the table wraps it


def test_same_family_warning(cli, tmp_path):
    with FakeLLM(claims_judge) as fake:
        r = cli(
            "demo",
            "--claude",
            "--base-url",
            fake.url,
            "--judge",
            "claude",
            "--judge-base-url",
            fake.url,
            "--no-history",
            cwd=tmp_path,
        )
    assert "same family as an answering model" in r.err
    assert model_family("claude-opus-5") == model_family("claude-haiku-4") == "claude"
    assert model_family("gpt-5") != model_family("claude-opus-5")


def test_pairwise_counts_only_verdicts_that_survive_the_swap(cli, tmp_path):
    dest = late_refund(cli, tmp_path)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert cli("run", "--json", str(a), "--no-history", cwd=dest).code == 0
    outputs = dest / "outputs.jsonl"
    outputs.write_text(
        outputs.read_text().replace(
            "Late orders get a 10% refund [refund-policy#1].",
            "Late orders get a 10% refund [refund-policy#1], capped at ₹150 [refund-policy#2].",
        )
    )
    cli("run", "--json", str(b), "--no-history", cwd=dest)

    def script(req):
        one, two = between(req.prompt, "answer_1"), between(req.prompt, "answer_2")
        if "voucher" in one or "voucher" in two:
            better = "1"  # position bias: always the first shown
        elif one == two:
            better = "tie"
        else:
            better = "1" if "₹150" in one else "2"
        return Reply(text=json.dumps({"better": better, "reason": "scripted"}))

    with FakeLLM(script) as fake:
        r = cli(
            "judge",
            "pairwise",
            str(a),
            str(b),
            "--judge",
            "claude",
            "--judge-base-url",
            fake.url,
            cwd=dest,
        )
        assert len(fake.received) == 8  # 4 questions, both orders
    assert r.code == 0, r.err
    assert "B better 1, ties 2, A better 0; changed with the order 1 (25%)" in r.out
    assert "invented-voucher        changed with the order (A / B)" in r.out
    assert "p=1.000" in r.out


def test_parse_reply_tolerates_fences_and_rejects_wrong_shapes():
    assert parse_reply('```json\n{"claims": []}\n```', ClaimsReply).claims == []
    with pytest.raises(ValueError, match="claims"):
        parse_reply('{"claim": []}', ClaimsReply)
    with pytest.raises(ValueError, match="invalid JSON"):
        parse_reply("{claims: [}", ClaimsReply)


# ------------------------------------------------------------- call settings, re-asks


def slow_claims_judge(req) -> Reply:
    reply = claims_judge(req)
    reply.delay = 0.25
    return reply


def test_a_one_slot_server_times_out_without_the_judge_flags(cli, tmp_path):
    dest = late_refund(cli, tmp_path)
    with FakeLLM(slow_claims_judge, slots=1) as fake:
        r = cli(
            "run",
            "--judge",
            "claude",
            "--judge-base-url",
            fake.url,
            "--judge-timeout",
            "0.4",
            "--judge-max-retries",
            "0",
            cwd=dest,
        )
        assert fake.peak > 1  # [judge] concurrency 8: all at once, the rest wait for the slot
    assert r.code == 3
    assert "timed out after 0.4 s (after 1 attempt)" in " ".join(r.out.split())


@pytest.mark.parametrize(
    "flags",
    [
        ["--judge-concurrency", "1", "--judge-timeout", "1"],
        ["--concurrency", "1", "--timeout", "1"],  # the run's own flags reach the judge
    ],
    ids=["judge-flags", "run-flags"],
)
def test_judge_call_flags_reach_the_judge(cli, tmp_path, flags):
    dest = late_refund(cli, tmp_path)
    with FakeLLM(slow_claims_judge, slots=1) as fake:
        r = cli("run", "--judge", "claude", "--judge-base-url", fake.url, *flags, cwd=dest)
        assert fake.peak == 1 and fake.count == 4  # one at a time, none timed out or retried
    assert r.code == 0, r.out + r.err


def test_the_configs_judge_settings_beat_the_runs_flags(cli, tmp_path):
    dest = late_refund(cli, tmp_path, "[judge]\nconcurrency = 1\n")
    with FakeLLM(slow_claims_judge, slots=1) as fake:
        r = cli(
            "run", "--judge", "claude", "--judge-base-url", fake.url, "--concurrency", "8", cwd=dest
        )
        assert fake.peak == 1
    assert r.code == 0, r.out + r.err


def test_judge_flags_without_a_judge_are_a_usage_error(cli, tmp_path):
    dest = late_refund(cli, tmp_path)
    r = cli("run", "--judge-timeout", "5", cwd=dest)
    assert r.code == 2 and "--judge-timeout need --judge" in r.err


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_a_malformed_reply_is_reasked_with_the_parse_error(cli, tmp_path, api):
    dest = late_refund(cli, tmp_path)
    out = tmp_path / "r.json"

    def script(req):
        if req.followup is None and "capped" not in between(req.prompt, "answer"):
            return Reply(text="Sure! The answer looks faithful to me.")
        return claims_judge(req)

    with FakeLLM(script) as fake:
        url = fake.url if api == "anthropic" else fake.openai_url
        judge = ["--judge", "claude"] if api == "anthropic" else ["--judge", "openai"]
        if api == "openai":
            judge += ["--judge-model", "judge-llama"]
        r = cli("run", *judge, "--judge-base-url", url, "--json", str(out), cwd=dest)
        assert fake.count == 5  # four asks, one re-ask
        reask = next(c for c in fake.received if c.followup is not None)
        first = next(c for c in fake.received if c.followup is None and c.prompt == reask.prompt)
    assert r.code == 0, r.out + r.err
    # not the identical prompt again: the parse error is in a follow-up message
    assert reask.body["messages"] != first.body["messages"]
    assert reask.body["messages"][1] == {
        "role": "assistant",
        "content": "Sure! The answer looks faithful to me.",
    }
    assert "no JSON object in the reply" in reask.followup
    if api == "openai":  # structured output where the server has it
        assert reask.body["response_format"] == {"type": "json_object"}
    else:
        assert "response_format" not in reask.body
    only = next(c for c in json.loads(out.read_text())["cases"] if c["id"] == "only-ten-percent")
    assert only["judge"]["faithfulness"] == 1.0 and only["judge"]["errors"] == []
    if api == "openai":  # an unpriced judge's cost is unknown, never $0
        assert "judge cost        unknown (no price for this model" in r.out


# ------------------------------------------------------------- validate and pairwise with failures


def test_validate_exits_3_on_judge_failures_and_reports_the_rest(cli, tmp_path):
    dest = late_refund(
        cli,
        tmp_path,
        RUBRIC.replace(
            'description = "The answer is polite and professional."',
            'description = "The answer is polite and professional."\ngate = true',
        ),
    )
    forty_case_run(tmp_path / "labelled.json")
    human = {i: i < 24 for i in range(40)}
    (tmp_path / "labels.csv").write_text(
        "case_id,criterion,verdict\n"
        + "".join(f"case-{i:02d},polite,{'pass' if human[i] else 'fail'}\n" for i in range(40))
    )
    broken = {0, 1, 30, 31}  # the judge's calls fail for these

    def script(req):
        m = re.search(r"Answer number (\d+)", between(req.prompt, "answer"))
        i = int(m.group(1)) if m else -1
        if i in broken:
            return Reply(status=500)
        return rubric_judge(lambda answer: human.get(i, True))(req)

    with FakeLLM(script) as fake:
        r = cli(
            "judge",
            "validate",
            "--labels",
            str(tmp_path / "labels.csv"),
            "--run",
            str(tmp_path / "labelled.json"),
            "--judge",
            "claude",
            "--judge-base-url",
            fake.url,
            "--judge-max-retries",
            "0",
            cwd=dest,
        )
        assert fake.count == 40  # no retries: --judge-max-retries reached the judge
    assert r.code == 3
    text = " ".join(r.out.split())
    # agreement over the 36 the judge managed, which all agree: not 36/40
    assert "vs 36 human labels: criterion 'polite' (pass_fail)" in text
    assert "left out 4 labelled case(s) with no verdict" in text
    assert re.search(r"agreement\s+100%", r.out)
    assert re.search(r"people pass\s+22\s+0", r.out) and re.search(r"people fail\s+0\s+14", r.out)
    for i in sorted(broken):
        assert (
            f"JUDGE ERROR case-{i:02d} (polite): rubric: HTTP 500 api_error (after 1 attempt)"
            in text
        )
    assert "stored as validation" not in r.out
    assert "failed on 4 labelled case(s)" in r.err and r.err.rstrip().endswith("exit 3")
    # nothing was stored: the gate is still refused
    with FakeLLM(claims_judge) as fake:
        r = cli("run", "--judge", "claude", "--judge-base-url", fake.url, cwd=dest)
    assert r.code == 2 and "never been validated" in r.err


def test_validate_leaves_a_case_with_no_claim_out_of_the_agreement(cli, tmp_path):
    dest = late_refund(cli, tmp_path)
    forty_case_run(tmp_path / "labelled.json")
    (tmp_path / "labels.jsonl").write_text(
        "".join(
            json.dumps({"case_id": f"case-{i:02d}", "criterion": "faithfulness", "verdict": "pass"})
            + "\n"
            for i in range(10)
        )
    )

    def script(req):
        answer = between(req.prompt, "answer")
        if answer in ("Answer number 0.", "Answer number 1."):
            return Reply(text='{"claims": []}')  # the judge found nothing to check
        claims = [{"claim": answer, "supported": True, "chunk": None}]
        return Reply(text=json.dumps({"claims": claims}))

    with FakeLLM(script) as fake:
        r = cli(
            "judge",
            "validate",
            "--labels",
            str(tmp_path / "labels.jsonl"),
            "--run",
            str(tmp_path / "labelled.json"),
            "--judge",
            "claude",
            "--judge-base-url",
            fake.url,
            cwd=dest,
        )
        assert fake.count == 10
    assert r.code == 0, r.err
    text = " ".join(r.out.split())
    # 8 of 8 agree; before, the two unjudged cases counted as judge "fail": 8 of 10
    assert "vs 8 human labels: criterion 'faithfulness'" in text
    assert re.search(r"agreement\s+100%", r.out)
    assert "left out case-00 (faithfulness): the judge found no claim to check" in text
    assert "left out case-01 (faithfulness)" in text
    assert "people pass 8 0" in text


def test_pairwise_lists_questions_that_errored_in_either_run_and_exits_3(cli, tmp_path):
    dest = late_refund(cli, tmp_path)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert cli("run", "--json", str(a), "--no-history", cwd=dest).code == 0
    data = json.loads(a.read_text())
    noisy = next(c for c in data["cases"] if c["id"] == "noisy-retrieval")
    noisy["trace"]["answer"] = None
    noisy["trace"]["error"] = "HTTP 500 api_error (after 3 attempts)"
    b.write_text(json.dumps(data))

    def script(req):
        if "voucher" in between(req.prompt, "answer_1"):
            return Reply(status=503)
        return Reply(text=json.dumps({"better": "tie", "reason": "same"}))

    with FakeLLM(script) as fake:
        r = cli(
            "judge",
            "pairwise",
            str(a),
            str(b),
            "--judge",
            "claude",
            "--judge-base-url",
            fake.url,
            "--judge-max-retries",
            "0",
            cwd=dest,
        )
        # noisy-retrieval is never sent: 3 questions x 2 orders
        assert fake.count == 6
    assert r.code == 3
    text = " ".join(r.out.split())
    assert "noisy-retrieval ERROR run B errored: HTTP 500 api_error (after 3 attempts)" in text
    assert "invented-voucher ERROR judge failed: HTTP 503 api_error (after 1 attempt)" in text
    assert "B better 0, ties 2, A better 0; changed with the order 0 (0%); errors 2" in text
    assert "2 question(s) not compared" in r.err and r.err.rstrip().endswith("exit 3")


def test_pairwise_header_shows_run_names_and_the_judge_model_escaped(cli, tmp_path):
    """The run refs and the judge's model name are user text: an ESC sequence or a line
    break in them is shown, never played on the reader's terminal."""
    dest = late_refund(cli, tmp_path)
    a, b = tmp_path / "a\x1b[2J.json", tmp_path / "b\nWORSE: x.json"
    assert cli("run", "--json", str(a), "--no-history", cwd=dest).code == 0
    assert cli("run", "--json", str(b), "--no-history", cwd=dest).code == 0
    with FakeLLM(lambda req: Reply(text=json.dumps({"better": "tie", "reason": "same"}))) as fake:
        r = cli(
            "judge", "pairwise", str(a), str(b), "--judge", "claude",
            "--judge-model", "claude\x1b[31m-x", "--judge-base-url", fake.url, cwd=dest,
        )
    assert r.code == 0, r.err
    assert "\x1b" not in r.out
    assert not any(line.startswith("WORSE") for line in r.out.splitlines())
    assert "a\\x1b[2J.json" in r.out and "claude\\x1b[31m-x" in r.out


def test_no_cache_makes_the_judge_call_again_and_store_nothing(cli, tmp_path):
    """--no-cache is for the models, judge included: a second run with it calls the judge
    again, and its replies are not written to the reply cache."""
    dest = late_refund(cli, tmp_path)
    cache = dest / ".ragrail" / "cache.sqlite"
    judge = ("--judge", "claude")
    with FakeLLM(claims_judge) as fake:
        first = cli("run", *judge, "--judge-base-url", fake.url, "--no-cache", cwd=dest)
        assert first.code == 0, first.err
        again = cli("run", *judge, "--judge-base-url", fake.url, "--no-cache", cwd=dest)
        assert again.code == 0, again.err
        assert len(fake.received) == 8  # 4 judge calls, twice: nothing came from a cache
        cached = cli("run", *judge, "--judge-base-url", fake.url, cwd=dest)
        cached_again = cli("run", *judge, "--judge-base-url", fake.url, cwd=dest)
        assert cached.code == cached_again.code == 0
        assert len(fake.received) == 12  # the cached runs: 4 calls, then none
    assert cache.is_file()
