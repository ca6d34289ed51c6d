"""Which backend a run uses, checked before any work; what the backends and the jobs they
take share, below both."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragrail.errors import InputError

if TYPE_CHECKING:
    from ragrail.flags import Overrides
    from ragrail.project import Project

BACKENDS = ("local", "ray")
RAY_EXTRA = "pip install 'ragrail[ray]'"


@dataclass(frozen=True)
class Backend:
    """The backend a run uses: ``name`` (local or ray) and, for ray, the cluster's
    ``address`` (None: a Ray instance started for the run on this machine)."""

    name: str = "local"
    address: str | None = None

    @property
    def local(self) -> bool:
        return self.name == "local"


def require_ray() -> None:
    """Refuse (exit 2) when Ray is not installed; looks it up without importing it."""
    if importlib.util.find_spec("ray") is None:
        raise InputError(f"--backend ray needs Ray, which is not installed: {RAY_EXTRA}")


def choose(project: Project, overrides: Overrides) -> Backend:
    """The run's backend: the flags (--backend, --address), else [run] in the project
    file, else local. Checked before any work: a missing Ray or a flag that only the
    local backend supports is an input error."""
    run_cfg = project.config.run
    name = overrides.backend or run_cfg.backend
    address = overrides.address or run_cfg.address
    if name not in BACKENDS:
        raise InputError(f"unknown backend {name!r}; choose local or ray")
    if name == "local":
        if overrides.address:  # [run] address alone is kept for a later --backend ray
            raise InputError("--address is the Ray cluster's: use it with --backend ray")
        return Backend()
    if overrides.address:  # [run] address was checked when the project file was read
        from ragrail.calls.urls import address_problem

        problem = address_problem(overrides.address)
        if problem is not None:
            raise InputError(f"--address: {problem}")
    require_ray()
    if overrides.rerun_failures:
        raise InputError("--rerun-failures runs on the local backend: drop --backend ray for it")
    return Backend(name, address or None)
