"""What the page drives: a validation session (label answers, see the judge's verdict
after) and a golden session (make cases of sampled conversations). Every state the page
gets is text for ``textContent``, through :func:`ragrail.text.guard.visible`; every
action names an item by its place in the queue, never by a string the page sent."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ragrail.errors import InputError
from ragrail.label.queue import JudgedItem, Passage, SampledItem
from ragrail.label.storage import GoldenFile, LabelsFile, verdict_text
from ragrail.text.guard import visible

EXPECTS = ("answer", "abstain", "refuse", "escalate")


def _text(s: str) -> str:
    return visible(s, one_line=False)


def _passages(ps: tuple[Passage, ...]) -> list[dict[str, str]]:
    return [{"source": visible(p.source), "text": _text(p.text), "id": visible(p.id)} for p in ps]


def _index(body: dict[str, Any], n: int) -> int:
    i = body.get("index")
    if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < n:
        raise InputError(f"no item {i!r} in the queue")
    return i


def _word(value: float | None, scale: str) -> str | None:
    return None if value is None else verdict_text(value, scale)


@dataclass
class ValidationSession:
    """A run's judged answers, labelled into ``labels``; ``finish`` (from the application
    layer) runs ``judge validate`` on the file."""

    items: list[JudgedItem]
    labels: LabelsFile
    on_finish: Callable[[], dict[str, Any]]
    mode: str = "validate"
    undo_stack: list[tuple[int, str | None]] = field(default_factory=list)

    def _human(self) -> dict[tuple[str, str], float]:
        from ragrail.judge.validate import _verdict

        return {k: _verdict(v, "") for k, v in self.labels.done().items()}

    def _item(self, i: int, human: dict[tuple[str, str], float]) -> dict[str, Any]:
        it = self.items[i]
        mine = human.get(it.key)
        shown: dict[str, Any] = {
            "index": i,
            "case_id": visible(it.case_id),
            "criterion": visible(it.criterion),
            "scale": it.scale,
            "question": _text(it.question),
            "answer": _text(it.answer),
            "passages": _passages(it.passages),
            "label": _word(mine, it.scale),
        }
        if mine is not None:  # the judge's verdict only once the person has given theirs
            shown["judge"] = _word(it.judge, it.scale)
            shown["reason"] = _text(it.reason)
            shown["agrees"] = mine == it.judge
        return shown

    def state(self) -> dict[str, Any]:
        human = self._human()
        return {
            "mode": self.mode,
            "labeller": visible(self.labels.labeller),
            "file": visible(str(self.labels.path)),
            "items": [self._item(i, human) for i in range(len(self.items))],
            "can_undo": bool(self.undo_stack),
        }

    def act(self, body: dict[str, Any]) -> dict[str, Any]:
        op = body.get("op")
        if op == "undo":
            if not self.undo_stack:
                raise InputError("nothing to undo")
            i, previous = self.undo_stack.pop()
            self.labels.set(*self.items[i].key, previous)
            return {"item": self._item(i, self._human()), "can_undo": bool(self.undo_stack)}
        if op != "label":
            raise InputError(f"unknown action {op!r}")
        i = _index(body, len(self.items))
        it = self.items[i]
        verdict = body.get("verdict")
        allowed = ("pass", "fail") if it.scale == "pass_fail" else ("1", "2", "3", "4", "5")
        if verdict not in allowed:
            raise InputError(f"{it.criterion} takes {'/'.join(allowed)}")
        self.undo_stack.append((i, self.labels.done().get(it.key)))
        self.labels.set(it.case_id, it.criterion, str(verdict))
        return {"item": self._item(i, self._human()), "can_undo": True}

    def finish(self) -> dict[str, Any]:
        if not self.labels.rows:
            raise InputError("label at least one answer first")
        return self.on_finish()


@dataclass
class GoldenSession:
    """Sampled conversations made into golden cases, appended to ``golden``. ``documents``
    (name -> text) check a case's labels as ``lint`` would before it is written;
    ``on_added`` records where a case came from (the log database, when the session was
    started from it)."""

    items: list[SampledItem]
    golden: GoldenFile
    documents: dict[str, str]
    language: str = "en"
    on_added: Callable[[str, SampledItem], None] | None = None
    labeller: str = ""
    mode: str = "golden"
    added: dict[int, str] = field(default_factory=dict)  # this session's: item -> case id

    def _existing(self) -> dict[str, str]:
        """conversation id -> the case made of it, already in the golden set."""
        from ragrail.online.cases import log_case_id

        out: dict[str, str] = {}
        for c in self.golden.load().cases:
            made_of = (c.provenance or {}).get("conversation")
            if isinstance(made_of, str):
                out[made_of] = c.id
        ids = {c.id for c in self.golden.load().cases}
        for it in self.items:
            if it.id not in out and log_case_id(it.id) in ids:
                out[it.id] = log_case_id(it.id)
        return out

    def state(self) -> dict[str, Any]:
        existing = self._existing()
        return {
            "mode": self.mode,
            "file": visible(str(self.golden.path)),
            "documents": sorted(visible(d) for d in self.documents),
            "items": [
                {
                    "index": i,
                    "id": visible(it.id),
                    "stratum": visible(it.stratum),
                    "question": _text(it.question),
                    "answer": _text(it.answer),
                    "passages": _passages(it.passages),
                    "case": visible(existing[it.id]) if it.id in existing else None,
                }
                for i, it in enumerate(self.items)
            ],
            "can_undo": bool(self.golden.undo_stack),
        }

    def act(self, body: dict[str, Any]) -> dict[str, Any]:
        op = body.get("op")
        if op == "undo":
            case_id = self.golden.undo()
            if case_id is None:
                raise InputError("nothing to undo")
            i = next(k for k, v in self.added.items() if v == case_id)
            del self.added[i]
            return {"index": i, "case": None, "can_undo": bool(self.golden.undo_stack)}
        if op != "save":
            raise InputError(f"unknown action {op!r}")
        i = _index(body, len(self.items))
        it = self.items[i]
        case = self._case(it, body)
        problems = self._lint(case)
        if problems and body.get("force") is not True:
            return {"index": i, "problems": problems}
        self.golden.add(case)
        self.added[i] = case.id
        if self.on_added is not None:
            self.on_added(case.id, it)
        return {"index": i, "case": visible(case.id), "can_undo": True}

    def _case(self, it: SampledItem, body: dict[str, Any]) -> Any:
        from pydantic import ValidationError

        from ragrail.golden import Case
        from ragrail.golden.add import with_expect
        from ragrail.online.cases import log_case_id

        facts, sources, expect = body.get("facts", []), body.get("sources", []), body.get("expect")
        for name, value in (("facts", facts), ("sources", sources)):
            if not isinstance(value, list) or not all(
                isinstance(v, str) and v.strip() for v in value
            ):
                raise InputError(f"{name} must be a list of non-empty strings")
        if facts and not sources:
            raise InputError("a case with facts needs a source (a fact is found in a source)")
        try:
            case = Case.model_validate(
                {
                    "id": log_case_id(it.id),
                    "question": it.question,
                    "sources": list(dict.fromkeys(sources)),
                    "facts": list(dict.fromkeys(f.strip() for f in facts)),
                    "provenance": {
                        **it.provenance(),
                        **({"labeller": self.labeller} if self.labeller else {}),
                    },
                }
            )
        except ValidationError as exc:
            raise InputError(str(exc.errors()[0]["msg"]).removeprefix("Value error, ")) from None
        if expect is not None:
            if expect not in EXPECTS:
                raise InputError(f"expect is one of {', '.join(EXPECTS)}")
            case = with_expect(case, expect)
        return case

    def _lint(self, case: Any) -> list[str]:
        """The errors ``lint`` would find in the case alone (unknown source, fact not found)."""
        from ragrail.golden import lint_golden
        from ragrail.records.case import GoldenSet

        if not self.documents:
            return []
        found = lint_golden(GoldenSet(self.golden.path, [case], {}), self.documents, self.language)
        return [visible(p.message) for p in found if not p.warning]

    def finish(self) -> dict[str, Any]:
        n = len(self.added)
        lines = [
            f"Added {n} case(s) to {visible(str(self.golden.path))}: "
            + ", ".join(visible(c) for c in self.added.values())
        ]
        return {
            "mode": self.mode,
            "added": [visible(c) for c in self.added.values()],
            "lines": lines,
        }
