"""``ragrail label``: the labelling page (validate the judge, or make golden cases)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ragrail.cli.common import OUT_PATH, PATH, RUN_REFS, with_options
from ragrail.cli.judge import _overrides, judge_options
from ragrail.cli.ui import Out, output_options
from ragrail.errors import EXIT_OK, EXIT_SYSTEM, InputError

if TYPE_CHECKING:
    from ragrail.app.label import Labelling


@click.command("label", context_settings=RUN_REFS)
@click.option(
    "--labeller", required=True, metavar="NAME", help="Who labels (one name per session)."
)
@click.option(
    "--run",
    "run_ref",
    help="Validate the judge on this run's judged answers: an id, latest, -N, or a results .json.",
)
@click.option(
    "--labels",
    "labels_path",
    type=OUT_PATH,
    help="With --run: the labels file to write (CSV or JSONL, one per labeller), read by "
    "`judge validate --labels`.",
)
@click.option(
    "--compare",
    type=PATH,
    multiple=True,
    help="With --run: another labeller's labels file; prints Cohen's kappa between people "
    "beside the judge's, and the answers they disagree on.",
)
@click.option("--sample", type=PATH, help="Make golden cases of a `ragrail sample -o` file.")
@click.option(
    "--from-logs",
    type=click.IntRange(min=1),
    metavar="N",
    help="Make golden cases of N conversations drawn from the log database as `sample` draws.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --from-logs' draw.")
@click.option("--db", type=PATH, help="The log database for --from-logs.")
@click.option(
    "--golden", "-g", type=PATH, help="The golden set to add to (default: the project's)."
)
@with_options(judge_options)
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to serve on.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=0, help="The port (default: any free)."
)
@click.option("--allow-remote", is_flag=True, help="Allow a --host beyond this machine.")
@click.option("--open", "open_browser", is_flag=True, help="Open the page in the browser.")
@output_options()
def label(
    labeller: str,
    run_ref: str | None,
    labels_path: Path | None,
    compare: tuple[Path, ...],
    sample: Path | None,
    from_logs: int | None,
    seed: int,
    db: Path | None,
    golden: Path | None,
    config: Path | None,
    example: str | None,
    judge: str | None,
    judge_model: str | None,
    judge_base_url: str | None,
    host: str,
    port: int,
    allow_remote: bool,
    open_browser: bool,
    **calls: Any,
) -> int:
    """Label in the browser: validate the judge, or make golden cases.

    \b
      ragrail label --run results.json --labels labels.csv --labeller ana
      ragrail label --sample label.csv --golden golden.json --labeller ana

    Serves a page on 127.0.0.1 behind a random token (the URL is printed). With --run,
    each judged answer is labelled per criterion (p/f, or 1-5), the judge's verdict
    shown only after; finishing (q) runs `judge validate` on the labels and prints the
    corrected totals' new interval. With --sample (or --from-logs N), select text and
    press f to make it a fact, 1-9 to take a passage's document as the source, Enter to
    append the case to the golden set. Keys: j/k move, u undo, q finish.

    Every label is written as it is given (a crash or Ctrl-C loses nothing); starting
    again skips what is already in the file. Only the labels file or the golden set
    given is written (and, as `judge validate` and `add --from-log` do, the history
    and the log database).
    """
    from ragrail.app.label import start_golden, start_validation

    validating = run_ref is not None or labels_path is not None or bool(compare)
    if validating == (sample is not None or from_logs is not None):
        raise InputError("give --run and --labels (validate the judge), or --sample / --from-logs")
    out = Out()
    if validating:
        if run_ref is None or labels_path is None:
            raise InputError("validating the judge needs both --run and --labels")
        session = start_validation(
            labels_path,
            labeller,
            run_ref,
            config,
            example,
            _overrides(judge, judge_model, judge_base_url, calls),
            compare,
            host,
            port,
            allow_remote,
        )
        what, where = "answers", labels_path
    else:
        session = start_golden(
            golden, labeller, sample, from_logs, seed, db, config, host, port, allow_remote
        )
        what, where = "conversations", golden or Path("the golden set")
    left = session.total - session.done_before
    click.echo(
        f"Labelling {left} of {session.total} {what} ({session.done_before} done before) into "
        f"{where}.\nOpen {session.url}\nCtrl-C stops; every label is saved as it is given."
    )
    if open_browser:
        click.launch(session.url)
    result = session.serve()
    if result is None:
        return EXIT_OK
    return _finished(out, session, result)


def _finished(out: Out, session: Labelling, result: dict[str, Any]) -> int:
    from ragrail.label.agreement import lines as people_lines
    from ragrail.text.guard import visible

    if session.mode == "golden":
        for line in result["lines"]:
            out.say(line)
        out.verdict(f"Added {len(result['added'])} case(s). Check them with `ragrail lint`.")
        return EXIT_OK
    from ragrail.cli.judge import _print_agreement

    assert session.checked is not None
    checked = session.checked
    validation = checked.validation
    for a in validation.agreements:
        _print_agreement(out, checked.judge.label, validation.left_out_of(a.criterion), a)
        c = session.corrected.get(f"judge_{a.criterion}")
        if c is not None and c.low is not None and c.high is not None:
            halve = (
                f"; {c.labels_to_halve} more labels would halve it"
                if c.labels_to_halve is not None
                else ""
            )
            out.say(
                f"  corrected total   {c.measure} {c.estimate:.0%} [{c.low:.0%}, {c.high:.0%}] "
                f"({c.method}, {c.n_labelled} labels; judge alone {c.raw:.0%}){halve}"
            )
    for p in session.people:
        for line in people_lines(p):
            out.say(line)
    for case_id, criterion, why in validation.failed:
        out.say(f"  JUDGE ERROR {visible(case_id)} ({visible(criterion)}): {visible(why)}")
    if validation.failed:
        click.echo(
            f"ragrail: the judge failed on {len(validation.failed)} labelled case(s); "
            "nothing was stored; exit 3",
            err=True,
        )
        return EXIT_SYSTEM
    stored = sum(1 for s in checked.stored if s is not None)
    out.verdict(f"Validated the judge on your labels; stored {stored} criterion/criteria.")
    return EXIT_OK
