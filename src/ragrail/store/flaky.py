"""Flaky questions across recorded runs: a question whose verdict changed between earlier
runs of an unchanged configuration and system is flaky, though each run answered it once.

"Unchanged" is what the history can vouch for: the same run configuration (every setting
the run records, the system's own included) and the same git commit, with no uncommitted
changes in any of the runs. A project outside git, or a tree with uncommitted changes,
marks nothing: its code may differ from any recorded run's. Only the earlier runs decide:
a question that passed in every earlier run and fails now is a regression, not flaky. What
git cannot see (an HTTP service redeployed, a provider's model updated, an environment
variable) it cannot vouch for either: the mark says where to look, never that a failure
is noise.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from ragrail.records.results import RunResult
from ragrail.store.history import git_commit


def recorded_verdicts(
    path: Path, result: RunResult, project_root: Path | None
) -> dict[str, tuple[int, int]]:
    """Per question, (runs whose verdict passed, runs) over the recorded runs with
    ``result``'s configuration and commit (module docstring); empty when there are none or
    the history cannot be read (it is only a hint: never an error)."""
    if not path.is_file():
        return {}
    commit, dirty = git_commit(project_root) if project_root is not None else (None, False)
    if commit is None or dirty:
        return {}
    try:
        uri = f"{path.resolve().as_uri()}?mode=ro"
        with closing(sqlite3.connect(uri, uri=True, timeout=5)) as db:
            rows = db.execute(
                "SELECT c.case_id, c.answer_pass FROM case_results c"
                " JOIN runs r ON r.id = c.run_id"
                " WHERE r.config = ? AND r.git_commit IS ? AND COALESCE(r.git_dirty, 0) = 0"
                " AND c.answer_pass IS NOT NULL",
                (result.config.model_dump_json(), commit),
            ).fetchall()
    except sqlite3.Error:
        return {}
    counts: dict[str, tuple[int, int]] = {}
    for case_id, passed in rows:
        p, n = counts.get(case_id, (0, 0))
        counts[case_id] = (p + (passed == 1), n + 1)
    return counts


def mark_flaky(result: RunResult, path: Path, project_root: Path | None) -> int:
    """Set ``recorded`` on each question of ``result`` whose verdict changed between the
    earlier recorded runs of its configuration (``CaseResult.flaky``); update the totals'
    count of flaky questions; return how many were marked."""
    counts = recorded_verdicts(path, result, project_root)
    if not counts:
        return 0
    marked = 0
    for case in result.cases:
        passed, runs = counts.get(case.id, (0, 0))
        if 0 < passed < runs:
            case.recorded = [passed, runs]
            marked += 1
    result.totals.n_flaky = sum(1 for c in result.cases if c.flaky)
    return marked
