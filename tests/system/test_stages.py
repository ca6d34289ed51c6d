"""Retrieval in stages: a system's ``stages`` read from a python target, an outputs file
and an HTTP reply, scored per stage, and the stage that lost a fact named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragrail.records.case import Case
from ragrail.records.trace import RetrievedChunk, Stage
from ragrail.scoring.stages import score_stages, where_lost
from ragrail.system.adapters.records import parse_output, record_to_trace

DOCS = {
    "pricing": "# Pricing\n\nThe Basic plan costs $8 a month. The Pro plan costs $12 a month.\n",
    "refunds": "# Refunds\n\nRefunds are paid within 14 days to the original card.\n",
    "security": "# Security\n\nPasswords are hashed with Argon2. Sessions expire after 30 minutes.\n",
}
FILLER = [f"Note {i}: the office plants are watered on Mondays." for i in range(1, 30)]

# question id -> (question, facts, sources): the golden set
CASES = {
    "pro-price": ("How much is the Pro plan?", ["$12"], ["pricing"]),
    "refund-time": ("How fast are refunds paid?", ["14 days", "original card"], ["refunds"]),
    "session": ("When do sessions expire?", ["30 minutes", "Argon2"], ["security"]),
    "basic-price": ("How much is Basic?", ["$8"], ["pricing"]),
}

# The target: a first stage (bm25) of 20 candidates and a second (rerank) of 3. Each
# question's candidates: filler notes with the source's text at the rank given (None: not
# retrieved); rerank keeps the ranks listed, in that order.
TARGET = """
import json
from pathlib import Path

def answer(question):
    # read at each call: the tests change the plan between runs of one process
    plan = json.loads((Path(__file__).parent / "plan.json").read_text())[question]
    filler = [{"id": f"notes#{i}", "source": "notes", "text": t}
              for i, t in enumerate(plan["filler"], start=1)]
    first = filler[:20]
    if plan["at"] is not None:
        first.insert(plan["at"] - 1, {"id": plan["source"] + "#1", "source": plan["source"],
                                      "text": plan["text"]})
        first = first[:20]
    second = [first[r - 1] for r in plan["keep"]]
    top = second[0]["text"]
    return {"answer": top, "stages": [{"name": "bm25", "contexts": first},
                                      {"name": "rerank", "contexts": second}]}
"""

# question id -> (rank of the source's chunk in bm25, the bm25 ranks rerank keeps)
PLAN = {
    "pro-price": (17, [1, 2, 3]),  # retrieved at rank 17 by bm25, dropped by rerank
    "refund-time": (2, [2, 1, 3]),  # kept, first
    "session": (None, [1, 2, 3]),  # never retrieved
    "basic-price": (5, [4, 5, 6]),  # kept, second
}


def doc_text(source: str) -> str:
    return DOCS[source].split("\n\n", 1)[1].strip()


def staged_project(tmp_path: Path, cli) -> Path:
    dest = tmp_path / "staged"
    docs = dest / "docs"
    docs.mkdir(parents=True)
    for name, text in DOCS.items():
        (docs / f"{name}.md").write_text(text)
    golden = [
        {"id": cid, "question": q, "facts": facts, "sources": sources}
        for cid, (q, facts, sources) in CASES.items()
    ]
    (dest / "golden.json").write_text(json.dumps(golden))
    plan = {
        q: {
            "filler": FILLER,
            "at": PLAN[cid][0],
            "keep": PLAN[cid][1],
            "source": sources[0],
            "text": doc_text(sources[0]),
        }
        for cid, (q, _, sources) in CASES.items()
    }
    (dest / "plan.json").write_text(json.dumps(plan))
    (dest / "stagedbot.py").write_text(TARGET)
    (dest / "ragrail.toml").write_text(
        'name = "staged"\ndocs = "docs"\ngolden = "golden.json"\n\n'
        '[system]\nkind = "python"\ntarget = "stagedbot:answer"\n'
    )
    return dest


def independent_recall(stage: str) -> dict[str, float]:
    """Each question's recall at a stage, worked out here from the plan alone: a fact
    counts when the source's text holding it is among the stage's contexts."""
    out = {}
    for cid, (_, facts, sources) in CASES.items():
        at, keep = PLAN[cid]
        held = at is not None and at <= 20 and (stage == "bm25" or at in keep)
        text = doc_text(sources[0]).lower()
        out[cid] = sum(1 for f in facts if held and f.lower() in text) / len(facts)
    return out


def test_a_fact_retrieved_by_the_first_stage_and_dropped_by_the_second_is_named(cli, tmp_path):
    dest = staged_project(tmp_path, cli)
    out = tmp_path / "run.json"
    r = cli("run", "--json", str(out), cwd=dest)
    assert r.code == 0, r.out + r.err
    run = json.loads(out.read_text())
    cases = {c["id"]: c for c in run["cases"]}

    pro = cases["pro-price"]
    assert pro["cause"] == "retrieval miss"
    assert pro["cause_detail"] == '"$12" retrieved at rank 17 by bm25, dropped by rerank'
    # never retrieved by any stage: not said to be dropped by one
    assert "dropped" not in (cases["session"]["cause_detail"] or "")

    for stage in ("bm25", "rerank"):
        expected = independent_recall(stage)
        got = {cid: next(s for s in c["stages"] if s["name"] == stage) for cid, c in cases.items()}
        assert {cid: s["recall"] for cid, s in got.items()} == pytest.approx(expected)
        total = run["totals"]["stages"][stage]
        assert total["recall"]["value"] == pytest.approx(sum(expected.values()) / len(expected))
        assert total["recall"]["n"] == len(CASES)
        hits = sum(1 for v in expected.values() if v > 0)
        assert total["hit_rate"]["value"] == pytest.approx(hits / len(CASES))
    # MRR by hand: bm25 ranks 17, 2, -, 5; rerank keeps 2 (first), 5 (second)
    bm25 = run["totals"]["stages"]["bm25"]["mrr"]["value"]
    assert bm25 == pytest.approx((1 / 17 + 1 / 2 + 0 + 1 / 5) / 4)
    rerank = run["totals"]["stages"]["rerank"]["mrr"]["value"]
    assert rerank == pytest.approx((0 + 1 + 0 + 1 / 2) / 4)
    # the final contexts are the last stage's: the run's own recall is rerank's
    assert run["totals"]["recall"] == pytest.approx(sum(independent_recall("rerank").values()) / 4)
    assert "stages" in cases["pro-price"]["trace"]


def test_no_stages_leaves_results_without_them():
    rec = parse_output({"answer": "a", "contexts": [{"id": "x", "text": "t"}]}, "t")
    trace = record_to_trace("c", rec)
    assert trace.stages == [] and "stages" not in trace.model_dump()


def test_contexts_given_beside_stages_are_the_answers():
    ctx = {"id": "a#1", "source": "a", "text": "x"}
    rec = parse_output(
        {"answer": "a", "contexts": [], "stages": [{"name": "s", "contexts": [ctx]}]}, "t"
    )
    trace = record_to_trace("c", rec)
    assert trace.retrieved == [] and len(trace.stages[0].contexts) == 1
    rec = parse_output({"answer": "a", "stages": [{"name": "s", "contexts": [ctx]}]}, "t")
    assert [c.id for c in record_to_trace("c", rec).retrieved] == ["a#1"]


@pytest.mark.parametrize(
    "stages, needle",
    [
        ([{"name": "a"}, {"name": "a"}], "stage 'a' is named twice"),
        ([{"name": ""}], "'stages.0.name'"),
        ([{"name": "a", "contexts": [{"id": "x"}]}], "'stages.0.contexts.0.text'"),
        ("bm25", "'stages'"),
    ],
)
def test_bad_stages_are_exit_2_naming_the_field(cli, tmp_path, stages, needle):
    dest = staged_project(tmp_path, cli)
    (dest / "stagedbot.py").write_text(
        f"def answer(q):\n    return {{'answer': 'x', 'stages': {stages!r}}}\n"
    )
    r = cli("run", cwd=dest)
    assert r.code == 2, r.out + r.err
    assert needle in r.err and "Traceback" not in r.err


def chunk(cid: str, source: str, text: str, rank: int) -> RetrievedChunk:
    return RetrievedChunk(id=cid, source=source, rank=rank, score=0.0, text=text)


def test_stages_side_by_side_each_say_their_rank():
    fact_chunk = chunk("p#1", "pricing", "Pro costs $12.", 1)
    other = chunk("n#1", "notes", "nothing", 1)
    stages = [
        Stage(name="bm25", contexts=[other, fact_chunk.model_copy(update={"rank": 4})]),
        Stage(name="dense", contexts=[other]),
        Stage(name="hybrid", contexts=[other, fact_chunk.model_copy(update={"rank": 2})]),
        Stage(name="rerank", contexts=[other]),
    ]
    assert (
        where_lost("$12", ["pricing"], stages)
        == "retrieved at rank 4 by bm25 and rank 2 by hybrid, dropped by rerank"
    )
    # held by the last stage, missing from the contexts returned
    assert where_lost("$12", ["pricing"], stages[:3]).endswith("not in the contexts returned")
    # in another article only: not retrieved for this question
    assert where_lost("$12", ["billing"], stages) is None
    scores = score_stages(["$12"], ["pricing"], stages)
    assert [(s.name, s.recall, s.reciprocal_rank) for s in scores] == [
        ("bm25", 1.0, 0.5),
        ("dense", 0.0, 0.0),
        ("hybrid", 1.0, 0.5),
        ("rerank", 0.0, 0.0),
    ]
    assert score_stages([], ["pricing"], stages)[0].recall is None


def test_stage_sources_are_read_as_document_names():
    from ragrail.system.adapters.records import named_sources
    from ragrail.text.names import DocumentNames

    ctx = {"id": "docs/pricing.md#1", "source": "docs/pricing.md", "text": "Pro costs $12."}
    rec = parse_output({"answer": "x", "stages": [{"name": "s", "contexts": [ctx]}]}, "t")
    (trace,) = named_sources([record_to_trace("c", rec)], DocumentNames(["pricing"]))
    assert trace.stages[0].contexts[0].source == "pricing"
    assert trace.retrieved[0].source == "pricing"
    case = Case(id="c", question="q", facts=["$12"], sources=["pricing"])
    from ragrail.scoring.case import score_case

    assert score_case(case, trace).stages[0].recall == 1.0


def test_the_diff_shows_each_stage_that_moved_and_fails_only_for_the_final_contexts(cli, tmp_path):
    dest = staged_project(tmp_path, cli)
    before = tmp_path / "before.json"
    assert cli("run", "--json", str(before), cwd=dest).code == 0
    plan = json.loads((dest / "plan.json").read_text())

    # bm25 no longer finds "$12" (rerank had dropped it already): the final contexts are
    # unchanged, so the stage line is information and the run passes
    plan[CASES["pro-price"][0]]["at"] = None
    (dest / "plan.json").write_text(json.dumps(plan))
    r = cli("run", "--baseline", str(before), cwd=dest)
    assert r.code == 0, r.out + r.err
    stage = [ln.strip() for ln in r.out.splitlines() if ln.strip().startswith("stage:")]
    assert stage == ['stage:  pro-price: bm25 recall 100% -> 0% (lost "$12")']
    assert "WORSE" not in r.out

    # basic-price loses its chunk in both stages: the final recall's WORSE line, and the
    # stages beside it say where
    plan[CASES["basic-price"][0]]["at"] = None
    plan[CASES["basic-price"][0]]["keep"] = [1, 2, 3]
    (dest / "plan.json").write_text(json.dumps(plan))
    out = tmp_path / "after.json"
    r = cli("run", "--baseline", str(before), "--json", str(out), cwd=dest)
    assert r.code == 1, r.out + r.err
    lines = [ln.strip() for ln in r.out.splitlines()]
    assert 'stage:  basic-price: bm25 recall 100% -> 0% (lost "$8")' in lines
    assert 'stage:  basic-price: rerank recall 100% -> 0% (lost "$8")' in lines
    worse = [ln for ln in lines if ln.startswith("WORSE")]
    assert worse and all("basic-price" in ln for ln in worse)
    assert lines.index(worse[0]) > max(i for i, ln in enumerate(lines) if ln.startswith("stage:"))


def test_a_run_without_stages_writes_the_same_baseline_as_before(cli, tmp_path):
    """The bundled examples use no stages: their saved baselines do not move."""
    for name in ("kitebase", "late-refund", "multilingual"):
        dest = tmp_path / name
        assert cli("example", name, str(dest)).code == 0
        bundled = (dest / "baseline.json").read_text()
        r = cli("run", "--save-baseline", "--json", str(tmp_path / f"{name}.json"), cwd=dest)
        assert r.code in (0, 1), r.out + r.err
        assert (dest / "baseline.json").read_text() == bundled, name
        assert '"stages"' not in (tmp_path / f"{name}.json").read_text()


def test_an_outputs_file_and_an_http_reply_carry_stages_as_a_python_target_does(cli, tmp_path):
    import importlib.util

    from tests.system.test_own_system import serve

    dest = staged_project(tmp_path, cli)
    reference = tmp_path / "python.json"
    assert cli("run", "--json", str(reference), cwd=dest).code == 0
    spec = importlib.util.spec_from_file_location("stagedbot_here", dest / "stagedbot.py")
    assert spec is not None and spec.loader is not None
    bot = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bot)
    replies = {q: bot.answer(q) for q, _, _ in CASES.values()}

    def per_stage(path: Path) -> dict[str, object]:
        run = json.loads(path.read_text())
        return {
            "cases": {c["id"]: (c["stages"], c["cause_detail"]) for c in run["cases"]},
            "totals": run["totals"]["stages"],
        }

    lines = [json.dumps({"question": q, **reply}) for q, reply in replies.items()]
    (dest / "outputs.jsonl").write_text("\n".join(lines) + "\n")
    config = (dest / "ragrail.toml").read_text()
    (dest / "ragrail.toml").write_text(
        config.replace(
            'kind = "python"\ntarget = "stagedbot:answer"',
            'kind = "outputs"\npath = "outputs.jsonl"',
        )
    )
    outputs = tmp_path / "outputs.json"
    assert cli("run", "--json", str(outputs), cwd=dest).code == 0
    assert per_stage(outputs) == per_stage(reference)

    # an HTTP service with its own field names: the stages' passages are read as its
    # contexts are, and it sends no top-level contexts (the last stage's are the answer's)
    def reply(body: dict) -> dict:
        staged = replies[body["question"]]["stages"]
        return {
            "answer": replies[body["question"]]["answer"],
            "steps": [
                {
                    "name": st["name"],
                    "contexts": [
                        {"doc_id": x["id"], "doc": x["source"], "content": x["text"]}
                        for x in st["contexts"]
                    ],
                }
                for st in staged
            ],
        }

    server = serve(reply)
    try:
        (dest / "ragrail.toml").write_text(
            config.replace(
                'kind = "python"\ntarget = "stagedbot:answer"',
                f'kind = "http"\nurl = "http://127.0.0.1:{server.server_port}/ask"\n'
                'stages_field = "steps"\ncontext_id_field = "doc_id"\n'
                'context_source_field = "doc"\ncontext_text_field = "content"',
            )
        )
        served = tmp_path / "http.json"
        r = cli("run", "--json", str(served), cwd=dest)
        assert r.code == 0, r.out + r.err
        assert per_stage(served) == per_stage(reference)
    finally:
        server.shutdown()


def test_the_committed_baseline_keeps_the_stages_and_the_diff_shows_them(cli, tmp_path):
    dest = staged_project(tmp_path, cli)
    assert cli("run", "--save-baseline", cwd=dest).code == 0
    saved = json.loads((dest / "baseline.json").read_text())
    staged = [c for c in saved["cases"] if "stages" in c["retrieval"]]
    assert staged and [s["name"] for s in staged[0]["retrieval"]["stages"]] == ["bm25", "rerank"]
    plan = json.loads((dest / "plan.json").read_text())
    plan[CASES["pro-price"][0]]["at"] = None
    (dest / "plan.json").write_text(json.dumps(plan))
    r = cli("run", cwd=dest)  # against baseline.json, the compact file
    assert r.code == 0, r.out + r.err
    stage = [ln.strip() for ln in r.out.splitlines() if ln.strip().startswith("stage:")]
    assert stage == ['stage:  pro-price: bm25 recall 100% -> 0% (lost "$12")']
    # a stage the file gives badly is exit 2 naming the field
    saved["cases"][0]["retrieval"]["stages"] = [{"name": "bm25", "recall": 2.0}]
    (dest / "baseline.json").write_text(json.dumps(saved))
    r = cli("run", cwd=dest)
    assert r.code == 2 and "cases.0.retrieval.stages.0.recall" in r.err


def test_the_scorecard_shows_each_stage_s_totals(cli, tmp_path):
    dest = staged_project(tmp_path, cli)
    out = tmp_path / "r.json"
    r = cli("run", "--json", str(out), cwd=dest)
    totals = json.loads(out.read_text())["totals"]["stages"]
    lines = [ln.strip() for ln in r.out.splitlines()]
    for name, stage in totals.items():
        recall = stage["recall"]
        shown = [ln for ln in lines if ln.startswith(f"{name} recall")]
        assert shown and f"{round(recall['value'] * 100)}%" in shown[0] and f"n={recall['n']}" in shown[0]
        assert any(ln.startswith(f"{name} MRR") for ln in lines)
