"""Agreement between people: two labellers' verdicts on the same answers, beside each
one's agreement with the judge, and the answers they disagree on (to adjudicate)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


def weighted_kappa(pairs: Sequence[tuple[float, float]], levels: Sequence[float]) -> float | None:
    """Cohen's quadratic-weighted kappa for ordinal scores (1-5):
    kappa_w = 1 - sum(w_ij * O_ij) / sum(w_ij * E_ij), w_ij = (i - j)² / (k - 1)², O the
    observed share of pairs in cell (i, j), E = row share x column share (chance).
    None when chance disagreement is 0 (both people gave one score throughout)."""
    n = len(pairs)
    k = len(levels)
    if n == 0 or k < 2:
        return None
    at = {v: i for i, v in enumerate(levels)}
    rows = [0.0] * k
    cols = [0.0] * k
    observed = 0.0
    for a, b in pairs:
        i, j = at[a], at[b]
        rows[i] += 1 / n
        cols[j] += 1 / n
        observed += (i - j) ** 2 / (k - 1) ** 2 / n
    expected = sum(
        (i - j) ** 2 / (k - 1) ** 2 * rows[i] * cols[j] for i in range(k) for j in range(k)
    )
    return None if expected == 0 else 1 - observed / expected


def kappa_of(pairs: Sequence[tuple[float, float]], scale: str) -> float | None:
    """Cohen's kappa for pass/fail (``ragrail.judge.validate.cohen_kappa``), the
    quadratic-weighted kappa for 1-5."""
    if scale == "pass_fail":
        from ragrail.judge.validate import cohen_kappa

        return cohen_kappa([(int(a), int(b)) for a, b in pairs])
    return weighted_kappa(pairs, [1.0, 2.0, 3.0, 4.0, 5.0])


@dataclass
class PeopleAgreement:
    """Two people on one criterion, over the answers both labelled."""

    criterion: str
    scale: str
    people: tuple[str, str]
    n: int
    agreement: float | None = None
    kappa: float | None = None  # between the two people
    kappa_ci: tuple[float, float] | None = None  # pass/fail only: validate's bootstrap
    judge_kappa: tuple[float | None, float | None] = (None, None)  # judge vs each person
    # case id, first person's verdict, second's, the judge's
    disagreements: list[tuple[str, float, float, float | None]] = field(default_factory=list)


def agreement(
    criterion: str,
    scale: str,
    people: tuple[str, str],
    first: Mapping[str, float],
    second: Mapping[str, float],
    judge: Mapping[str, float],
) -> PeopleAgreement:
    """``first`` and ``second``: case id -> each person's verdict; ``judge``: the judge's
    verdicts from the run (the kappas beside are over the same answers)."""
    shared = sorted(set(first) & set(second))
    out = PeopleAgreement(criterion, scale, people, len(shared))
    if not shared:
        return out
    pairs = [(first[c], second[c]) for c in shared]
    out.agreement = sum(1 for a, b in pairs if a == b) / len(pairs)
    out.kappa = kappa_of(pairs, scale)
    if scale == "pass_fail" and out.kappa is not None:
        from ragrail.judge.validate import kappa_interval

        out.kappa_ci = kappa_interval([(int(a), int(b)) for a, b in pairs])
    judged = [c for c in shared if c in judge]
    out.judge_kappa = (
        kappa_of([(judge[c], first[c]) for c in judged], scale),
        kappa_of([(judge[c], second[c]) for c in judged], scale),
    )
    out.disagreements = [
        (c, first[c], second[c], judge.get(c)) for c in shared if first[c] != second[c]
    ]
    return out


def lines(a: PeopleAgreement) -> list[str]:
    """The agreement as the terminal and the page print it."""
    from ragrail.text.guard import visible

    one, two = (visible(p) for p in a.people)

    def k(v: float | None) -> str:
        return "-" if v is None else f"{v:.2f}"

    def word(v: float | None) -> str:
        if v is None:
            return "-"
        return ("pass" if v else "fail") if a.scale == "pass_fail" else f"{v:g}"

    kind = "Cohen's kappa" if a.scale == "pass_fail" else "weighted kappa"
    ci = f" [{a.kappa_ci[0]:.2f}, {a.kappa_ci[1]:.2f}]" if a.kappa_ci else ""
    shown = "-" if a.agreement is None else f"{a.agreement:.0%}"
    out = [
        f"People on {visible(repr(a.criterion))}: {one} vs {two} over {a.n} shared answers",
        f"  agreement {shown}; {kind} {k(a.kappa)}{ci} between people; judge vs {one} "
        f"{k(a.judge_kappa[0])}, judge vs {two} {k(a.judge_kappa[1])}",
    ]
    if a.disagreements:
        out.append(f"  to adjudicate ({len(a.disagreements)}):")
        out += [
            f"    {visible(c)}: {one} {word(x)}, {two} {word(y)}, judge {word(j)}"
            for c, x, y, j in a.disagreements
        ]
    return out
