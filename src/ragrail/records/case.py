"""A labelled case and a golden set: what each field means and what is refused."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    StrictInt,
    field_validator,
    model_validator,
)

from ragrail.records.checks import CheckSpec
from ragrail.records.lean import LeanModel
from ragrail.text.matching import FactField

# What a correct response to a case does (see ragrail.scoring.behaviour for the checks).
Expectation = Literal["answer", "abstain", "refuse", "escalate"]
EXPECTATIONS: tuple[Expectation, ...] = ("answer", "abstain", "refuse", "escalate")


def expected_of(sources: Sequence[str], expect: str | None) -> Expectation:
    """A case's expected behaviour: ``expect`` when given, else ``abstain`` for a case
    without sources (the documents do not cover it) and ``answer`` for one with."""
    if expect is not None:
        return expect  # type: ignore[return-value]  # validated as one of EXPECTATIONS
    return "answer" if sources else "abstain"


class Case(LeanModel):
    """One golden-set entry."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    question: str
    # The relevant articles (grade >= 1), in the order given. Graded sources
    # ({"plans": 2, "billing": 1, "faq": 0}) fill ``grades`` with every judged grade.
    sources: list[str] = Field(default_factory=list)
    grades: dict[str, StrictInt] = Field(default_factory=dict, exclude_if=lambda g: not g)
    # a string, {"any": [...]} or {"regex": "..."}; see ragrail.text.matching
    facts: list[FactField] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    # What the reply should do: answer, abstain ("I don't know"), refuse or escalate; None:
    # abstain without sources, answer with them (see ragrail.scoring.behaviour).
    expect: Literal["answer", "abstain", "refuse", "escalate"] | None = Field(
        default=None, exclude_if=lambda e: e is None
    )
    checks: list[CheckSpec] = Field(default_factory=list)
    # Where the case came from, for a case made from a logged conversation (`ragrail add
    # --from-log`): {"from": "production", "conversation": id, "date": ISO date, "version"}.
    # `ragrail lint` warns when such a case disappears from the golden set.
    provenance: dict[str, str] = Field(default_factory=dict, exclude_if=lambda p: not p)
    # A turn of a conversation (a golden entry with ``turns``): the entry's id and the
    # turn's number from 1; the case's id is then f"{conversation} turn {turn}".
    conversation: str | None = Field(default=None, min_length=1, exclude_if=lambda c: c is None)
    turn: StrictInt | None = Field(default=None, ge=1, exclude_if=lambda t: t is None)
    # The conversation so far, filled at run time on a per-run copy: each earlier
    # turn's {"question", "answer"}, the answers the system itself gave. Never written:
    # a golden set states the questions, not the answers a given run got.
    history: list[dict[str, str]] = Field(default_factory=list, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _graded_sources(cls, data: Any) -> Any:
        """Sources given as a mapping of article to grade: the names graded >= 1 become
        ``sources`` and every grade is kept in ``grades``. A malformed mapping is left
        for the ``sources`` field to report."""
        if not isinstance(data, dict) or not isinstance(data.get("sources"), dict):
            return data
        graded = data["sources"]
        if grade_problem(graded) is not None:
            return data
        if "grades" in data:
            raise ValueError('give grades in "sources" only, not also in "grades"')
        relevant = [name for name, grade in graded.items() if grade >= 1]
        return {**data, "sources": relevant, "grades": dict(graded)}

    @field_validator("sources", mode="before")
    @classmethod
    def _grades_are_whole_numbers(cls, value: Any) -> Any:
        problem = grade_problem(value) if isinstance(value, dict) else None
        if problem is not None:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _grades_match_sources(self) -> Case:
        if self.grades:
            problem = grade_problem(self.grades)
            if problem is not None:
                raise ValueError(problem)
            relevant = [name for name, grade in self.grades.items() if grade >= 1]
            if relevant != self.sources:
                raise ValueError('"grades" must grade exactly the sources, in order')
        return self

    @model_validator(mode="after")
    def _expect_fits_sources(self) -> Case:
        """An answer needs the articles that hold it; "I don't know" means there are none."""
        if self.expect == "answer" and not self.sources:
            raise ValueError('expect "answer" needs the sources that answer the question')
        if self.expect == "abstain" and self.sources:
            raise ValueError(
                'expect "abstain" is for a question the documents do not cover: give no sources'
            )
        return self

    @model_validator(mode="after")
    def _turn_of_a_conversation(self) -> Case:
        if (self.conversation is None) != (self.turn is None):
            raise ValueError('"conversation" and "turn" go together: give both or neither')
        if self.conversation is not None and self.id != turn_id(self.conversation, self.turn):
            raise ValueError(
                f"a turn's id is {turn_id(self.conversation, self.turn)!r}, not {self.id!r}"
            )
        return self

    @field_validator("question")
    @classmethod
    def _question_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("sources")
    @classmethod
    def _no_blank_items(cls, value: list[str]) -> list[str]:
        if any(not item.strip() for item in value):
            raise ValueError("must not contain empty strings")
        return value

    @property
    def expected(self) -> Expectation:
        """What the reply should do: ``expect``, or by default abstain without sources
        and answer with them."""
        return expected_of(self.sources, self.expect)

    @property
    def expects_abstain(self) -> bool:
        """True when the reply should be "I don't know" (the documents do not cover it)."""
        return self.expected == "abstain"

    @property
    def relevance(self) -> dict[str, int]:
        """Every judged article with its grade: a plain list of sources is grade 1 each."""
        return dict(self.grades) if self.grades else dict.fromkeys(self.sources, 1)


def turn_id(conversation: str, turn: int | None) -> str:
    """The id of a conversation's turn (numbered from 1): ``"pro-plan-followup turn 2"``."""
    return f"{conversation} turn {turn}"


def grade_problem(graded: dict[Any, Any]) -> str | None:
    """Why a mapping of article to grade is not one (names non-blank strings,
    grades whole numbers >= 0), or None when it is."""
    for name, grade in graded.items():
        if not isinstance(name, str) or not name.strip():
            return "must not contain empty strings"
        if isinstance(grade, bool) or not isinstance(grade, int) or grade < 0:
            return f"the grade of {name!r} must be a whole number >= 0, not {grade!r}"
    return None


@dataclass(frozen=True)
class GoldenSet:
    path: Path
    cases: list[Case]
    lines: dict[str, int]  # case id -> line in the file, for error messages

    def where(self, case_id: str) -> str:
        line = self.lines.get(case_id)
        return f"{self.path}:{line}" if line else str(self.path)
