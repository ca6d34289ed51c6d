"""Pydantic models that share their "fields set" with every instance set the same way.

Each pydantic instance keeps the set of fields it was given (``model_fields_set``),
a set of its own: 200 to 2,000 bytes, more than the values of a retrieved chunk or
a case's scores. A run of 100,000 questions holds a million such models, so the
sets were most of its memory. ragrail never reads which fields were given on these
models (nothing is dumped with ``exclude_unset``), so one set per combination is
shared: the memory of a retrieved chunk goes from about 1,000 bytes to 270.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

_SHARED: dict[frozenset[str], set[str]] = {}


class LeanModel(BaseModel):
    """A BaseModel whose ``model_fields_set`` is shared between instances (read-only in
    spirit: do not rely on it, or on ``exclude_unset``, for these models)."""

    def model_post_init(self, context: Any, /) -> None:
        given = self.__pydantic_fields_set__
        shared = _SHARED.setdefault(frozenset(given), given)
        if shared is not given:
            object.__setattr__(self, "__pydantic_fields_set__", shared)

    def __setattr__(self, name: str, value: Any) -> None:
        # pydantic adds an assigned field's name to the fields-set in place: on the
        # shared set that would mark it set on every instance sharing it (and on every
        # instance built later with the same fields). Move this instance to the shared
        # set that already holds the name first (not a copy of its own: 85,000 failing
        # cases given a cause took 130 MB that way), so pydantic's add changes nothing.
        fields_set = self.__pydantic_fields_set__
        if name not in fields_set and name in type(self).model_fields:
            key = frozenset(fields_set) | {name}
            object.__setattr__(self, "__pydantic_fields_set__", _SHARED.setdefault(key, set(key)))
        super().__setattr__(name, value)
