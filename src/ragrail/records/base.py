"""What every result type is built on: finite numbers only, unknown fields refused,
and the constrained number types they share."""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, Field

from ragrail.records.lean import LeanModel


class Model(LeanModel):
    # Every number is finite: NaN or infinity is refused when a model is built or a
    # saved run is read. One assigned after validation is written as the NaN
    # literal, which the read-back of a save refuses, instead of a silent null.
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, ser_json_inf_nan="constants")


Rate = Annotated[float, Field(ge=0.0, le=1.0)]  # a share: recall, precision, a pass rate
# 2**53: the largest count a JSON reader keeps exact; a hand-edited 10**400 is refused
# (exit 2) instead of overflowing the statistics that read it
Count = Annotated[int, Field(ge=0, le=2**53)]
