"""A progress bar for model calls: done, errors, tokens and cost so far (on stderr)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the call layer (asyncio and all) loads only when calls are made
    from ragrail.calls.layer import CallResult, ProgressFn, UsageTotals


@contextmanager
def call_progress(
    total: int, label: str, enabled: bool | None = None
) -> Iterator[ProgressFn | None]:
    """Yield a callback for the call layer, drawing a rich progress bar while it runs.

    Off when stderr is not a terminal (CI logs get the summary in the scorecard instead).
    """
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled or total == 0:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[stats]}"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task = progress.add_task(label, total=total, stats="")

    def update(result: CallResult, usage: UsageTotals) -> None:
        cost = f"${usage.cost_usd:.4f}" if usage.priced else "cost ?"
        stats = (
            f"errors {usage.errors}  cached {usage.cached}  "
            f"tokens {usage.input_tokens:,}/{usage.output_tokens:,}  {cost}"
        )
        progress.update(task, advance=1, stats=stats)

    with progress:
        yield update
