"""What an evaluation is made of once prepared, and what it produces: handed by the
application layer (:mod:`ragrail.app`) to the local runner and to the backends, which
take these and never reach back into the application layer."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragrail.calls.layer import ProgressFn
    from ragrail.judge import JudgePlan
    from ragrail.project import Project
    from ragrail.records.case import GoldenSet
    from ragrail.records.results import RunResult
    from ragrail.settings import Overrides, ResolvedSettings
    from ragrail.store.baseline import Baseline
    from ragrail.system.answerers import CallPlan

#: ``progress(total_calls, label)``: a context manager yielding the call layer's
#: per-call callback (or None). The CLI passes a progress bar; the default draws nothing.
Progress = Callable[[int, str], AbstractContextManager["ProgressFn | None"]]

Reruns = dict[str, list[tuple[str | None, str | None, list[str]]]]


@dataclass
class Prepared:
    """Every input of an evaluation, read and checked; nothing has run or been written."""

    project: Project
    overrides: Overrides
    golden: GoldenSet
    baseline_path: Path
    baseline: Baseline | None
    settings: ResolvedSettings  # every stage's, resolved once
    history: Path | None  # where to record the run; None: not recorded
    system: Any = None  # the user's system under test (None: the project's)


@dataclass
class Evaluation:
    """What one evaluation produced."""

    result: RunResult
    baseline: Baseline | None = None
    baseline_path: Path | None = None
    docs: Path | None = None  # the inputs a saved baseline fingerprints
    golden_path: Path | None = None
    judge_failed: int = 0  # questions the judge failed on
    reruns: Reruns | None = None  # --rerun-failures: case id -> [(answer, error, problems)]
    notes: list[str] = field(default_factory=list)  # for a person to read; not warnings


@dataclass
class DryRun:
    """What a model run would send and cost (``--dry-run``)."""

    plan: CallPlan | None
    n_cases: int
    skipped: int  # questions that would build no prompt
    judge: JudgePlan | None


class Interrupted(KeyboardInterrupt):
    """Ctrl-C while the model was answering; ``str()`` says what was kept and how to resume."""

