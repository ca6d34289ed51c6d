"""Systems under test other than the built-in pipeline.

``OutputsFile``: precomputed outputs, one JSON object per line:

    {"id": "case-id", "answer": "...", "contexts": [{"id": "doc#1", "source": "doc",
     "text": "...", "score": 0.9}]}

``id`` may be replaced by ``question`` (matched exactly). Context order is
rank order; ``score`` is optional. ``"escalated": true`` says the system handed the
question to a person (see ``ragrail.scoring.behaviour``). This is also how results from other tools
are imported: write their answers and retrieved passages in this shape.

``CallableSystem`` (``python``): a Python function; ``HttpSystem`` (``http``): an
endpoint; ``OutputsFile`` (``outputs``): precomputed answers. Each has
``traces(cases)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragrail.calls.urls import url_problem
from ragrail.errors import InputError
from ragrail.system.adapters.http import HttpSystem, expand_env
from ragrail.system.adapters.outputs_file import OutputsFile
from ragrail.system.adapters.python import (
    CallableSystem,
    callable_name,
    describe_failure,
    is_async,
    load_target,
)
from ragrail.system.adapters.records import (
    DEFAULT_TIMEOUT,
    OutputContext,
    OutputRecord,
    parse_output,
    record_to_trace,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "CallableSystem",
    "HttpSystem",
    "OutputContext",
    "OutputRecord",
    "OutputsFile",
    "callable_name",
    "describe_failure",
    "expand_env",
    "is_async",
    "load_target",
    "make_system",
    "parse_output",
    "record_to_trace",
    "url_problem",
]


def make_system(cfg: Any, root: Path, given: object | None = None) -> Any:
    """The system under test other than the pipeline: ``given`` (the user's own, given to
    the API: a function, a ``"module:function"`` string or an object with
    ``traces(cases)``), else the one ``cfg`` (``[system]``, as resolved) names."""
    if given is not None:
        if hasattr(given, "traces"):
            return given
        if isinstance(given, str) or callable(given):
            return CallableSystem(given, root, cfg.concurrency, cfg.timeout)
        raise InputError(
            f"system must be a function, a 'module:function' string or an object with "
            f"traces(cases); got {type(given).__name__}"
        )
    if cfg.kind == "outputs":
        if not cfg.path:
            raise InputError('[system] kind = "outputs" needs path = "FILE.jsonl"')
        return OutputsFile(root / cfg.path)
    if cfg.kind == "python":
        if not cfg.target:
            raise InputError('[system] kind = "python" needs target = "package.module:function"')
        return CallableSystem(cfg.target, root, cfg.concurrency, cfg.timeout)
    if cfg.kind == "http":
        return HttpSystem(cfg)
    raise InputError(f"unknown system kind {cfg.kind!r}")
