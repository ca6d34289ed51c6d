"""Cyclic garbage collection paused while a run builds its objects.

Loading and scoring 100,000 questions makes millions of small objects and no
reference cycles; the collector, triggered every 700 allocations, walked them
again and again (a quarter of the time of a 20,000-question run). Reference
counting still frees everything as usual; only the cycle search waits, and the
previous setting is restored afterwards.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
