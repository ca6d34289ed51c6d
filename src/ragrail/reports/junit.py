"""JUnit XML: one test case per question, so CI systems list failing questions."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ragrail.compare import Diff
from ragrail.results import RunResult


def junit_xml(run: RunResult, diff: Diff | None = None) -> str:
    """A ``testsuites`` document with one ``testsuite`` for the run.

    A question whose answer failed is a ``failure`` (message: its problems); one whose
    call failed is an ``error``; a question that got WORSE against the baseline is a
    failure too, even if its answer still passes (its retrieval dropped).
    """
    worse: dict[str, list[str]] = {}
    if diff is not None:
        for change in diff.worse:
            worse.setdefault(change.case_id, []).append(change.detail)
    failures = errors = 0
    suite = ET.Element("testsuite", name=run.config.name)
    classname = "ragrail." + "".join(ch if ch.isalnum() else "_" for ch in run.config.name.lower())
    for case in run.cases:
        tc = ET.SubElement(
            suite,
            "testcase",
            name=case.id,
            classname=classname,
            time=f"{case.trace.latency_ms / 1000:.3f}",
        )
        if case.errored:
            errors += 1
            message = next((s.error for s in case.trace.all_samples() if s.error), "error")
            ET.SubElement(tc, "error", message=message, type="system-error").text = message
        elif case.answer_pass is False or case.id in worse:
            failures += 1
            reasons = list(case.problems) + [
                f"WORSE vs baseline: {w}" for w in worse.get(case.id, [])
            ]
            detail = [f"question: {case.question}", f"retrieval recall: {case.retrieval_recall}"]
            if case.cause:
                detail.append(
                    f"cause: {case.cause}"
                    + (f" ({case.cause_detail})" if case.cause_detail else "")
                )
            ET.SubElement(
                tc, "failure", message="; ".join(reasons), type="answer"
            ).text = "\n".join(detail)
        ET.SubElement(tc, "system-out").text = f"Q: {case.question}\nA: {case.trace.answer or ''}"
    suite.set("tests", str(len(run.cases)))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("timestamp", run.created_at)
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
