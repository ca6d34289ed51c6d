"""``pytest --ragrail``: a project's golden set as one test per case.

``pytest --ragrail`` (or ``--ragrail=path/to/ragrail.toml``, or a folder holding
one) collects ``ragrail.toml::<case id>`` for every case of the project's
golden set. The evaluation runs once per session, lazily, when the first
ragrail test runs, over the cases selected (``-k``, ``-m``, ``--lf``,
``--deselect``); each test then reads its case's verdict:

- it fails when the case fails now (its answer fails, retrieval missed one of its
  facts, or its call errored), showing the cause and the evidence: the cause's
  detail, the missed facts and where they are, the retrieved chunk ids, the
  answer;
- when the project has a baseline, a case that got worse fails with ``WORSE:
  ...`` first, and one that passed there and errors now with ``ERROR: ...``.

With pytest-xdist (``-n N``) each worker evaluates the cases it collected
once, the whole selected set; ``--dist loadfile`` keeps them on one worker,
so a model is asked each question once. The run is not recorded in the
project's history (``ragrail run`` does that).

This module is loaded by every pytest run where ragrail is installed (the
``pytest11`` entry point), so it imports nothing of ragrail until asked.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ragrail.diff import Change, Diff
    from ragrail.project import Project
    from ragrail.records.case import GoldenSet
    from ragrail.records.results import CaseResult, RunResult

CONFIG_NAME = "ragrail.toml"
_CONFIG = pytest.StashKey[Path]()  # the project file of this session, when --ragrail
_EVALUATED = pytest.StashKey[list["RagrailFile"]]()  # the projects evaluated, for the summary
MAX_ANSWER = 400  # characters of the answer shown in a failure


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ragrail", "ragrail: a golden set as tests")
    group.addoption(
        "--ragrail",
        action="store",
        nargs="?",
        const=CONFIG_NAME,
        default=None,
        metavar="PATH",
        help="Collect one test per golden-set case of the ragrail project PATH "
        "(a ragrail.toml or its folder; default ./ragrail.toml). Give a path as "
        "--ragrail=PATH.",
    )
    group.addoption(
        "--ragrail-strict",
        action="store_true",
        default=False,
        help="Fail every case that fails now. Default: against a baseline, a case that "
        "failed there too and lost nothing is an expected failure (xfail), as `ragrail "
        "run` does not count it as a regression.",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "ragrail: a golden-set case evaluated by ragrail")
    given = config.getoption("ragrail", None)
    if given is None:
        return
    path = Path(given)
    if not path.is_absolute():
        path = config.invocation_params.dir / path
    if path.is_dir():
        path = path / CONFIG_NAME
    if not path.is_file():
        raise pytest.UsageError(
            f"--ragrail: no project file at {path}: give a ragrail.toml (--ragrail=PATH) "
            "or run where one is (`ragrail init`, or `ragrail example kitebase DIR`)"
        )
    path = path.resolve()
    config.stash[_CONFIG] = path
    # Collected like any file argument: where the run's own arguments already reach it
    # (pytest in the project folder) pytest folds the two into one.
    if str(path) not in config.args:
        config.args.append(str(path))


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    target = parent.config.stash.get(_CONFIG, None)
    if target is None or file_path.name != target.name or file_path.resolve() != target:
        return None
    return RagrailFile.from_parent(parent, path=file_path)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Note the cases left after -k, -m and the like: only they are evaluated."""
    selected: dict[RagrailFile, list[str]] = {}
    for item in items:
        if isinstance(item, RagrailCase):
            selected.setdefault(item.parent, []).append(item.case_id)  # type: ignore[arg-type]
    for node, ids in selected.items():
        node.selected = set(ids)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Each evaluated project's figures and its verdict against the baseline."""
    for node in config.stash.get(_EVALUATED, []):
        terminalreporter.write_sep("-", "ragrail")
        for line in node.summary_lines():
            terminalreporter.write_line(line)


# ---------------------------------------------------------------- collection


@dataclass
class Outcome:
    """The session's evaluation of one project: the result and its diff, or why not."""

    result: RunResult | None = None
    diff: Diff | None = None
    baseline: Path | None = None
    error: str | None = None  # the evaluation itself failed: every case fails with it
    changes: dict[str, list[Change]] = field(default_factory=dict)
    known: dict[str, str] = field(default_factory=dict)  # expected failures: id -> cause
    _cases: dict[str, CaseResult] | None = None

    def case(self, case_id: str) -> CaseResult | None:
        """The evaluated case with this id, looked up in a dict built once: each test
        item asks for its own, and a search per item was quadratic in the cases."""
        if self.result is None:
            return None
        if self._cases is None:
            self._cases = {}
            for c in self.result.cases:
                self._cases.setdefault(c.id, c)
        return self._cases.get(case_id)


class RagrailFile(pytest.File):
    """A ragrail project file: its golden set's cases are the tests."""

    project: Project
    golden: GoldenSet
    selected: set[str] | None = None  # case ids left after deselection; None: all
    outcome: Outcome | None = None

    def collect(self) -> Iterator[RagrailCase]:
        from ragrail import app
        from ragrail.errors import RagrailError
        from ragrail.golden import load_golden
        from ragrail.text.guard import visible

        try:
            self.project = app.load_project(self.path)
            self.golden = load_golden(self.project.golden, self.project.root)
        except RagrailError as exc:
            raise self.CollectError(f"ragrail: {visible(str(exc))}") from None
        for case in self.golden.cases:
            yield RagrailCase.from_parent(self, name=visible(case.id), case_id=case.id)

    def evaluate(self) -> Outcome:
        """The evaluation of the selected cases, run on the first call of the session."""
        if self.outcome is None:
            self.config.stash.setdefault(_EVALUATED, []).append(self)
            try:
                self.outcome = self._evaluate()
            except Exception as exc:
                # a bug, not a verdict: its traceback on this test, one line on the others
                self.outcome = Outcome(
                    error=f"ragrail: the evaluation failed: {type(exc).__name__}: {exc}"
                )
                raise
        return self.outcome

    def _evaluate(self) -> Outcome:
        from ragrail import app
        from ragrail.app.finish import Ending, finish
        from ragrail.errors import RagrailError
        from ragrail.records.case import GoldenSet
        from ragrail.settings import Overrides
        from ragrail.text.guard import visible

        golden = self.golden
        if self.selected is not None and len(self.selected) < len(golden.cases):
            golden = GoldenSet(
                golden.path, [c for c in golden.cases if c.id in self.selected], golden.lines
            )
        try:
            evaluation = app.evaluate(self.project, Overrides(no_history=True), golden=golden)
            app.mark_flaky(self.project, evaluation.result)  # read from the history
            diff = finish(self.project, evaluation, Ending()).diff  # compared, not recorded
        except RagrailError as exc:
            return Outcome(error=f"ragrail: {visible(str(exc))}")
        outcome = Outcome(evaluation.result, diff, evaluation.baseline_path)
        for change in diff.changes if diff is not None else []:
            outcome.changes.setdefault(change.case_id, []).append(change)
        if diff is not None and not self.config.getoption("ragrail_strict", False):
            from ragrail.diff import known_failures

            outcome.known = known_failures(diff)
        return outcome

    def summary_lines(self) -> list[str]:
        """``Kitebase bot: 12 questions, hit rate 91%, recall 86%, answers pass 67%`` and
        the verdict against the baseline."""
        from ragrail.diff import pct
        from ragrail.text.guard import visible

        o = self.outcome
        if o is None or o.result is None:
            return [o.error] if o is not None and o.error else []
        t, name = o.result.totals, visible(o.result.config.name)
        lines = [
            f"{name}: {t.n_cases} question{'' if t.n_cases == 1 else 's'}, "
            f"hit rate {pct(t.hit_rate)}, "
            f"recall {pct(t.recall)}, answers pass {pct(t.answer_pass_rate)}"
        ]
        if o.diff is None:
            lines.append("no baseline to compare with")
            return lines
        where = o.baseline.name if o.baseline is not None else "the baseline"
        verdict = f"against {where}: {o.diff.summary()}"
        if o.diff.config_changes:
            verdict += f" (changed: {', '.join(o.diff.config_changes)})"
        lines.append(visible(verdict))
        if o.diff.answers_note:
            lines.append(visible(o.diff.answers_note))
        if o.known:
            n = len(o.known)
            lines.append(
                f"{n} expected failure{'' if n == 1 else 's'} (no WORSE line: failed in the "
                "baseline too, or new, ...): xfail; --ragrail-strict fails them"
            )
        lines += [visible(f"fixed:  {c.case_id}: {c.detail}") for c in o.diff.fixed]
        return lines


class CaseFailed(Exception):
    """A case that fails: ``headline`` names the cause, ``lines`` the evidence."""

    def __init__(self, headline: str, lines: list[str]) -> None:
        super().__init__(headline)
        self.headline = headline
        self.lines = lines


class RagrailCase(pytest.Item):
    """One golden-set case: passes when the case passes now and is no worse than in the
    baseline."""

    def __init__(self, *, case_id: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case_id = case_id
        self.add_marker("ragrail")

    def runtest(self) -> None:
        parent: RagrailFile = self.parent  # type: ignore[assignment]
        outcome = parent.evaluate()
        if outcome.error is not None:
            raise CaseFailed(outcome.error, [])
        case = outcome.case(self.case_id)
        if case is None:
            raise CaseFailed("ragrail: this case was not evaluated (deselected?)", [])
        failure = case_failure(case, outcome.changes.get(self.case_id, []))
        if failure is not None:
            known = outcome.known.get(self.case_id)
            if known is not None:
                from ragrail.text.guard import visible

                flaky = case.flaky_text()
                pytest.xfail(visible(f"{known} [{flaky}]" if flaky else known))
            raise failure

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, CaseFailed):
            line_only = self.config.getoption("tbstyle", "auto") == "line"
            return FailureRepr(excinfo.value, *self._where(), line_only=line_only)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        path, line = self._where()
        return Path(path), line - 1 if line else None, f"ragrail: {self.name}"

    def _where(self) -> tuple[str, int]:
        """The case's file and line in the golden set (0: unknown)."""
        golden = getattr(self.parent, "golden", None)
        if golden is None:
            return str(self.path), 0
        return str(golden.path), golden.lines.get(self.case_id, 0)


@dataclass
class _Crash:
    """What pytest's short summary and JUnit read of a failure (``reprcrash``)."""

    path: str
    lineno: int
    message: str

    def __str__(self) -> str:  # --tb=line: where the case is, and why it fails
        where = f"{self.path}:{self.lineno}" if self.lineno else self.path
        return f"{where}: {self.message}"


class FailureRepr:
    """A case's failure as pytest shows it: the headline (also the short summary's and
    JUnit's message), then the evidence. Plain text under xdist (``str``). With
    ``line_only`` (``--tb=line``) pytest prints only the crash line."""

    def __init__(self, failed: CaseFailed, path: str, line: int, line_only: bool = False) -> None:
        self.reprcrash = _Crash(path, line, failed.headline)
        self.line_only = line_only
        self.text = "\n".join([failed.headline, *failed.lines])

    def toterminal(self, tw: Any) -> None:
        if self.line_only:
            return
        for line in self.text.split("\n"):
            tw.line(line, red=line.startswith(("WORSE", "ERROR")))

    def __str__(self) -> str:
        return str(self.reprcrash) if self.line_only else self.text


# ---------------------------------------------------------------- the verdict


def case_failure(case: CaseResult, changes: list[Change]) -> CaseFailed | None:
    """Why ``case`` fails (its WORSE or ERROR lines against the baseline first, then its
    failure now), with the evidence; None when it passes."""
    from ragrail.diff import first_error, judge_failed, pct
    from ragrail.text.guard import visible

    # only what makes the gate red fails a test: a fixed, lower or noise line never does
    reasons = [visible(f"{c.kind}: {c.detail}") for c in changes if c.kind in ("WORSE", "ERROR")]
    if case.errored:
        if not any(c.kind == "ERROR" for c in changes):
            reasons.append(visible(f"ERROR: the call failed: {first_error(case)}"))
    elif judge_failed(case) and case.judge is not None:
        reasons.append(visible(f"ERROR: the judge failed: {case.judge.errors[0]}"))
    missed = case.retrieval_recall is not None and case.retrieval_recall < 1
    failed_now = case.answer_pass is False or missed
    if not reasons and not failed_now:
        return None
    cause = case.cause or ("retrieval miss" if missed else "answer fails")
    # the headline is what the short summary and JUnit show: the WORSE or ERROR line
    # first (what changed), with the cause beside it
    headline = reasons[0] if reasons else cause
    if reasons and failed_now and not case.errored:
        headline += f" ({cause})"
    flaky = case.flaky_text()
    if flaky is not None and flaky not in headline:
        headline += f" [{flaky}]"
    lines = reasons[1:]
    if case.cause_detail:
        lines.append(visible(f"  {case.cause_detail}"))
    lines.append(visible(f"question: {case.question}"))
    # a call that failed before retrieval has no recall to show: 0% would say it missed
    lost = case.errored and not case.trace.retrieved
    if case.facts and not lost:
        lines.append(
            f"retrieval: recall {pct(case.retrieval_recall)} of "
            f"{len(case.facts)} fact{'s' if len(case.facts) != 1 else ''}"
        )
    for m in case.missed_facts:
        where = m.where.replace("_", " ")
        at = ", ".join(
            part
            for part in (
                " + ".join(m.chunks),
                f"rank {m.rank}" if m.rank is not None else "",
                f"score {m.score:.2f}" if m.score is not None else "",
            )
            if part
        )
        lines.append(visible(f'  missed "{m.fact}": {where}' + (f" ({at})" if at else "")))
    chunks = sorted(case.trace.retrieved, key=lambda c: c.rank)
    shown = ", ".join(f"{c.id} ({c.score:.2f})" for c in chunks)
    shown = shown or ("nothing: the call failed first" if lost else "nothing")
    lines.append(visible(f"retrieved: {shown}"))
    for problem in [*case.problems, *case.check_problems]:
        lines.append(visible(f"problem: {problem}"))
    if case.trace.answer is not None:
        answer = case.trace.answer
        if len(answer) > MAX_ANSWER:
            answer = answer[:MAX_ANSWER] + f"... ({len(case.trace.answer)} characters)"
        # its own lines kept, each indented under the label
        first, *rest = visible(answer, one_line=False).split("\n")
        lines += [f"answer: {first}", *(f"  {line}" if line else "" for line in rest)]
    return CaseFailed(headline, lines)
