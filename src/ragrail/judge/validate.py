"""Judge validation: human labels, and the judge's agreement with them (Cohen's kappa,
Spearman, true-positive and true-negative rates, the judge's bias, each with a 95% interval)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragrail.errors import InputError
from ragrail.records.results import CaseResult, RunResult

if TYPE_CHECKING:
    from ragrail.judge.config import CriterionConfig
    from ragrail.judge.core import Judge

LABEL_COLUMNS = ("case_id", "criterion", "verdict")


@dataclass(frozen=True)
class Label:
    case_id: str
    criterion: str
    human: float  # 1/0 for pass/fail, or a 1-5 score
    line: int
    file: str = ""  # the labels file, for errors
    word: bool = False  # written as pass/fail (yes/no, true/false), not as a number


def load_labels(path: Path) -> list[Label]:
    """Human verdicts from CSV (columns case_id, criterion, verdict) or JSONL (same keys).
    A verdict is pass/fail (also yes/no, true/false, 1/0) or a score from 1 to 5.

    Read as strictly as a golden set: a JSONL line must be one JSON object (strict JSON:
    no NaN, no key twice) and a CSV row may not have an unterminated quote or more
    fields than the header, and a case is labelled once per criterion; each is exit 2
    naming the line."""
    from ragrail.fileio import read_text

    text = read_text(path, "labels file")
    if path.suffix.lower() == ".jsonl":
        rows = _jsonl_label_rows(text, path)
    else:
        rows = _csv_label_rows(text, path)
    labels = []
    first: dict[tuple[str, str], int] = {}
    for row, n in rows:
        where = f"{path}:{n}"
        for key in LABEL_COLUMNS:
            if row.get(key) in (None, ""):
                raise InputError(f"missing {key!r}", where)
        for key in ("case_id", "criterion"):
            if not isinstance(row[key], str):
                raise InputError(f"field {key!r} must be a string", where)
        # a labelled answer counted twice would narrow every interval built on the labels
        seen = first.setdefault((row["case_id"], row["criterion"]), n)
        if seen != n:
            raise InputError(
                f"case {row['case_id']!r} is labelled twice for criterion "
                f"{row['criterion']!r} (first at line {seen}); keep one verdict per answer",
                where,
            )
        labels.append(
            Label(
                str(row["case_id"]),
                str(row["criterion"]),
                _verdict(row["verdict"], where),
                n,
                str(path),
                _is_word(row["verdict"]),
            )
        )
    if not labels:
        raise InputError("no labels", str(path))
    return labels


def _jsonl_label_rows(text: str, path: Path) -> list[tuple[dict[str, Any], int]]:
    from ragrail.jsonio import parse_json

    rows = []
    for n, line in enumerate(text.removeprefix("\ufeff").split("\n"), start=1):
        if line.strip():
            row = parse_json(line, path, line=n)
            if not isinstance(row, dict):
                raise InputError(
                    f"expected a JSON object with {', '.join(LABEL_COLUMNS)}, "
                    f"got {_json_kind(row)}",
                    f"{path}:{n}",
                )
            rows.append((row, n))
    return rows


def _json_kind(value: Any) -> str:
    kinds = {list: "an array", str: "a string", bool: "true or false", type(None): "null"}
    return kinds.get(type(value), "a number")


def _csv_label_rows(text: str, path: Path) -> list[tuple[dict[str, Any], int]]:
    import csv

    from ragrail.golden import _csv_reader

    reader = _csv_reader(text.removeprefix("\ufeff"))
    rows: list[tuple[dict[str, Any], int]] = []
    names: list[str] | None = None
    start = 1
    while True:
        try:
            row = next(reader, None)
        except csv.Error as exc:
            raise InputError(f"invalid CSV: {exc}", f"{path}:{start}") from None
        if row is None:
            break
        if names is None:
            names = [h.strip() for h in row]
            missing = [c for c in LABEL_COLUMNS if c not in names]
            if missing:
                raise InputError(f"missing column(s) {', '.join(missing)}", f"{path}:1")
        elif row:
            if len(row) > len(names):
                raise InputError(
                    f"CSV row has {len(row)} fields but the header has {len(names)} "
                    f"({', '.join(names)}); quote a cell that contains a comma",
                    f"{path}:{start}",
                )
            rows.append((dict(zip(names, row, strict=False)), start))
        start = reader.line_num + 1
    if names is None:
        raise InputError(f"missing column(s) {', '.join(LABEL_COLUMNS)}", f"{path}:1")
    return rows


def _verdict(value: Any, where: str) -> float:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    text = str(value).strip().lower()
    if text in ("pass", "yes", "true", "supported", "good"):
        return 1.0
    if text in ("fail", "no", "false", "unsupported", "bad"):
        return 0.0
    try:
        number = float(text)
    except ValueError:
        raise InputError(f"verdict {value!r}: use pass/fail or a score 1-5", where) from None
    if number not in (0, 1, 2, 3, 4, 5):
        raise InputError(f"verdict {value!r}: use pass/fail or a score 1-5", where)
    return number


@dataclass
class Agreement:
    """Judge vs people on one criterion."""

    criterion: str
    scale: str
    n: int
    agreement: float | None = None
    agreement_ci: tuple[float, float] | None = None
    kappa: float | None = None
    kappa_ci: tuple[float, float] | None = None
    spearman: float | None = None
    spearman_ci: tuple[float, float] | None = None
    tpr: float | None = None
    tpr_ci: tuple[float, float] | None = None
    tpr_n: int = 0
    tnr: float | None = None
    tnr_ci: tuple[float, float] | None = None
    tnr_n: int = 0
    confusion: dict[str, int] = field(default_factory=dict)  # hp_jp, hp_jf, hf_jp, hf_jf
    disagreements: list[tuple[str, float, float, str]] = field(default_factory=list)
    bias: float | None = None  # mean of (judge - human): a pass rate's points, or score points
    bias_ci: tuple[float, float] | None = None
    pairs: list[tuple[str, float, float]] = field(default_factory=list)  # case id, judge, human
    # more labels that would halve the corrected (PPI++) interval of a run of run_size answers
    labels_to_halve: int | None = None
    run_size: int = 0


def judge_bias(
    pairs: Sequence[tuple[float, float]], span: float = 1.0
) -> tuple[float, tuple[float, float] | None] | None:
    """The judge's bias over (judge, human) pairs, positive when the judge is more lenient
    than people: :func:`ragrail.judge.ppi.judge_bias` (mean of judge - human, 95% paired t
    interval); None without pairs, no interval with one."""
    if not pairs:
        return None
    from ragrail.judge.ppi import judge_bias as bias

    mean, low, high = bias([j for j, _ in pairs], [h for _, h in pairs], span=span)
    return mean, (None if low is None or high is None else (low, high))


def cohen_kappa(pairs: Sequence[tuple[int, int]]) -> float | None:
    """kappa = (p_o - p_e) / (1 - p_e), p_o the observed agreement and p_e the agreement
    expected by chance from each rater's own pass rate; None when p_e = 1."""
    n = len(pairs)
    if n == 0:
        return None
    po = sum(1 for h, j in pairs if h == j) / n
    ph = sum(h for h, _ in pairs) / n
    pj = sum(j for _, j in pairs) / n
    pe = ph * pj + (1 - ph) * (1 - pj)
    return None if pe == 1 else (po - pe) / (1 - pe)


def kappa_interval(pairs: Sequence[tuple[int, int]]) -> tuple[float, float] | None:
    """Cohen's kappa's 95% interval: the percentile bootstrap (2,000 resamples of the
    pairs, seeded), as the other agreement intervals are exact or Wilson.

    The bootstrap degenerates when every resample gives the same kappa (perfect
    agreement: each resample agrees perfectly too), and a zero-width [1.00, 1.00] would
    claim certainty from n labels. Then the interval is Wilson's interval of the
    agreement p_o mapped through kappa = (p_o - p_e)/(1 - p_e), increasing in p_o, with
    the chance agreement p_e held at its observed value (a conditional interval: the
    raters' own pass rates taken as given), intersected with [-1, 1]. At perfect
    agreement of n pairs the high end is 1 and the low end (L - p_e)/(1 - p_e) with
    L = n/(n + z²) Wilson's lower bound. None when kappa is undefined (p_e = 1)."""
    import numpy as np

    from ragrail.stats import BOOTSTRAP_SEED, wilson

    kappa = cohen_kappa(pairs)
    if kappa is None:
        return None
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    arr = np.asarray(pairs)
    boots = []
    for _ in range(2000):
        k = cohen_kappa([tuple(x) for x in arr[rng.integers(0, len(arr), len(arr))]])
        if k is not None:
            boots.append(k)
    if boots:
        lo, hi = (float(v) for v in np.percentile(boots, [2.5, 97.5]))
        if hi > lo:
            return lo, hi
    n = len(pairs)
    ph = sum(h for h, _ in pairs) / n
    pj = sum(j for _, j in pairs) / n
    pe = ph * pj + (1 - ph) * (1 - pj)
    iv = wilson(sum(1 for h, j in pairs if h == j), n)
    assert iv is not None  # n >= 1
    return max(-1.0, (iv.low - pe) / (1 - pe)), min(1.0, (iv.high - pe) / (1 - pe))


def spearman_interval(rho: float, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Spearman's rho's 95% interval by Fisher's z with the Bonett-Wright (2000)
    standard error for a rank correlation, SE = √((1 + rho²/2)/(n - 3)) (Pearson's
    1/√(n - 3) is too narrow for Spearman's): tanh(atanh(rho) ± z·SE). Needs n > 3 and
    |rho| < 1."""
    centre, se = math.atanh(rho), math.sqrt((1 + rho * rho / 2) / (n - 3))
    return math.tanh(centre - z * se), math.tanh(centre + z * se)


def agreement_stats(
    criterion: str, scale: str, items: Sequence[tuple[str, float, float, str]]
) -> Agreement:
    """items: (case id, human verdict, judge verdict, judge reason)."""
    from ragrail.stats import wilson

    def ci(iv: Any) -> tuple[float, float] | None:
        return (iv.low, iv.high) if iv is not None else None

    a = Agreement(criterion=criterion, scale=scale, n=len(items))
    if not items:
        return a
    a.pairs = [(c, j, h) for c, h, j, _ in items]
    span = 1.0 if scale == "pass_fail" else 4.0  # the largest judge - human difference
    a.bias, a.bias_ci = judge_bias([(j, h) for _, h, j, _ in items], span) or (None, None)
    if scale == "pass_fail":
        pairs = [(int(h), int(j)) for _, h, j, _ in items]
        agree = sum(1 for h, j in pairs if h == j)
        a.agreement, a.agreement_ci = agree / len(pairs), ci(wilson(agree, len(pairs)))
        a.kappa = cohen_kappa(pairs)
        a.kappa_ci = kappa_interval(pairs)
        hp = [j for h, j in pairs if h == 1]
        hf = [j for h, j in pairs if h == 0]
        a.tpr_n, a.tnr_n = len(hp), len(hf)
        if hp:
            a.tpr, a.tpr_ci = sum(hp) / len(hp), ci(wilson(sum(hp), len(hp)))
        if hf:
            a.tnr, a.tnr_ci = hf.count(0) / len(hf), ci(wilson(hf.count(0), len(hf)))
        a.confusion = {
            "hp_jp": sum(1 for h, j in pairs if h == 1 and j == 1),
            "hp_jf": sum(1 for h, j in pairs if h == 1 and j == 0),
            "hf_jp": sum(1 for h, j in pairs if h == 0 and j == 1),
            "hf_jf": sum(1 for h, j in pairs if h == 0 and j == 0),
        }
        a.disagreements = [it for it in items if int(it[1]) != int(it[2])]
    else:
        from scipy.stats import spearmanr

        hs = [h for _, h, _, _ in items]
        js = [j for _, _, j, _ in items]
        exact = sum(1 for h, j in zip(hs, js, strict=True) if h == j)
        a.agreement, a.agreement_ci = exact / len(items), ci(wilson(exact, len(items)))
        if len(set(hs)) > 1 and len(set(js)) > 1:
            rho = float(spearmanr(hs, js).statistic)
            a.spearman = rho
            if len(items) > 3 and abs(rho) < 1:
                a.spearman_ci = spearman_interval(rho, len(items))
        a.disagreements = [it for it in items if it[1] != it[2]]
    return a


@dataclass
class Validation:
    """A judge validation: agreement per criterion over the cases the judge gave a
    verdict for, and the labelled cases it did not (they are not counted as "fail")."""

    agreements: list[Agreement]
    failed: list[tuple[str, str, str]] = field(default_factory=list)  # id, criterion, error
    left_out: list[tuple[str, str, str]] = field(default_factory=list)  # id, criterion, why

    def left_out_of(self, criterion: str) -> int:
        return sum(1 for _, c, _ in [*self.failed, *self.left_out] if c == criterion)


def _no_verdict(case: CaseResult | None, criterion: str) -> tuple[str, str] | None:
    """Why a labelled case has no judge verdict on ``criterion``: ("failed", the judge's
    error) when its calls failed, ("left out", why) when there was nothing to judge."""
    j = case.judge if case is not None else None
    if case is None or j is None:
        if case is not None and case.errored:
            return "left out", "the run has no answer for it (the answer's call failed)"
        return "left out", "the run has no answer for it"
    prefix = "faithfulness" if criterion == "faithfulness" else "rubric"
    errors = [e for e in j.errors if e.startswith(prefix)]
    if errors:
        return "failed", "; ".join(errors)
    if criterion == "faithfulness":
        if j.faithfulness is None:
            return "left out", "the judge found no claim to check in the answer"
        return None
    if not any(x.name == criterion for x in j.criteria):
        return "left out", f"the judge gave no verdict on {criterion!r}"
    return None


def _check_scale(lb: Label, crit: CriterionConfig | None) -> None:
    """A verdict on the criterion's own scale: a score on a pass/fail criterion (or 0 on
    a 1-5 one) would be compared with a verdict of another kind."""
    where = f"{lb.file}:{lb.line}" if lb.file else f"line {lb.line}"
    if (crit is None or crit.scale == "pass_fail") and lb.human not in (0.0, 1.0):
        raise InputError(
            f"verdict {lb.human:g} on pass/fail criterion {lb.criterion!r}: use pass or fail", where
        )
    if crit is not None and crit.scale == "1-5" and (lb.word or lb.human == 0.0):
        shown = ("pass" if lb.human else "fail") if lb.word else "0"
        raise InputError(
            f"verdict {shown} on 1-5 criterion {lb.criterion!r}: use a score 1-5", where
        )


def _is_word(value: Any) -> bool:
    if isinstance(value, bool):
        return True
    try:
        float(str(value).strip())
    except ValueError:
        return True
    return False


def validate_judge(judge: Judge, run: RunResult, labels: Sequence[Label]) -> Validation:
    """Run the judge on the labelled cases of ``run`` and measure its agreement with people.

    A case the judge failed on (its call failed after the retries) or made no claim
    for is left out of the agreement, never counted as a "fail" verdict, and listed."""
    by_id = {c.id: c for c in run.cases}
    crit_by_name = {c.name: c for c in judge.config.criteria}
    strays = [lb for lb in labels if lb.case_id not in by_id]
    if strays:
        unknown_cases = sorted({lb.case_id for lb in strays})
        first = strays[0]  # the file and line to open
        raise InputError(
            f"labels name cases not in the run: {', '.join(unknown_cases[:5])}",
            f"{first.file}:{first.line}" if first.file else None,
        )
    unknown = sorted({lb.criterion for lb in labels} - set(crit_by_name) - {"faithfulness"})
    if unknown:
        raise InputError(
            f"labels name criterion {unknown[0]!r}, which is not in [judge] criteria "
            f"({', '.join(crit_by_name) or 'none'}) nor 'faithfulness'"
        )
    for lb in labels:
        _check_scale(lb, crit_by_name.get(lb.criterion))
    wanted = sorted({lb.case_id for lb in labels})
    subset = run.model_copy(deep=True)
    subset.cases = [by_id[i].model_copy(deep=True) for i in wanted]
    criteria_needed = {lb.criterion for lb in labels}
    original = judge.config
    judge.config = original.model_copy(
        update={
            "repeats": 1,
            "faithfulness": "faithfulness" in criteria_needed,
            "criteria": [c for c in original.criteria if c.name in criteria_needed],
        }
    )
    try:
        judge.judge_run(subset)
    finally:
        judge.config = original
    judged = {c.id: c for c in subset.cases}
    out = Validation(agreements=[])
    for criterion in sorted(criteria_needed):
        crit = crit_by_name.get(criterion)
        scale = crit.scale if crit else "pass_fail"
        items = []
        for lb in (x for x in labels if x.criterion == criterion):
            case = judged.get(lb.case_id)
            missing = _no_verdict(case, criterion)
            if missing is not None:
                kind, why = missing
                (out.failed if kind == "failed" else out.left_out).append(
                    (lb.case_id, criterion, why)
                )
                continue
            assert case is not None and case.judge is not None
            j = case.judge
            if criterion == "faithfulness":
                verdict = 1.0 if j.faithfulness == 1.0 else 0.0
                reason = "; ".join(c.text for c in j.claims if not c.supported)
            else:
                cr = next(x for x in j.criteria if x.name == criterion)
                verdict = (
                    (1.0 if cr.passed else 0.0) if scale == "pass_fail" else float(cr.score or 0)
                )
                reason = cr.reason
            items.append((lb.case_id, lb.human, verdict, reason))
        agreement = agreement_stats(criterion, scale, items)
        agreement.run_size = sum(1 for c in run.cases if not c.errored)
        agreement.labels_to_halve = _to_halve(agreement, crit)
        out.agreements.append(agreement)
    return out


def _to_halve(a: Agreement, crit: CriterionConfig | None) -> int | None:
    """Labels to halve the corrected interval of a run the size of the validated one, on
    the 0/1 verdicts a correction uses (``ragrail.judge.correct``)."""
    from ragrail.judge.correct import label_pairs
    from ragrail.judge.ppi import planned_labels_to_halve

    kept = label_pairs(a.pairs, crit)
    if not kept:
        return None
    return planned_labels_to_halve([p.judge for p in kept], [p.human for p in kept], a.run_size)
