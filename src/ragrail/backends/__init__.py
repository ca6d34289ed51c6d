"""Where an evaluation's per-question work runs: here (``local``, the default) or on a
Ray cluster (``ray``, the optional extra ``ragrail[ray]``).

Whichever runs it, each question is answered and scored alone, and the driver adds
the results up in golden-set order with the same code (:func:`ragrail.run.compute_totals`),
so both give byte-equal per-question results and totals. Nothing here imports Ray:
only :mod:`ragrail.backends.ray` does, and only when a run asks for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragrail.backends.choice import (  # noqa: F401  (the backends' public face)
    BACKENDS,
    RAY_EXTRA,
    Backend,
    choose,
    require_ray,
)

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from ragrail.judge.core import Judge
    from ragrail.online.score import Flagger


def log_flagger(backend: Backend) -> Flagger | None:
    """:func:`ragrail.online.score.score_logs`'s flagger on ``backend``: None (the
    flags are worked out here) or the Ray one (batches of conversations as Ray tasks)."""
    if backend.local:
        return None
    from functools import partial

    from ragrail.backends.ray import log_flags

    return partial(log_flags, backend)


def judging(backend: Backend | None, judge: Judge) -> AbstractContextManager[None]:
    """Where ``judge``'s model calls run while the context is open: here (local, nothing
    changes) or as Ray tasks on ``backend``'s cluster (:func:`ragrail.backends.ray.judge_on_ray`)."""
    if backend is None or backend.local:
        from contextlib import nullcontext

        return nullcontext()
    from ragrail.backends.ray import judge_on_ray

    return judge_on_ray(backend, judge)
