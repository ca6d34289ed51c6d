"""Sweep a grid of pipeline settings (chunking x retriever x k) and tabulate the totals,
to choose a configuration by its scores on your own questions."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass

from ragrail.answerers.base import Answerer
from ragrail.corpus import describe_chunking
from ragrail.golden import GoldenSet
from ragrail.pipeline import Pipeline, PipelineSettings
from ragrail.run import evaluate
from ragrail.scoring.case import ScoringOptions

METRICS = ("hit_rate", "recall", "answer_pass_rate", "context_precision", "mrr")


@dataclass(frozen=True)
class SweepRow:
    chunking: str
    chunk_words: int
    retriever: str
    top_k: int
    n_chunks: int
    hit_rate: float | None
    recall: float | None
    answer_pass_rate: float | None
    context_precision: float | None
    mrr: float | None
    prompt_tokens: float | None


def run_sweep(
    name: str,
    golden: GoldenSet,
    base: PipelineSettings,
    chunk_words: Sequence[int],
    top_ks: Sequence[int],
    retrievers: Sequence[str],
    answerer: Answerer,
    options: ScoringOptions | None = None,
) -> list[SweepRow]:
    """Evaluate every combination; each (chunking, retriever) index is built once."""
    rows = []
    for words in chunk_words:
        for retriever in retrievers:
            pipeline = Pipeline(dataclasses.replace(base, chunk_words=words, retriever=retriever))
            for k in top_ks:
                at_k = pipeline.with_settings(top_k=k)
                opts = dataclasses.replace(options or ScoringOptions(), k=k)
                result = evaluate(name, golden, at_k, answerer, options=opts)
                st = result.totals.stats
                rows.append(
                    SweepRow(
                        chunking=describe_chunking(words),
                        chunk_words=words,
                        retriever=retriever,
                        top_k=k,
                        n_chunks=len(pipeline.chunks),
                        hit_rate=st["hit_rate"].value,
                        recall=st["recall"].value,
                        answer_pass_rate=st["answer_pass_rate"].value,
                        context_precision=st["context_precision"].value,
                        mrr=st["mrr"].value,
                        prompt_tokens=result.totals.prompt_tokens_mean,
                    )
                )
    return rank_rows(rows)


def _key(value: float | None) -> float:
    return -1.0 if value is None else value


def rank_rows(rows: list[SweepRow]) -> list[SweepRow]:
    """Best first: by recall, then hit rate, then answer pass rate, then fewer prompt tokens."""
    return sorted(
        rows,
        key=lambda r: (
            -_key(r.recall),
            -_key(r.hit_rate),
            -_key(r.answer_pass_rate),
            r.prompt_tokens or 0.0,
        ),
    )


def best_per_metric(rows: Sequence[SweepRow]) -> dict[str, SweepRow]:
    """For each metric, the first row (in ranked order) with the highest value."""
    out = {}
    for metric in METRICS:
        candidates = [r for r in rows if getattr(r, metric) is not None]
        if candidates:
            out[metric] = max(candidates, key=lambda r: getattr(r, metric))
    return out


def to_json(rows: Sequence[SweepRow]) -> str:
    return json.dumps([dataclasses.asdict(r) for r in rows], indent=2) + "\n"


def to_csv(rows: Sequence[SweepRow]) -> str:
    buf = io.StringIO()
    fields = [f.name for f in dataclasses.fields(SweepRow)]
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow(dataclasses.asdict(r))
    return buf.getvalue()
