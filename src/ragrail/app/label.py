"""``ragrail label``, as library functions: :func:`start_validation` (a run's judged
answers labelled into a labels file; finishing runs ``judge validate`` on it and
corrects the run's judged totals with the new labels) and :func:`start_golden` (a
sample of logged conversations made into golden cases). Each returns a
:class:`Labelling` whose :meth:`~Labelling.serve` serves the page until it is finished;
nothing here prints.

Files written: the labels file or the golden set named at the start (and, as
``judge validate`` and ``add --from-log`` do, the validation in the run history and a
case's origin in the log database it was drawn from).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragrail.errors import InputError

if TYPE_CHECKING:
    from ragrail.app.judge import LabelValidation
    from ragrail.flags import Overrides
    from ragrail.label.agreement import PeopleAgreement
    from ragrail.label.queue import JudgedItem
    from ragrail.label.server import LabelServer
    from ragrail.records.results import Corrected


@dataclass
class Labelling:
    """A labelling session ready to serve: how much of its queue was done before, and,
    once finished, what finishing found."""

    server: LabelServer
    mode: str  # validate or golden
    total: int
    done_before: int
    checked: LabelValidation | None = None
    corrected: dict[str, Corrected] = field(default_factory=dict)
    people: list[PeopleAgreement] = field(default_factory=list)
    added: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.server.url

    def serve(self) -> dict[str, Any] | None:
        """Serve until the page finishes (None when interrupted: labels already saved)."""
        return self.server.serve()


def _name(labeller: str) -> str:
    name = labeller.strip()
    if not name or any(not ch.isprintable() for ch in name) or len(name) > 80:
        raise InputError("--labeller: a name of 1-80 printable characters")
    return name


def _host(host: str, allow_remote: bool) -> str:
    from ragrail.label.server import LOOPBACK

    if host not in LOOPBACK and not allow_remote:
        raise InputError(
            f"--host {host}: the page serves labels to anyone who reaches it with the token; "
            "add --allow-remote to serve beyond this machine"
        )
    return host


def start_validation(
    labels_path: Path,
    labeller: str,
    run_ref: str = "latest",
    config: Path | None = None,
    example: str | None = None,
    overrides: Overrides | None = None,
    compare: Sequence[Path] = (),
    host: str = "127.0.0.1",
    port: int = 0,
    allow_remote: bool = False,
) -> Labelling:
    """Label the judged answers of ``run_ref`` (an id, latest, -N or a results .json)
    into ``labels_path`` (CSV or JSONL); answers already labelled there are skipped.
    ``compare``: other people's labels files, for the agreement between people."""
    from ragrail.app.judge import _project, judge_for, load_run_ref, results_file
    from ragrail.label.page import render_page
    from ragrail.label.queue import judged_items
    from ragrail.label.server import LabelServer
    from ragrail.label.sessions import ValidationSession
    from ragrail.label.storage import LabelsFile
    from ragrail.outputs import guard_outputs

    name = _name(labeller)
    project = _project(config, example)
    reads = [
        (results_file(run_ref), "the results file"),
        *((p, "--compare labels") for p in compare),
    ]
    guard_outputs([(labels_path, "labels file")], project, reads)
    if labels_path.suffix.lower() not in (".csv", ".jsonl"):
        raise InputError("the labels file is .csv or .jsonl", str(labels_path))
    run = load_run_ref(run_ref, project)
    judge = judge_for(project, overrides)  # before serving: no judge, no validation at the end
    items = judged_items(run, judge.config.criteria)
    labels = LabelsFile.open(labels_path, name)
    _check_labels_fit(labels, items)
    others = [LabelsFile.open(p, "") for p in compare] if compare else []
    done_before = sum(1 for it in items if it.key in labels.done())
    holder: list[Labelling] = []

    def on_finish() -> dict[str, Any]:
        return _finish_validation(
            holder[0], labels_path, run_ref, config, example, overrides, others, items
        )

    session = ValidationSession(items, labels, on_finish)
    title = f"ragrail label: {name} validates the judge"
    server = LabelServer(
        session,
        lambda nonce, token: render_page(nonce, token, title),
        host=_host(host, allow_remote),
        port=port,
    )
    holder.append(Labelling(server, "validate", len(items), done_before))
    return holder[0]


def _check_labels_fit(labels: Any, items: Sequence[JudgedItem]) -> None:
    """A label already in the file for an answer the queue lacks would fail the
    validation at the end; say so now."""
    keys = {it.key for it in items}
    cases = {it.case_id for it in items}
    for case_id, criterion in labels.done():
        if (case_id, criterion) not in keys:
            what = "answer" if case_id in cases else "case"
            raise InputError(
                f"the labels file labels {what} {case_id!r} ({criterion}), which the run has no "
                "judged answer for; label another run, or use another labels file",
                str(labels.path),
            )


def _finish_validation(
    session: Labelling,
    labels_path: Path,
    run_ref: str,
    config: Path | None,
    example: str | None,
    overrides: Overrides | None,
    others: Sequence[Any],
    items: Sequence[JudgedItem],
) -> dict[str, Any]:
    """``judge validate`` on the labels, the run's judged totals corrected with them, and
    people's agreement: the page's summary (the CLI prints the same from ``session``)."""
    from ragrail.app import corrected_totals
    from ragrail.app.judge import _project, load_run_ref, validate_with_labels
    from ragrail.label.storage import LabelsFile

    checked = validate_with_labels(labels_path, run_ref, config, example, overrides)
    project = _project(config, example)
    run = load_run_ref(run_ref, project)
    session.checked = checked
    if not checked.validation.failed:
        session.corrected = corrected_totals(
            checked.judge, run, project.state_dir / "history.sqlite"
        )
    mine = LabelsFile.open(labels_path, "")
    session.people = people_agreement(mine, others, items)
    return summary(session)


def people_agreement(
    mine: Any, others: Sequence[Any], items: Sequence[JudgedItem]
) -> list[PeopleAgreement]:
    """This labeller against each other labeller, per criterion, on the answers both labelled."""
    from ragrail.judge.validate import _verdict
    from ragrail.label.agreement import agreement

    scale = {it.criterion: it.scale for it in items}
    judge = {it.key: it.judge for it in items}
    out = []

    def who(f: Any) -> str:
        return next((str(r.get("labeller")) for r in f.rows if r.get("labeller")), str(f.path))

    for other in others:
        a, b = mine.done(), other.done()
        for criterion in sorted({c for _, c in a} & {c for _, c in b}):
            first = {k[0]: _verdict(v, "") for k, v in a.items() if k[1] == criterion}
            second = {k[0]: _verdict(v, "") for k, v in b.items() if k[1] == criterion}
            verdicts = {k[0]: v for k, v in judge.items() if k[1] == criterion}
            out.append(
                agreement(
                    criterion,
                    scale.get(criterion, "pass_fail"),
                    (who(mine), who(other)),
                    first,
                    second,
                    verdicts,
                )
            )
    return out


def summary(session: Labelling) -> dict[str, Any]:
    """What the page shows when the validation queue is finished: one line per figure, and
    the figures themselves per criterion."""
    from ragrail.label.agreement import lines as people_lines
    from ragrail.text.guard import visible

    assert session.checked is not None
    v = session.checked.validation
    out: list[str] = []
    criteria = []
    for a in v.agreements:
        c = session.corrected.get(f"judge_{a.criterion}")
        score = a.kappa if a.kappa is not None else a.spearman
        kind = "Cohen's kappa" if a.scale == "pass_fail" else "Spearman"
        out.append(
            f"{visible(a.criterion)}: {a.n} labels, agreement "
            f"{'-' if a.agreement is None else f'{a.agreement:.0%}'}, {kind} "
            f"{'-' if score is None else f'{score:.2f}'}"
        )
        if c is not None and c.low is not None and c.high is not None:
            out.append(
                f"  corrected {c.measure}: {c.estimate:.0%} [{c.low:.0%}, {c.high:.0%}] "
                f"({c.method}, {c.n_labelled} labels, judge alone {c.raw:.0%})"
            )
        halve = c.labels_to_halve if c is not None else a.labels_to_halve
        if halve is not None:
            out.append(f"  {halve} more labels would halve it")
        criteria.append(
            {
                "criterion": visible(a.criterion),
                "n": a.n,
                "agreement": None if a.agreement is None else round(a.agreement, 4),
                "kappa": None if a.kappa is None else round(a.kappa, 4),
                "spearman": None if a.spearman is None else round(a.spearman, 4),
                "labels_to_halve": halve,
                "corrected": None
                if c is None or c.low is None or c.high is None
                else f"{c.estimate:.4f} [{c.low:.4f}, {c.high:.4f}]",
            }
        )
    if v.failed:
        out.append(f"the judge failed on {len(v.failed)} labelled answer(s): nothing was stored")
    for p in session.people:
        out += people_lines(p)
    return {"mode": "validate", "lines": out, "criteria": criteria}


def start_golden(
    golden: Path | None,
    labeller: str,
    sample: Path | None = None,
    from_logs: int | None = None,
    seed: int = 0,
    db: Path | None = None,
    config: Path | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    allow_remote: bool = False,
) -> Labelling:
    """Make golden cases of the conversations in ``sample`` (a ``ragrail sample -o``
    file) or of ``from_logs`` conversations drawn from the log database as ``sample``
    draws them; appended to ``golden`` (default: the project's)."""
    from ragrail.app.logs import log_database, logs_project, open_logs
    from ragrail.label.page import render_page
    from ragrail.label.queue import from_conversation, sample_items
    from ragrail.label.server import LabelServer
    from ragrail.label.sessions import GoldenSession
    from ragrail.label.storage import GoldenFile
    from ragrail.outputs import guard_outputs
    from ragrail.system.corpus import load_documents

    name = _name(labeller)
    if (sample is None) == (from_logs is None):
        raise InputError("give one of --sample FILE or --from-logs N")
    project = logs_project(config)
    path = golden or project.golden
    guard_outputs([], project, [(sample, "the sample file")])
    if sample is not None and path.resolve() == sample.resolve():
        raise InputError("the golden set and the sample are one file", str(path))
    gold = GoldenFile(path)
    gold.load()  # exit 2 now for a missing or broken golden set, not at the first case
    on_added = None
    if sample is not None:
        items = sample_items(sample)
    else:
        from ragrail.online.reask import reasked_ids
        from ragrail.online.sample import draw

        assert from_logs is not None
        if from_logs < 1:
            raise InputError(f"--from-logs {from_logs}: draw at least 1 conversation")
        logs = project.config.logs
        with open_logs(project, db) as store:
            reasked = reasked_ids(
                store.conversations(None), logs.reask_minutes, logs.reask_similarity
            )
            drawn = draw(store.conversations(None), from_logs, seed, reasked)
        items = [from_conversation(d.conversation, d.stratum) for d in drawn]
        if not items:
            raise InputError("the log database holds no conversations")
        database = log_database(project, db)

        def on_added(case_id: str, item: Any) -> None:
            import os
            import time

            from ragrail.online.store import LogStore

            with LogStore(database, create=False) as store:
                store.record_golden(case_id, item.id, os.path.realpath(path), time.time())

    documents = {}
    if project.docs.is_dir():
        documents = {d.name: d.text for d in load_documents(project.docs)}
    session = GoldenSession(
        items, gold, documents, project.config.pipeline.language, on_added, labeller=name
    )
    done_before = sum(1 for it in session.state()["items"] if it["case"] is not None)
    title = f"ragrail label: {name} makes golden cases"
    server = LabelServer(
        session,
        lambda nonce, token: render_page(nonce, token, title),
        host=_host(host, allow_remote),
        port=port,
    )
    out = Labelling(server, "golden", len(items), done_before)
    return out
