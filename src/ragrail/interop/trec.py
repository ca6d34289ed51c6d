"""A run as TREC run and qrels files, for trec_eval, ir-measures and ranx.

The files are at article level, as ragrail's ranking metrics are: a question's
ranking is the documents of its retrieved chunks, each at its first rank
(``ragrail.scoring.ranking``), and its judgements are its ``sources``: the
grades when the golden set graded them (grade 0 included, judged
non-relevant), else grade 1 each. So with k the run's ``top_k``, trec_eval's
``P.k``, ``recall.k``, ``recip_rank``, ``map`` and ``ndcg_cut.k`` (ir-measures'
``P@k``, ``R@k``, ``RR@k``, ``AP@k``, ``nDCG@k``, ``Success@k``) equal the
``article_*`` values of ragrail's JSON, per question and averaged. (A run
retrieves at most ``top_k`` chunks, so no ranking is longer than k.)

- run: ``QID Q0 DOC RANK SCORE ragrail``; the score is ``n - rank + 1``, so tools
  that sort by score (all of them) keep ragrail's order where retrieval scores
  tie. A question that retrieved nothing gets one line for the placeholder
  document ``ragrail-nothing-retrieved``, never judged: every measure is 0 for
  it, as in ragrail, and averages over the run cover every judged question
  (trec_eval without ``-c`` agrees).
- qrels: ``QID 0 DOC GRADE``.

Only questions with a relevant source are written: one the documents do not
cover has no article metrics in ragrail either. Ids are written as they are,
with white space and ``%`` percent-encoded (``Refund Policy`` is
``Refund%20Policy``), since TREC files are split at white space.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragrail.records.results import CaseResult, RunResult
from ragrail.scoring.ranking import dedupe

NOTHING_RETRIEVED = "ragrail-nothing-retrieved"
TAG = "ragrail"
_UNSAFE = re.compile(r"[\s%]")


def trec_id(text: str) -> str:
    """An id safe in a white-space separated file: white space and ``%`` as ``%XX``."""
    return _UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group(0).encode()), text)


def judged(case: CaseResult) -> dict[str, int]:
    """The case's judgements: its grades, else grade 1 for each source."""
    return dict(case.grades) if case.grades else dict.fromkeys(case.sources, 1)


def scored_cases(result: RunResult) -> list[CaseResult]:
    """The questions with at least one relevant source: the ones ranked against qrels."""
    return [c for c in result.cases if any(g >= 1 for g in judged(c).values())]


def article_ranking(case: CaseResult) -> list[str]:
    """The documents of the retrieved chunks, in rank order, each at its first rank."""
    return dedupe([chunk.source for chunk in case.trace.retrieved])


def run_lines(cases: Sequence[CaseResult], tag: str = TAG) -> list[str]:
    lines = []
    for case in cases:
        qid = trec_id(case.id)
        ranking = article_ranking(case) or [NOTHING_RETRIEVED]
        n = len(ranking)
        for rank, doc in enumerate(ranking, start=1):
            lines.append(f"{qid} Q0 {trec_id(doc)} {rank} {n - rank + 1} {tag}")
    return lines


def qrels_lines(cases: Sequence[CaseResult]) -> list[str]:
    return [
        f"{trec_id(case.id)} 0 {trec_id(doc)} {grade}"
        for case in cases
        for doc, grade in judged(case).items()
    ]


def run_text(result: RunResult, tag: str = TAG) -> str:
    """The TREC run file of a run (see the module docstring)."""
    return "".join(line + "\n" for line in run_lines(scored_cases(result), tag))


def qrels_text(result: RunResult) -> str:
    """The TREC qrels file of a run's labels (see the module docstring)."""
    return "".join(line + "\n" for line in qrels_lines(scored_cases(result)))
