"""The baseline diff and the verdict lines that end it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragrail.diff import Diff, error_phrases, flips_text, pct
from ragrail.diff.noise import family_text
from ragrail.text.guard import visible

if TYPE_CHECKING:
    pass
from ragrail.reports.terminal.layout import (
    cell_len,
    terminal_width,
    wrap,
)
from ragrail.reports.terminal.scorecard import (
    _errors_note,
)


def _moved(old: str, new: str) -> str:
    return f"{old} -> {new}" if old != new else f"{new} (unchanged)"


def _with_errors(text: str, count: int) -> str:
    return f"{text} ({_errors_note(count)})" if count else text


def diff_text(diff: Diff, width: int | None = None) -> str:
    """What changed against the baseline, every WORSE line whole (wrapped, never cut)."""
    w = width or terminal_width()
    b, r = diff.baseline.totals, diff.run.totals
    lines = wrap(f"vs baseline ({visible(diff.baseline.config.describe())}):", w, "    ")
    for setting in diff.config_changes:
        lines.extend(wrap(f"  changed: {visible(setting)}", w, subsequent="    "))
    hit, recall = _moved(pct(b.hit_rate), pct(r.hit_rate)), _moved(pct(b.recall), pct(r.recall))
    lines.append(f"  hit rate       {_with_errors(hit, r.n_retrieval_errors)}")
    lines.append(f"  recall         {_with_errors(recall, r.n_retrieval_errors)}")
    if diff.answers_compared:
        old, new = pct(b.answer_pass_rate), pct(r.answer_pass_rate)
        lines.append(f"  answers pass   {_with_errors(_moved(old, new), r.n_answer_errors)}")
        if diff.answer_flips is not None and (diff.answer_flips.worse or diff.answer_flips.better):
            flips = flips_text(diff.answer_flips)
            lines.extend(wrap(f"{' ' * 17}{flips}", w, subsequent=" " * 17))
        if diff.set_test is not None:
            for text in (diff.set_test.text(), family_text(diff.family, diff.n_tests, diff.floor)):
                lines.extend(wrap(f"{' ' * 17}{text}", w, subsequent=" " * 17))
    for name, (was, now) in diff.graded.items():
        if f"{was:.2f}" != f"{now:.2f}":  # shown when it moved: a pass rate may hide it
            lines.append(f"  {name:<14} {was:.2f} -> {now:.2f}")
    if b.prompt_tokens_mean is not None and r.prompt_tokens_mean is not None:
        old_t, new_t = str(round(b.prompt_tokens_mean)), str(round(r.prompt_tokens_mean))
        lines.append(f"  prompt tokens  {_moved(old_t, new_t)}")
    if diff.answers_note:
        lines.extend(wrap("  " + visible(diff.answers_note), w, subsequent="    "))
    if diff.judge_changes or diff.judge_notes:
        from ragrail.reports.judged import change_text

        for text in [*(change_text(ch) for ch in diff.judge_changes), *diff.judge_notes]:
            lines.extend(wrap("  judge: " + visible(text), w, subsequent="    "))
    if diff.new_cases:
        lines.extend(id_list("new (not in baseline)", diff.new_cases, w))
    if diff.removed_cases:
        lines.extend(id_list("removed (in baseline only)", diff.removed_cases, w))
    if diff.edited_cases:
        lines.extend(id_list("facts edited since the baseline", diff.edited_cases, w))
    for change in diff.changes:
        lines.extend(wrap("  " + visible(change.line()), w, subsequent=" " * 10))
    lines.append("")
    lines.extend(verdict_lines(diff, w))
    return "\n".join(lines)


def id_list(label: str, ids: Sequence[str], width: int, max_lines: int = 3) -> list[str]:
    """``label: a, b, c`` wrapped to at most ``max_lines`` lines; the ids that do not fit
    are counted (``and 117 more``), since a golden set of a hundred new ids is a count."""
    shown = [visible(i) for i in ids]
    lines = wrap(f"  {label}: {', '.join(shown)}", width, subsequent="    ")
    if len(lines) <= max_lines:
        return lines
    room = max_lines * (width - 4) - len(label) - 24  # leave room for ", and N more"
    kept, used = 0, 0
    while kept < len(shown) and used + cell_len(shown[kept]) + 2 <= room:
        used += cell_len(shown[kept]) + 2
        kept += 1
    while True:  # line ends waste a little: drop ids until the count fits whole
        text = f"  {label}: {', '.join([*shown[:kept], f'and {len(shown) - kept} more'])}"
        lines = wrap(text, width, subsequent="    ")
        if len(lines) <= max_lines or kept == 0:
            return lines
        kept -= 1


def verdict_lines(diff: Diff, width: int | None = None) -> list[str]:
    """The last words of a diff: what got worse, what errored; ``No regressions.`` only
    for a run where nothing got worse and nothing, the judge included, failed."""
    out = []
    n = len(diff.worse)
    w = width or terminal_width()
    if n:
        q = len({c.case_id for c in diff.worse})
        out.extend(
            wrap(
                f"{q} question{'s' if q != 1 else ''} got worse "
                f"({n} WORSE line{'s' if n != 1 else ''}): something that passed before fails now.",
                w,
            )
        )
    if diff.has_errors:
        phrases = "; ".join(
            error_phrases(len(diff.errored_cases), len(diff.errors), len(diff.judge_errored_cases))
        )
        out.extend(
            wrap(
                f"{phrases[0].upper()}{phrases[1:]}: a run with errors is never a pass "
                "(no baseline is saved from it).",
                w,
            )
        )
    return out or ["No regressions."]
