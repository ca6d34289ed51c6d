"""JUnit XML: one test case per question, so CI systems list failing questions.

Every piece of text goes through :func:`~ragrail.text.guard.visible`, whose output
holds only characters XML 1.0 allows: an ESC in a reason or a NUL in an answer never
makes the file unreadable for the CI server.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from ragrail.diff import Diff, fails, first_error, judge_failed, known_failures
from ragrail.records.results import RunResult
from ragrail.reports.conversations import together
from ragrail.text.guard import visible


def _answer(text: str) -> str:
    """An answer as element text: its line breaks kept, the rest made visible."""
    return visible(text, one_line=False)


def _seconds(latency_ms: float) -> str:
    return f"{latency_ms / 1000:.3f}" if math.isfinite(latency_ms) else "0.000"


def _slug(name: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in name.lower())


def junit_xml(
    run: RunResult, diff: Diff | None = None, strict: bool = False, accepted: bool = False
) -> str:
    """A ``testsuites`` document with one ``testsuite`` for the run.

    A question that fails (its answer fails or retrieval missed a fact,
    :func:`ragrail.diff.fails`) is a ``failure`` (message: its problems, else its cause);
    one whose call failed is an ``error`` (saying so when it passed in the baseline), and
    so is one the judge failed on; a question that got WORSE against the baseline is a
    failure too, even if it still passes.

    Against a baseline the report agrees with the run's exit code: a failing question
    with no WORSE line (:func:`ragrail.diff.known_failures`: it failed there too, it is
    new, ...) is ``skipped`` with why; ``strict`` makes it a failure, as without a
    baseline. ``accepted``: the run was saved as the new baseline (exit 0), so its WORSE
    lines are skipped as accepted. A question fixed since the baseline says so in its
    output.
    """
    worse: dict[str, list[str]] = {}
    fixed: dict[str, list[str]] = {}
    was_passing: set[str] = set()
    known: dict[str, str] = {}
    if diff is not None:
        for change in diff.worse:
            worse.setdefault(change.case_id, []).append(change.detail)
        for change in diff.fixed:
            fixed.setdefault(change.case_id, []).append(change.detail)
        was_passing = {c.case_id for c in diff.errors}
        if not strict:
            known = known_failures(diff)
    failures = errors = skipped = 0
    suite = ET.Element("testsuite", name=visible(run.config.name))
    classname = "ragrail." + "".join(ch if ch.isalnum() else "_" for ch in run.config.name.lower())
    for case in together(run.cases):  # a conversation's turns in a row, in order
        tc = ET.SubElement(
            suite,
            "testcase",
            name=visible(case.id),
            # a CI server groups by class: a conversation's turns under its own
            classname=classname + (f".{_slug(case.conversation)}" if case.conversation else ""),
            time=_seconds(case.trace.latency_ms),
        )
        if case.errored:
            errors += 1
            reason = first_error(case) or "error"
            if case.id in was_passing:
                reason = f"passed in the baseline, now errors: {reason}"
            ET.SubElement(tc, "error", message=visible(reason), type="system-error").text = visible(
                reason
            )
        elif judge_failed(case):
            errors += 1
            reason = "; ".join(case.judge.errors if case.judge else [])
            ET.SubElement(
                tc, "error", message=visible(f"judge: {reason}"), type="judge-error"
            ).text = visible(reason)
        problems = list(case.problems) or [case.cause or "retrieval missed a fact"]
        in_error = case.errored or judge_failed(case)
        if case.id in known and not in_error:
            skipped += 1
            reason = f"{known[case.id]}: {'; '.join(problems)}"
            if case.flaky:
                reason += f"; {case.flaky_text()}"
            ET.SubElement(tc, "skipped", message=visible(reason))
        elif accepted and case.id in worse and not in_error:
            skipped += 1
            lines = "; ".join(worse[case.id])
            ET.SubElement(
                tc, "skipped", message=visible(f"accepted as the new baseline: WORSE {lines}")
            )
        elif case.id in worse or (not in_error and fails(case)):
            failures += 1
            reasons = (problems if fails(case) else []) + [
                f"WORSE vs baseline: {w}" for w in worse.get(case.id, [])
            ]
            if case.flaky and not any("flaky:" in r for r in reasons):
                reasons.append(case.flaky_text() or "")
            detail = [f"question: {case.question}", f"retrieval recall: {case.retrieval_recall}"]
            if case.cause:
                detail.append(
                    f"cause: {case.cause}"
                    + (f" ({case.cause_detail})" if case.cause_detail else "")
                )
            ET.SubElement(
                tc, "failure", message=visible("; ".join(reasons)), type="answer"
            ).text = "\n".join(map(visible, detail))
        note = "".join(f"fixed vs baseline: {visible(d)}\n" for d in fixed.get(case.id, []))
        ET.SubElement(
            tc, "system-out"
        ).text = f"{note}Q: {visible(case.question)}\nA: {_answer(case.trace.answer or '')}"
    suite.set("tests", str(len(run.cases)))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("skipped", str(skipped))
    suite.set("timestamp", visible(run.created_at))
    root = ET.Element(
        "testsuites",
        name="ragrail",
        tests=str(len(run.cases)),
        failures=str(failures),
        errors=str(errors),
    )
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
