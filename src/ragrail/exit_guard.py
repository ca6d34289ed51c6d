"""``os._exit`` made an exception while the user's code may run in ragrail's process.

``os._exit()`` skips every ``except`` and ``finally``: called by a system under test
(a Python target, a custom check), ``os._exit(0)`` would end a run green with nothing
evaluated. While a guard is open it raises :class:`TargetExit` instead, which the caller
turns into that question's error. The replacement is one for the whole process: the
first guard to open puts it in place and the last to close puts back what it replaced,
whichever threads they run on, so a host process (the Python API, two evaluate() calls
on two threads, a call abandoned on a timeout) gets its own ``os._exit`` back.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn, Protocol


class TargetExit(BaseException):
    """``os._exit()`` called by the system under test, raised instead of ending ragrail."""

    def __init__(self, code: object) -> None:
        super().__init__(code)
        self.code = code


class _Exit(Protocol):
    """``os._exit``'s signature, its parameter's name included."""

    def __call__(self, status: int) -> NoReturn: ...


_lock = threading.Lock()
_open = 0  # guards open now, on every thread
_saved: _Exit | None = None  # what the first guard replaced
_installed: _Exit | None = None  # the replacement


@contextmanager
def exit_guarded() -> Iterator[None]:
    """While open, ``os._exit()`` raises :class:`TargetExit` on every thread of this
    process; a forked child (multiprocessing) still exits for real. Guards nest and
    overlap across threads; the last to close puts back the function the first replaced,
    unless something else has replaced it since (that one is left alone)."""
    global _open, _saved, _installed
    with _lock:
        if _open == 0:
            real_exit = os._exit
            pid = os.getpid()

            def guarded_exit(status: int) -> NoReturn:  # named as os._exit's is
                if os.getpid() != pid:
                    real_exit(status)
                raise TargetExit(status)

            _saved, _installed = real_exit, guarded_exit
            os._exit = guarded_exit
        _open += 1
    try:
        yield
    finally:
        with _lock:
            _open -= 1
            if _open == 0:
                if os._exit is _installed and _saved is not None:
                    os._exit = _saved
                _saved = _installed = None
