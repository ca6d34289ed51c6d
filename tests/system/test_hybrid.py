"""Hybrid search (BM25 and dense by reciprocal rank fusion) and the dense rerank, traced as
stages. The fusion and the staging are checked by hand with stand-in lists; the tests marked
with the real model load all-MiniLM-L6-v2 and skip without the semantic extra (unless
RAGRAIL_REQUIRE_SEMANTIC=1)."""

from __future__ import annotations

import json
import os

import pytest

from ragrail.system.hybrid import RRF_K, HybridRetriever, search_in_stages, split_name
from ragrail.system.retrieval import Hit, Retriever, min_score_problem


def hits(*indices: int) -> list[Hit]:
    return [Hit(index=i, rank=r, score=1.0) for r, i in enumerate(indices, start=1)]


def test_fusion_is_the_sum_of_reciprocal_ranks_over_its_maximum():
    row = HybridRetriever.fuse(5, [hits(0, 1, 2), hits(2, 3)])
    top = 2 / (RRF_K + 1)
    by_hand = [
        (1 / 61) / top,  # first in bm25 only: 0.5
        (1 / 62) / top,
        (1 / 63 + 1 / 61) / top,  # third in one, first in the other
        (1 / 62) / top,
        0.0,
    ]
    assert row.tolist() == pytest.approx(by_hand, abs=1e-9)
    assert HybridRetriever.fuse(2, [hits(1), hits(1)]).tolist() == [0.0, 1.0]
    # chunks 1 and 3 tie (second in one list each): the search keeps chunk order
    from ragrail.system.retrieval import top_hits

    assert [h.index for h in top_hits(row, 3, 0.0)] == [2, 0, 1]


def test_min_score_on_hybrids_scale_and_sweep_names():
    assert min_score_problem("hybrid", 0.5) is None
    assert "above the highest score the hybrid retriever gives (1)" in (
        min_score_problem("hybrid", 1.5) or ""
    )
    assert split_name("hybrid+rerank") == ("hybrid", "dense")
    assert split_name("bm25") == ("bm25", "none")


class Listed(Retriever):
    """A retriever that returns fixed lists, for staging by hand."""

    name = "bm25"

    def __init__(self, rows: list[list[int]]) -> None:
        self.rows = rows

    def search(self, questions, top_k, min_score=0.0, batch=256):
        return [hits(*row[:top_k]) for row in self.rows]


class Reversed:
    """A rerank that turns the list around (the dense model's part, by hand)."""

    def rerank(self, questions, rows, top_k):
        return [hits(*[h.index for h in reversed(row)][:top_k]) for row in rows]


def test_a_single_retriever_has_no_stages_and_a_rerank_reads_the_candidates():
    lists = [[4, 3, 2, 1, 0]]
    assert search_in_stages(Listed(lists), None, ["q"], 2, 0.0, 4) == [(hits(4, 3), [])]
    ((final, stages),) = search_in_stages(Listed(lists), Reversed(), ["q"], 2, 0.0, 4)
    assert [name for name, _ in stages] == ["bm25", "rerank"]
    assert stages[0][1] == hits(4, 3, 2, 1)  # candidates deep, not top_k
    assert final == stages[1][1] == hits(1, 2)
    # fewer candidates than k: the first stage still hands on k
    ((final, stages),) = search_in_stages(Listed(lists), Reversed(), ["q"], 3, 0.0, 1)
    assert len(stages[0][1]) == 3 and len(final) == 3


# ------------------------------------------------------------- with the real model


def needs_model() -> None:
    if os.environ.get("RAGRAIL_REQUIRE_SEMANTIC") != "1":
        pytest.importorskip("sentence_transformers")


def staged_run(cli, tmp_path, example: str) -> dict:
    dest = tmp_path / example
    assert cli("example", example, str(dest)).code == 0
    config = dest / "ragrail.toml"
    text = config.read_text().replace(
        "[pipeline]\n", '[pipeline]\nretriever = "hybrid"\nrerank = "dense"\n', 1
    )
    lines = [ln for ln in text.splitlines() if not ln.startswith('retriever = "standin"')]
    config.write_text("\n".join(lines) + "\n")
    out = tmp_path / f"{example}.json"
    r = cli("run", "--json", str(out), cwd=dest)
    assert r.code in (0, 1), r.out + r.err
    return json.loads(out.read_text())


def figures(run: dict) -> dict[str, tuple[float, float, float]]:
    return {
        name: tuple(round(s[k]["value"], 2) for k in ("hit_rate", "recall", "mrr"))
        for name, s in run["totals"]["stages"].items()
    }


def test_hybrid_and_rerank_on_kitebase_as_the_readme_says(cli, tmp_path):
    needs_model()
    run = staged_run(cli, tmp_path, "kitebase")
    assert run["config"]["retriever"] == "hybrid+rerank"
    assert run["config"]["settings"] == {"candidates": 20}
    assert figures(run) == {
        "bm25": (0.91, 0.86, 0.70),
        "dense": (1.0, 1.0, 0.85),
        "hybrid": (1.0, 1.0, 0.77),
        "rerank": (1.0, 0.95, 0.85),
    }
    # the final contexts are the rerank's
    assert round(run["totals"]["recall"], 2) == 0.95
    case = next(c for c in run["cases"] if c["id"] == "secure-account")
    assert case["cause_detail"] == (
        '"authenticator app" retrieved at rank 7 by dense and rank 9 by hybrid, dropped by rerank'
    )


def test_hybrid_and_rerank_on_multilingual_as_the_readme_says(cli, tmp_path):
    needs_model()
    run = staged_run(cli, tmp_path, "multilingual")
    assert figures(run) == {
        "bm25": (1.0, 1.0, 1.0),
        "dense": (1.0, 1.0, 0.83),
        "hybrid": (1.0, 1.0, 0.96),
        "rerank": (0.83, 0.83, 0.79),
    }
    dropped = sorted(
        c["id"] for c in run["cases"] if "dropped by rerank" in (c["cause_detail"] or "")
    )
    assert dropped == ["ja-free-shipping", "ja-refund-money"]


@pytest.mark.parametrize(
    "example, expected",
    [
        (
            "kitebase",
            {
                "bm25": (0.82, 0.77, 0.68),
                "dense": (1.0, 0.95, 0.85),
                "hybrid": (0.91, 0.86, 0.76),
                "hybrid+rerank": (1.0, 0.95, 0.85),
                "bm25+rerank": (0.91, 0.86, 0.80),
            },
        ),
        (
            "multilingual",
            {
                "bm25": (1.0, 1.0, 1.0),
                "dense": (0.83, 0.83, 0.79),
                "hybrid": (1.0, 1.0, 0.96),
                "hybrid+rerank": (0.83, 0.83, 0.79),
                "bm25+rerank": (1.0, 1.0, 0.92),
            },
        ),
    ],
)
def test_the_readmes_sweep_table(cli, tmp_path, example, expected):
    needs_model()
    dest = tmp_path / example
    assert cli("example", example, str(dest)).code == 0
    table = tmp_path / "sweep.json"
    names = ",".join(expected)
    r = cli("sweep", "--top-k", "3", "--retriever", names, "--json", str(table), cwd=dest)
    assert r.code == 0, r.out + r.err
    rows = json.loads(table.read_text())
    got = {
        row["retriever"]: tuple(round(row[k], 2) for k in ("hit_rate", "recall", "mrr"))
        for row in rows
    }
    assert got == expected
