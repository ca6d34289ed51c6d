"""Machine output (``--json PATH|-``) of the commands that read results: plain JSON
objects with stable keys, for scripts and CI steps to read instead of the text."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragrail.diff import Diff
    from ragrail.golden import LintProblem
    from ragrail.store.history import RunRow

STDOUT = "-"  # ``--json -``: the JSON goes to standard output


def to_stdout(path: Path | str | None) -> bool:
    """Whether ``--json`` asks for standard output rather than a file."""
    return path is not None and str(path) == STDOUT


def dumps(data: Any) -> str:
    """Indented, key-sorted JSON, one newline at the end; never NaN (a bug, not output)."""
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def history_json(rows: list[RunRow], path: Path) -> dict[str, Any]:
    """``ragrail history --json``: the recorded runs, oldest first."""
    return {
        "history": str(path),
        "runs": [
            {
                "id": r.id,
                "created_at": r.created_at,
                "name": r.name,
                "git_commit": r.git_commit,
                "git_dirty": r.git_dirty,
                "configuration": r.describe(),
                "config": r.config,
                "totals": r.totals,
                "cost_usd": r.cost_usd,
            }
            for r in rows
        ],
    }


def diff_json(diff: Diff, verdict: int) -> dict[str, Any]:
    """``ragrail diff --json`` (and the diff part of ``run --json -``): every change,
    the questions that errored, and the verdict as the exit code says it."""
    from ragrail.diff.noise import SET_ALPHA, SET_TEST_NAME

    flips = diff.answer_flips
    return {
        "exit_code": verdict,
        "summary": diff.summary(),
        "regressed": diff.regressed,
        "has_errors": diff.has_errors,
        "answers_compared": diff.answers_compared,
        "answers_note": diff.answers_note,
        "config_changes": list(diff.config_changes),
        "changes": [asdict(c) for c in diff.changes],
        "new_cases": list(diff.new_cases),
        "removed_cases": list(diff.removed_cases),
        "edited_cases": list(diff.edited_cases),
        "errored_cases": list(diff.errored_cases),
        "judge_errored_cases": list(diff.judge_errored_cases),
        "answer_flips": None
        if flips is None
        else {**asdict(flips), "test": "McNemar exact", "significant": flips.significant},
        # answers repeated: the set-wide test the verdict used (ragrail.diff.noise)
        "set_test": None
        if diff.set_test is None
        else {
            **asdict(diff.set_test),
            "test": SET_TEST_NAME,
            "alpha": SET_ALPHA,
            "significant": diff.set_test.significant,
        },
        "judge_changes": [
            {**asdict(ch), "significant": ch.significant} for ch in diff.judge_changes
        ],
        "judge_notes": list(diff.judge_notes),
        "graded": {name: {"baseline": a, "run": b} for name, (a, b) in diff.graded.items()},
    }


def lint_json(
    problems: list[LintProblem], n_cases: int, n_documents: int, golden: Path
) -> dict[str, Any]:
    """``ragrail lint --json``: every problem, errors and warnings apart."""
    return {
        "golden": str(golden),
        "cases": n_cases,
        "documents": n_documents,
        "errors": sum(1 for p in problems if not p.warning),
        "warnings": sum(1 for p in problems if p.warning),
        "problems": [
            {
                "where": p.where,
                "case_id": p.case_id,
                "message": p.message,
                "severity": "warning" if p.warning else "error",
            }
            for p in problems
        ],
    }


def cache_json(
    path: Path,
    replies: int | None,
    size: int | None,
    by_model: list[tuple[str, str, int]],
    vectors: tuple[Path, int, int, list[tuple[str, str, int]]] | None = None,
) -> dict[str, Any]:
    """``ragrail cache stats --json``: where the reply cache and the dense retriever's
    embeddings cache are and what they hold."""
    v_path, v_count, v_size, v_by_model = vectors or (path.with_name("embeddings.sqlite"), 0, 0, [])
    return {
        "cache": str(path),
        "exists": replies is not None,
        "replies": replies or 0,
        "bytes": size or 0,
        "by_model": [{"provider": p, "model": m, "replies": n} for p, m, n in by_model],
        "embeddings": {
            "cache": str(v_path),
            "exists": vectors is not None,
            "vectors": v_count,
            "bytes": v_size,
            "by_model": [{"model": m, "kind": k, "vectors": n} for m, k, n in v_by_model],
        },
    }


def validation_json(
    judge: str, validation: Any, stored: dict[str, dict[str, Any]], min_kappa: float
) -> dict[str, Any]:
    """``ragrail judge validate --json``: agreement per criterion, what was stored (and
    whether gates are allowed), and the labelled cases without a verdict."""
    return {
        "judge": judge,
        "min_kappa": min_kappa,
        "criteria": [
            {**_agreement(a), **stored.get(a.criterion, {"stored": None})}
            for a in validation.agreements
        ],
        "left_out": [
            {"case_id": c, "criterion": k, "reason": why} for c, k, why in validation.left_out
        ],
        "judge_errors": [
            {"case_id": c, "criterion": k, "reason": why} for c, k, why in validation.failed
        ],
    }


def _agreement(a: Any) -> dict[str, Any]:
    data = asdict(a)
    data.pop("pairs", None)  # kept in the history (for the PPI correction), not the report
    data["disagreements"] = [
        {"case_id": c, "people": h, "judge": j, "reason": r} for c, h, j, r in a.disagreements
    ]
    return data


def pairwise_json(judge: str, result: Any, usage: Any) -> dict[str, Any]:
    """``ragrail judge pairwise --json``: per-question verdicts (B against A) and counts."""
    return {
        "judge": judge,
        "questions": result.n,
        "b_better": result.wins,
        "ties": result.ties,
        "a_better": result.losses,
        "changed_with_the_order": result.swap_disagreements,
        "swap_rate": result.swap_rate,
        "errors": result.errors,
        "sign_test_p": result.sign_test_p,
        "per_case": [{"case_id": c, "verdict": v} for c, v in result.per_case],
        "errored": [{"case_id": c, "reason": why} for c, why in result.errored],
        "unmatched": list(result.unmatched),
        "judge_usage": usage.model_dump() if usage is not None else None,
    }
