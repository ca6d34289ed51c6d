"""``ragrail judge validate`` and ``ragrail judge pairwise``: checking the LLM judge."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ragrail.cli.common import CONTEXT, PATH, RUN_REFS, json_option, with_options
from ragrail.cli.run_options import judge_call_options
from ragrail.cli.ui import Out, output_options
from ragrail.errors import EXIT_OK, EXIT_SYSTEM

if TYPE_CHECKING:
    from ragrail.flags import Overrides
    from ragrail.judge.validate import Agreement


@click.group("judge", context_settings=CONTEXT)
def judge_group() -> None:
    """Check the LLM judge: validate it against human labels, compare two runs pairwise."""


judge_options = [
    click.option("--config", "-c", type=PATH, help="Project file."),
    click.option("--example", metavar="NAME", help="A bundled example's project."),
    click.option(
        "--judge",
        type=click.Choice(["claude", "anthropic", "openai"]),
        help="The judge (default: the config's [judge]).",
    ),
    click.option("--judge-model", metavar="NAME", help="The judge's model."),
    click.option("--judge-base-url", metavar="URL", help="The judge's API base URL."),
    *judge_call_options(),
]


def _overrides(
    judge: str | None, judge_model: str | None, judge_base_url: str | None, calls: dict[str, Any]
) -> Overrides:
    """The judge flags as overrides of the project's [judge]; ``calls``: judge_concurrency,
    judge_timeout, judge_max_retries, judge_rpm, judge_tpm (None: the config's)."""
    from ragrail.flags import Overrides

    return Overrides(judge=judge, judge_model=judge_model, judge_base_url=judge_base_url, **calls)


def _p_text(p: float) -> str:
    """A p-value to print after its test's name: 3 decimals, or 2 significant digits in
    scientific notation below 0.001 (never "0.000")."""
    return f"{p:.2g}" if p < 0.001 else f"{p:.3f}"


def _pct_ci(value: float | None, ci: tuple[float, float] | None) -> str:
    if value is None:
        return "-"
    interval = f"  [{ci[0]:.0%}, {ci[1]:.0%}]" if ci else ""
    return f"{value:.0%}{interval}"


def _bias(a: Agreement) -> str:
    """The mean of judge - human with its 95% t interval: points of the pass rate, or of
    the 1-5 score."""
    if a.bias is None:
        return "-"
    pf = a.scale == "pass_fail"

    def fmt(v: float) -> str:
        return f"{v * 100:+.0f}" if pf else f"{v:+.2f}"

    ci = f"  [{fmt(a.bias_ci[0])}, {fmt(a.bias_ci[1])}]" if a.bias_ci else ""
    unit = "points of the pass rate" if pf else "score points"
    return f"{fmt(a.bias)}{ci}  ({unit}, judge - people; + is lenient; n={a.n})"


@judge_group.command("validate", context_settings=RUN_REFS)
@click.option(
    "--labels",
    "-l",
    "labels_path",
    type=PATH,
    required=True,
    help="Human verdicts: CSV or JSONL with case_id, criterion, verdict (pass/fail or 1-5).",
)
@click.option(
    "--run",
    "run_ref",
    default="latest",
    show_default=True,
    help="The run whose answers to judge: an id, latest, -N, or a results .json file.",
)
@with_options(judge_options)
@json_option("the agreement per criterion")
@output_options()
def judge_validate(
    labels_path: Path,
    run_ref: str,
    config: Path | None,
    example: str | None,
    judge: str | None,
    judge_model: str | None,
    judge_base_url: str | None,
    json_path: Path | None,
    **calls: Any,
) -> int:
    """Measure the judge against human labels, and store the result.

    Prints agreement, Cohen's kappa (Spearman for 1-5 scales), the true-positive
    and true-negative rates, the confusion matrix, the judge's bias (the mean of
    judge - human, a paired t interval), each with a 95% interval, and the
    disagreements to read, and how many more labels would halve the interval of a
    corrected total. A run may gate on a judge criterion only after a validation
    of that judge (model, prompt and rubric) with kappa of at least [judge]
    min_kappa (0.6). Once stored, later `ragrail run --judge` runs report each
    judged total corrected by these labels (classic PPI on a run other than the
    labelled one, PPI++ on the labelled run), with its interval and label count,
    beside the judge's raw figure.

    Labels are on the criterion's scale: pass/fail for a pass/fail criterion and
    for faithfulness, a score 1-5 for a 1-5 criterion.

    A labelled case the judge failed on, or gave no verdict for, is left out of
    the agreement (never counted as "fail") and listed; when the judge failed on
    any, nothing is stored and the exit code is 3.
    """
    from ragrail.app.judge import validate_with_labels
    from ragrail.text.guard import visible

    checked = validate_with_labels(
        labels_path,
        run_ref,
        config,
        example,
        _overrides(judge, judge_model, judge_base_url, calls),
        json_path,
    )
    out = Out(json_path)
    validation, label, min_kappa = checked.validation, checked.judge.label, checked.min_kappa
    for a, stored in zip(validation.agreements, checked.stored, strict=True):
        _print_agreement(out, label, validation.left_out_of(a.criterion), a)
        if validation.failed:
            continue  # a validation over the cases the judge managed is not stored
        if stored is None:
            out.say("  not stored: no labelled case has a judge verdict to compare")
            continue
        score = a.kappa if a.kappa is not None else a.spearman
        gates = (
            f"gates on {visible(repr(a.criterion))} are allowed"
            if stored.gates_allowed
            else f"below min_kappa {min_kappa}: gates stay refused"
        )
        out.say(f"  stored as validation {stored.id} (judge key {stored.judge_key}); {gates}")
        if out.quiet:
            shown = "-" if score is None else f"{score:.2f}"
            out.verdict(f"{visible(a.criterion)}: {shown} over {a.n} labels; {gates}")
    for case_id, criterion, why in validation.left_out:
        out.say(f"  left out {visible(case_id)} ({visible(criterion)}): {visible(why)}")
    for case_id, criterion, why in validation.failed:
        out.say(f"  JUDGE ERROR {visible(case_id)} ({visible(criterion)}): {visible(why)}")
    out.json(checked.json_data(), json_path, "--json validation")
    if validation.failed:
        click.echo(
            f"ragrail: the judge failed on {len(validation.failed)} labelled case(s) (listed "
            "above); the agreement shown leaves them out and was not stored; exit 3",
            err=True,
        )
        return EXIT_SYSTEM
    return EXIT_OK


def _to_halve(a: Agreement) -> str:
    """What more labels would buy a run the size of the validated one (PPI++)."""
    if a.labels_to_halve is not None:
        return (
            f"{a.labels_to_halve} more would halve the interval of a corrected total "
            f"(a run of {a.run_size} answers)"
        )
    if a.n < 2:
        return "label at least 2 answers for a corrected total to have an interval"
    return f"more labels alone would not halve a corrected interval (a run of {a.run_size} answers)"


def _print_agreement(out: Out, label: str, skipped: int, a: Agreement) -> None:
    from ragrail.text.guard import visible

    out.say(
        f"Judge {visible(label)} vs {a.n} human labels: criterion "
        f"{visible(repr(a.criterion))} ({a.scale})"
    )
    if skipped:
        out.say(f"  left out          {skipped} labelled case(s) with no verdict (below)")
    out.say(f"  agreement         {_pct_ci(a.agreement, a.agreement_ci)}")
    if a.scale == "pass_fail":
        ci = f"  [{a.kappa_ci[0]:.2f}, {a.kappa_ci[1]:.2f}]" if a.kappa_ci else ""
        out.say(f"  Cohen's kappa     {'-' if a.kappa is None else f'{a.kappa:.2f}'}{ci}")
        out.say(
            f"  true positive     {_pct_ci(a.tpr, a.tpr_ci)}  "
            f"(judge passes what people pass; n={a.tpr_n})"
        )
        out.say(
            f"  true negative     {_pct_ci(a.tnr, a.tnr_ci)}  "
            f"(judge fails what people fail; n={a.tnr_n})"
        )
        m = a.confusion or dict.fromkeys(("hp_jp", "hp_jf", "hf_jp", "hf_jf"), 0)  # no labels
        out.say("  confusion         judge pass  judge fail")
        out.say(f"    people pass     {m['hp_jp']:>10}  {m['hp_jf']:>10}")
        out.say(f"    people fail     {m['hf_jp']:>10}  {m['hf_jf']:>10}")
    else:
        ci = f"  [{a.spearman_ci[0]:.2f}, {a.spearman_ci[1]:.2f}]" if a.spearman_ci else ""
        out.say(f"  Spearman          {'-' if a.spearman is None else f'{a.spearman:.2f}'}{ci}")
    out.say(f"  judge bias        {_bias(a)}")
    out.say(f"  more labels       {_to_halve(a)}")
    if a.disagreements:
        out.say(f"  disagreements ({len(a.disagreements)}), worth reading:")

        def word(v: float) -> str:
            return ("pass" if v else "fail") if a.scale == "pass_fail" else f"{v:g}"

        for case_id, human, verdict, reason in a.disagreements:
            out.say(
                f"    {visible(case_id)}: people {word(human)}, judge {word(verdict)}"
                + (f": {visible(reason)}" if reason else "")
            )


@judge_group.command("pairwise", context_settings=RUN_REFS)
@click.argument("run_a", metavar="RUN_A")
@click.argument("run_b", metavar="RUN_B")
@with_options(judge_options)
@json_option("the verdicts and counts")
@output_options()
def judge_pairwise(
    run_a: str,
    run_b: str,
    config: Path | None,
    example: str | None,
    judge: str | None,
    judge_model: str | None,
    judge_base_url: str | None,
    json_path: Path | None,
    **calls: Any,
) -> int:
    """Which run answers better, per question, with the answers shown in both orders.

    RUN_A and RUN_B are run ids (latest, -N) or results .json files. Only verdicts
    that agree across the swap count (a judge that prefers whatever comes first
    cannot decide); prints wins, ties, losses, the swap-disagreement rate and an
    exact sign test. A question that errored in either run, or that the judge
    failed on, is listed with its reason, and the exit code is 3.
    """
    from ragrail.app.judge import judge_pairwise as compare_runs
    from ragrail.reports.terminal import usage_cost
    from ragrail.text.guard import visible

    readout = compare_runs(
        run_a,
        run_b,
        config,
        example,
        _overrides(judge, judge_model, judge_base_url, calls),
        json_path,
    )
    out = Out(json_path)
    result, the_judge = readout.result, readout.judge
    out.json(readout.json_data(), json_path, "--json verdicts")
    out.say(
        f"Pairwise: B ({visible(run_b)}) vs A ({visible(run_a)}), judged by "
        f"{visible(the_judge.label)}, {result.n} questions"
    )
    for case_id, verdict in result.per_case:
        out.say(f"  {visible(case_id):<24}{visible(verdict)}")
    if result.unmatched:
        out.say(f"  not in both runs (not compared): {visible(', '.join(result.unmatched))}")
    rate = "-" if result.swap_rate is None else f"{result.swap_rate:.0%}"
    out.verdict(
        f"  B better {result.wins}, ties {result.ties}, A better {result.losses}; "
        f"changed with the order {result.swap_disagreements} ({rate}); errors {result.errors}"
    )
    out.say(
        "  B vs A, ties and order-dependent verdicts left out: "
        f"exact sign test p={_p_text(result.sign_test_p)}"
    )
    u = the_judge.usage
    out.say(
        f"  judge calls {u.calls} made, {u.cached} cached, {u.errors} failed; cost {usage_cost(u)}"
    )
    if result.errored:
        click.echo(
            f"ragrail: {len(result.errored)} question(s) not compared: they errored in a run "
            "or the judge failed on them (listed as ERROR above); exit 3",
            err=True,
        )
        return EXIT_SYSTEM
    return EXIT_OK
