"""LLM-as-judge you can check: claim-level faithfulness, rubric grading, validation
against human labels, stability across repeats, and position-fair pairwise comparison.

Every judge call goes through the shared call layer (concurrent, cached, costed,
retried). Replies must be JSON of a fixed shape; a reply that does not parse is
re-asked at once with the parse error in a follow-up message (and structured JSON
output requested where the server supports it) and, if it still fails, recorded
as a judge error for that case: never a silent NaN, never a dropped row. Prompts are plain text files
(``judge_prompts/`` in the package) that a project can override with its own.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragrail.errors import InputError
from ragrail.results import CaseResult, CriterionResult, JudgeClaim, JudgeResult, RunResult, Usage

PROMPTS_DIR = Path(__file__).parent / "judge_prompts"
PROMPT_NAMES = ("claims", "rubric", "pairwise")


# ------------------------------------------------------------------ config


class CriterionConfig(BaseModel):
    """One rubric criterion: pass/fail, or a 1-5 scale that passes at ``pass_threshold``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    scale: Literal["pass_fail", "1-5"] = "pass_fail"
    pass_threshold: int = Field(default=4, ge=1, le=5)
    gate: bool = False  # a failing verdict fails the answer (needs a validated judge)


class JudgeConfig(BaseModel):
    """``[judge]`` in ragrail.toml. Writing the table (with a provider) turns the judge on."""

    model_config = ConfigDict(extra="forbid")

    provider: Literal["anthropic", "openai"] | None = None
    model: str | None = None
    base_url: str | None = None
    concurrency: int = Field(default=8, ge=1)
    timeout: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=2, ge=0)
    max_tokens: int = Field(default=1024, ge=1)
    temperature: float | None = Field(default=0.0, ge=0.0)
    repeats: int = Field(default=1, ge=1)
    faithfulness: bool = True  # claim-level faithfulness by the judge
    criteria: list[CriterionConfig] = Field(default_factory=list)
    min_kappa: float = Field(default=0.6, ge=-1.0, le=1.0)
    prompts_dir: str | None = None  # a folder with claims.txt / rubric.txt / pairwise.txt


# ------------------------------------------------------------------ reply schemas


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ClaimVerdictReply(_Reply):
    claim: str
    supported: bool
    chunk: str | None = None


class ClaimsReply(_Reply):
    claims: list[ClaimVerdictReply]


class CriterionReply(_Reply):
    criterion: str
    passed: bool | None = Field(default=None, alias="pass")
    score: int | None = Field(default=None, ge=1, le=5)
    reason: str = ""


class RubricReply(_Reply):
    verdicts: list[CriterionReply]


class PairReply(_Reply):
    better: Literal["1", "2", "tie"]
    reason: str = ""


_JSON_BLOCK = re.compile(r"\{.*\}", re.S)


def parse_reply(text: str, schema: type[BaseModel]) -> BaseModel:
    """The JSON object in a reply (code fences and prose around it are tolerated),
    validated against ``schema``; raises ValueError with a one-line reason."""
    m = _JSON_BLOCK.search(text or "")
    if m is None:
        raise ValueError("no JSON object in the reply")
    try:
        data = json.loads(m.group(0))
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON ({exc.msg})") from None
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ValueError(f"{'.'.join(map(str, err['loc'])) or 'reply'}: {err['msg']}") from None


def _checker(schema: type[BaseModel], extra: Any = None) -> Any:
    def check(text: str) -> str | None:
        try:
            reply = parse_reply(text, schema)
        except ValueError as exc:
            return str(exc)
        return extra(reply) if extra else None

    return check


# ------------------------------------------------------------------ results


# ------------------------------------------------------------------ prompts and keys


@dataclass(frozen=True)
class Prompts:
    claims: str
    rubric: str
    pairwise: str

    @classmethod
    def load(cls, folder: Path | None = None) -> Prompts:
        """The package's prompts, each replaced by ``folder/NAME.txt`` when that exists."""
        texts = {}
        for name in PROMPT_NAMES:
            custom = folder / f"{name}.txt" if folder else None
            path = (
                custom if custom is not None and custom.is_file() else PROMPTS_DIR / f"{name}.txt"
            )
            texts[name] = path.read_text(encoding="utf-8")
        if folder is not None and not folder.is_dir():
            raise InputError("judge.prompts_dir: folder not found", str(folder))
        return cls(**texts)


def judge_key(provider: str, model: str, prompt: str, criterion: CriterionConfig | None) -> str:
    """What a validation vouches for: this model, this prompt, this criterion's definition."""
    payload = json.dumps(
        {
            "provider": provider,
            "model": model,
            "prompt": prompt,
            "criterion": criterion.model_dump() if criterion else "faithfulness",
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def model_family(model: str | None) -> str | None:
    """A coarse model family, to warn when a judge grades its own family's answers."""
    if not model:
        return None
    m = model.lower()
    for family, prefixes in (
        ("claude", ("claude",)),
        ("gpt", ("gpt", "o1", "o3", "o4", "chatgpt")),
        ("gemini", ("gemini",)),
        ("llama", ("llama", "meta-llama")),
        ("mistral", ("mistral", "mixtral", "codestral")),
        ("qwen", ("qwen",)),
    ):
        if m.startswith(prefixes) or any(f"/{p}" in m for p in prefixes):
            return family
    return re.split(r"[-_:/.]", m)[0]


def _context(case: CaseResult) -> str:
    return "\n\n".join(f"[{c.id}] {c.text}" for c in case.trace.retrieved) or "(none)"


def _criteria_text(criteria: Sequence[CriterionConfig]) -> str:
    lines = []
    for c in criteria:
        scale = "pass/fail" if c.scale == "pass_fail" else "score 1-5"
        lines.append(f"- {c.name} ({scale}): {c.description}")
    return "\n".join(lines)


# ------------------------------------------------------------------ the judge


@dataclass
class Judge:
    config: JudgeConfig
    provider: Any  # providers.Provider
    prompts: Prompts
    cache: Any = None  # cache.ResponseCache
    price: Any = None  # pricing.Price
    totals: Any = None  # llm.UsageTotals over every call this judge made
    abstain_phrases: tuple[str, ...] | None = None  # [scoring] abstain_phrases; None: defaults

    def __post_init__(self) -> None:
        from ragrail.llm import UsageTotals

        self.totals = UsageTotals()

    @property
    def usage(self) -> Usage:
        return self.totals.summary()

    @property
    def label(self) -> str:
        return f"{self.provider.name} {self.provider.model}"

    def key(self, criterion: CriterionConfig | None) -> str:
        prompt = self.prompts.rubric if criterion else self.prompts.claims
        return judge_key(self.provider.name, self.provider.model, prompt, criterion)

    def _layer(self, validate: Any):  # -> llm.CallLayer
        from ragrail.llm import CallLayer, CallSettings

        c = self.config
        settings = CallSettings(
            concurrency=c.concurrency,
            timeout=c.timeout,
            max_retries=c.max_retries,
            max_tokens=c.max_tokens,
            temperature=c.temperature,
        )
        return CallLayer(
            provider=self.provider,
            settings=settings,
            cache=self.cache,
            price=self.price,
            validate=validate,
            json_replies=True,
        )

    def _run(self, prompts: list[tuple[str, int]], validate: Any) -> list[Any]:
        from ragrail.llm import CallRequest

        if not prompts:
            return []
        layer = self._layer(validate)
        results = layer.run([CallRequest(prompt=p, repeat=r) for p, r in prompts])
        self.totals.absorb(layer.usage)
        return results

    # -- per-case prompts
    def claims_prompt(self, case: CaseResult) -> str:
        return Template(self.prompts.claims).safe_substitute(
            question=case.question, context=_context(case), answer=case.trace.answer or ""
        )

    def rubric_prompt(self, case: CaseResult, answer: str | None = None) -> str:
        return Template(self.prompts.rubric).safe_substitute(
            question=case.question,
            answer=answer if answer is not None else case.trace.answer or "",
            criteria=_criteria_text(self.config.criteria),
        )

    def _rubric_checker(self, criteria: Sequence[CriterionConfig]) -> Any:
        def complete(reply: RubricReply) -> str | None:
            got = {v.criterion: v for v in reply.verdicts}
            for c in criteria:
                v = got.get(c.name)
                if v is None:
                    return f"no verdict for criterion {c.name!r}"
                if c.scale == "pass_fail" and v.passed is None:
                    return f'criterion {c.name!r} needs "pass": true or false'
                if c.scale == "1-5" and v.score is None:
                    return f'criterion {c.name!r} needs a "score" from 1 to 5'
            return None

        return _checker(RubricReply, complete)

    def judge_run(self, run: RunResult) -> None:
        """Judge every answered case of a run in place (claims and rubric), repeats included."""
        from ragrail.scoring.answers import DEFAULT_ABSTAIN_PHRASES, abstains

        cfg = self.config
        cases = [c for c in run.cases if not c.errored and c.trace.answer is not None]
        for c in cases:
            c.judge = JudgeResult()
        claim_jobs = [
            c
            for c in cases
            if cfg.faithfulness
            and c.sources
            and not abstains(c.trace.answer or "", self.abstain_phrases or DEFAULT_ABSTAIN_PHRASES)
        ]
        claim_prompts = [(self.claims_prompt(c), r) for c in claim_jobs for r in range(cfg.repeats)]
        rubric_jobs = cases if cfg.criteria else []
        rubric_prompts = [
            (self.rubric_prompt(c), r) for c in rubric_jobs for r in range(cfg.repeats)
        ]
        claim_results = self._run(claim_prompts, _checker(ClaimsReply))
        rubric_results = self._run(rubric_prompts, self._rubric_checker(cfg.criteria))

        n = cfg.repeats
        for i, case in enumerate(claim_jobs):
            self._apply_claims(case, claim_results[i * n : (i + 1) * n])
        for i, case in enumerate(rubric_jobs):
            self._apply_rubric(case, rubric_results[i * n : (i + 1) * n])

    def _apply_claims(self, case: CaseResult, results: Sequence[Any]) -> None:
        judged = case.judge
        assert judged is not None
        scores = []
        for res in results:
            if res.error is not None:
                judged.errors.append(f"faithfulness: {res.error}")
                continue
            reply = parse_reply(res.text, ClaimsReply)
            claims = [
                JudgeClaim(text=c.claim, supported=c.supported, chunk=c.chunk) for c in reply.claims
            ]
            score = sum(c.supported for c in claims) / len(claims) if claims else None
            if not judged.claims and score is not None:
                judged.claims = claims
            if score is not None:
                scores.append(score)
        if judged.errors:
            return
        judged.faithfulness_runs = scores
        judged.faithfulness = scores[0] if scores else None
        judged.faithfulness_stable = len(set(scores)) <= 1

    def _apply_rubric(self, case: CaseResult, results: Sequence[Any]) -> None:
        judged = case.judge
        assert judged is not None
        per: dict[str, list[CriterionReply]] = {c.name: [] for c in self.config.criteria}
        for res in results:
            if res.error is not None:
                judged.errors.append(f"rubric: {res.error}")
                continue
            reply = parse_reply(res.text, RubricReply)
            for v in reply.verdicts:
                if v.criterion in per:
                    per[v.criterion].append(v)
        if any(e.startswith("rubric") for e in judged.errors):
            return
        for crit in self.config.criteria:
            verdicts = per[crit.name]
            if crit.scale == "pass_fail":
                values = [1.0 if v.passed else 0.0 for v in verdicts]
                passed = sum(values) * 2 > len(values)
                score = None
            else:
                values = [float(v.score or 0) for v in verdicts]
                score = sum(values) / len(values)
                passed = score >= crit.pass_threshold
            judged.criteria.append(
                CriterionResult(
                    name=crit.name,
                    passed=passed,
                    score=score,
                    reason=verdicts[0].reason,
                    verdicts=values,
                    stable=len(set(values)) <= 1,
                )
            )


# ------------------------------------------------------------------ after judging


def apply_gates(run: RunResult, criteria: Sequence[CriterionConfig]) -> None:
    """A gated criterion that failed fails the answer, with the judge's reason."""
    gated = {c.name for c in criteria if c.gate}
    if not gated:
        return
    for case in run.cases:
        if case.judge is None:
            continue
        for crit in case.judge.criteria:
            if crit.name in gated and crit.passed is False:
                case.problems.append(f"judge: {crit.name} failed ({crit.reason})")
                case.answer_pass = False
                case.answer_passes = 0


def require_validated(cfg: JudgeConfig, prompts: Prompts, store: Any) -> None:
    """Raise InputError unless every gated criterion of this judge (model, rubric prompt,
    criterion) has a stored validation with kappa >= ``cfg.min_kappa``."""
    who = f"{cfg.provider} {cfg.model}"
    for crit in (c for c in cfg.criteria if c.gate):
        key = judge_key(cfg.provider or "", cfg.model or "", prompts.rubric, crit)
        found = store.best_validation(key, crit.name)
        if found is None:
            raise InputError(
                f"criterion {crit.name!r} gates answers, but judge {who} with this prompt and "
                f"rubric has never been validated against human labels: label some answers "
                f"(case_id,criterion,verdict) and run `ragrail judge validate --labels FILE`, "
                f"or pass --trust-unvalidated"
            )
        _, kappa, when = found
        if kappa is None or kappa < cfg.min_kappa:
            shown = "none" if kappa is None else f"{kappa:.2f}"
            raise InputError(
                f"criterion {crit.name!r} gates answers, but judge {who}'s latest validation "
                f"({when}) has kappa {shown}, below judge.min_kappa {cfg.min_kappa}: improve the "
                f"prompt or rubric and validate again, or pass --trust-unvalidated"
            )


def same_family_warning(judge: Judge, answer_models: Sequence[str | None]) -> str | None:
    """A warning when the judge's model family answered too (judges favour their own family)."""
    family = model_family(judge.provider.model)
    if family is None or family not in {model_family(m) for m in answer_models}:
        return None
    return (
        f"the judge ({judge.provider.model}) is of the same family as an answering model; "
        "judges favour their own family's answers: prefer a judge from another family"
    )


def judge_and_rescore(judge: Judge, run: RunResult) -> int:
    """Judge a run in place, let gated criteria fail answers, recompute causes and totals,
    and attach the judge's totals and cost. Returns how many questions the judge failed on."""
    from ragrail.diagnose import assign_cause
    from ragrail.run import compute_totals

    judge.judge_run(run)
    apply_gates(run, judge.config.criteria)
    for case in run.cases:
        assign_cause(case, run.config.min_score)
    run.totals = compute_totals(run.cases)
    run.judge = judge.label
    run.judge_usage = judge.usage
    run.judge_stats = judge_totals(run)
    return sum(1 for c in run.cases if c.judge is not None and c.judge.errors)


def judge_totals(run: RunResult) -> dict[str, Any]:
    """Judge faithfulness and each criterion's pass rate, with n and 95% intervals."""
    from ragrail.run import _mean_stat, _rate

    judged = [c.judge for c in run.cases if c.judge is not None]
    out: dict[str, Any] = {"judge_faithfulness": _mean_stat([j.faithfulness for j in judged])}
    names = [cr.name for j in judged for cr in j.criteria]
    for name in dict.fromkeys(names):
        verdicts = [cr for j in judged for cr in j.criteria if cr.name == name]
        out[f"judge_{name}"] = _rate(sum(1 for v in verdicts if v.passed), len(verdicts))
    return out


# ------------------------------------------------------------------ validation


@dataclass(frozen=True)
class Label:
    case_id: str
    criterion: str
    human: float  # 1/0 for pass/fail, or a 1-5 score
    line: int


LABEL_COLUMNS = ("case_id", "criterion", "verdict")


def load_labels(path: Path) -> list[Label]:
    """Human verdicts from CSV (columns case_id, criterion, verdict) or JSONL (same keys).
    A verdict is pass/fail (also yes/no, true/false, 1/0) or a score from 1 to 5.

    Read as strictly as a golden set: a JSONL line must be one JSON object (strict JSON:
    no NaN, no key twice) and a CSV row may not have an unterminated quote or more
    fields than the header; each is exit 2 naming the line."""
    from ragrail.fileio import read_text

    text = read_text(path, "labels file")
    if path.suffix.lower() == ".jsonl":
        rows = _jsonl_label_rows(text, path)
    else:
        rows = _csv_label_rows(text, path)
    labels = []
    for row, n in rows:
        where = f"{path}:{n}"
        for key in LABEL_COLUMNS:
            if row.get(key) in (None, ""):
                raise InputError(f"missing {key!r}", where)
        for key in ("case_id", "criterion"):
            if not isinstance(row[key], str):
                raise InputError(f"field {key!r} must be a string", where)
        labels.append(
            Label(str(row["case_id"]), str(row["criterion"]), _verdict(row["verdict"], where), n)
        )
    if not labels:
        raise InputError("no labels", str(path))
    return labels


def _jsonl_label_rows(text: str, path: Path) -> list[tuple[dict[str, Any], int]]:
    from ragrail.fileio import parse_json

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


def agreement_stats(
    criterion: str, scale: str, items: Sequence[tuple[str, float, float, str]]
) -> Agreement:
    """items: (case id, human verdict, judge verdict, judge reason)."""
    import numpy as np

    from ragrail.stats import BOOTSTRAP_SEED, wilson

    def ci(iv: Any) -> tuple[float, float] | None:
        return (iv.low, iv.high) if iv is not None else None

    a = Agreement(criterion=criterion, scale=scale, n=len(items))
    if not items:
        return a
    if scale == "pass_fail":
        pairs = [(int(h), int(j)) for _, h, j, _ in items]
        agree = sum(1 for h, j in pairs if h == j)
        a.agreement, a.agreement_ci = agree / len(pairs), ci(wilson(agree, len(pairs)))
        a.kappa = cohen_kappa(pairs)
        rng = np.random.default_rng(BOOTSTRAP_SEED)
        arr = np.asarray(pairs)
        boots = []
        for _ in range(2000):
            k = cohen_kappa([tuple(x) for x in arr[rng.integers(0, len(arr), len(arr))]])
            if k is not None:
                boots.append(k)
        if boots:
            lo, hi = np.percentile(boots, [2.5, 97.5])
            a.kappa_ci = (float(lo), float(hi))
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
                # Fisher's z: atanh(rho) is about normal with standard error 1/sqrt(n-3)
                z, se = math.atanh(rho), 1 / math.sqrt(len(items) - 3)
                a.spearman_ci = (math.tanh(z - 1.959964 * se), math.tanh(z + 1.959964 * se))
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


def validate_judge(judge: Judge, run: RunResult, labels: Sequence[Label]) -> Validation:
    """Run the judge on the labelled cases of ``run`` and measure its agreement with people.

    A case the judge failed on (its call failed after the retries) or made no claim
    for is left out of the agreement, never counted as a "fail" verdict, and listed."""
    by_id = {c.id: c for c in run.cases}
    crit_by_name = {c.name: c for c in judge.config.criteria}
    unknown_cases = sorted({lb.case_id for lb in labels if lb.case_id not in by_id})
    if unknown_cases:
        raise InputError(f"labels name cases not in the run: {', '.join(unknown_cases[:5])}")
    unknown = sorted({lb.criterion for lb in labels} - set(crit_by_name) - {"faithfulness"})
    if unknown:
        raise InputError(
            f"labels name criterion {unknown[0]!r}, which is not in [judge] criteria "
            f"({', '.join(crit_by_name) or 'none'}) nor 'faithfulness'"
        )
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
        out.agreements.append(agreement_stats(criterion, scale, items))
    return out


# ------------------------------------------------------------------ pairwise


@dataclass
class PairwiseResult:
    wins: int = 0  # run B better than run A, in both orders
    losses: int = 0  # run A better, in both orders
    ties: int = 0  # both orders say tie
    swap_disagreements: int = 0  # the verdict changed when the answers swapped places
    errors: int = 0  # questions not judged: errored in either run, or the judge failed
    n: int = 0  # questions in both runs
    per_case: list[tuple[str, str]] = field(default_factory=list)
    errored: list[tuple[str, str]] = field(default_factory=list)  # case id, reason
    unmatched: list[str] = field(default_factory=list)  # in one run only

    @property
    def swap_rate(self) -> float | None:
        judged = self.n - self.errors
        return self.swap_disagreements / judged if judged else None

    @property
    def sign_test_p(self) -> float:
        """Two-sided exact sign test on wins vs losses (ties and swap disagreements left out)."""
        from ragrail.stats import mcnemar_exact

        return mcnemar_exact(self.wins, self.losses).p_value


def pairwise(judge: Judge, run_a: RunResult, run_b: RunResult) -> PairwiseResult:
    """Ask, per case, which answer is better in both orders; only verdicts that agree
    across the swap count, so a judge's preference for a position cannot decide."""
    b_by_id = {c.id: c for c in run_b.cases}
    a_ids = {c.id for c in run_a.cases}
    out = PairwiseResult()
    out.unmatched = [c.id for c in run_a.cases if c.id not in b_by_id]
    out.unmatched += [c.id for c in run_b.cases if c.id not in a_ids]
    cases = []
    for a in run_a.cases:
        b = b_by_id.get(a.id)
        if b is None:
            continue
        why = _not_comparable(a, "A") or _not_comparable(b, "B")
        if why is not None:
            out.errored.append((a.id, why))
            out.per_case.append((a.id, f"ERROR {why}"))
        else:
            cases.append((a, b))
    prompts = []
    for a, b in cases:
        ctx = {c.id: c for c in [*a.trace.retrieved, *b.trace.retrieved]}
        context = "\n\n".join(f"[{c.id}] {c.text}" for c in ctx.values()) or "(none)"
        for first, second in ((a, b), (b, a)):
            prompts.append(
                (
                    Template(judge.prompts.pairwise).safe_substitute(
                        question=a.question,
                        context=context,
                        answer_1=first.trace.answer or "",
                        answer_2=second.trace.answer or "",
                    ),
                    0,
                )
            )
    results = judge._run(prompts, _checker(PairReply))
    out.n = len(cases) + len(out.errored)
    out.errors = len(out.errored)
    for i, (a, _) in enumerate(cases):
        ab, ba = results[2 * i], results[2 * i + 1]
        if ab.error or ba.error:
            why = f"judge failed: {ab.error or ba.error}"
            out.errors += 1
            out.errored.append((a.id, why))
            out.per_case.append((a.id, f"ERROR {why}"))
            continue
        v1 = parse_reply(ab.text, PairReply).better  # answer 1 = run A
        v2 = parse_reply(ba.text, PairReply).better  # answer 1 = run B
        first = {"1": "A", "2": "B", "tie": "tie"}[v1]
        second = {"1": "B", "2": "A", "tie": "tie"}[v2]
        if first != second:
            out.swap_disagreements += 1
            out.per_case.append((a.id, f"changed with the order ({first} / {second})"))
        elif first == "B":
            out.wins += 1
            out.per_case.append((a.id, "B better"))
        elif first == "A":
            out.losses += 1
            out.per_case.append((a.id, "A better"))
        else:
            out.ties += 1
            out.per_case.append((a.id, "tie"))
    order = {c.id: i for i, c in enumerate(run_a.cases)}
    out.per_case.sort(key=lambda item: order[item[0]])
    return out


def _not_comparable(case: CaseResult, run: str) -> str | None:
    """Why a question cannot be judged pairwise from this run: its call failed, or no answer."""
    errors = [s.error for s in case.trace.all_samples() if s.error is not None]
    if errors:
        return f"run {run} errored: {errors[0]}"
    if case.trace.answer is None:
        return f"run {run} has no answer"
    return None


# ------------------------------------------------------------------ dry run


@dataclass(frozen=True)
class JudgePlan:
    """The most a judge would send, for --dry-run (the answers are not known yet)."""

    provider: str
    model: str
    calls: int  # first asks
    max_calls: int  # with every retry and re-ask of a malformed reply
    input_tokens: int  # estimated, first asks
    max_input_tokens: int  # estimated, with every re-ask (each carries the bad reply)
    max_output_tokens: int
    price: Any  # pricing.Price | None

    def cost_bound(self) -> float | None:
        from ragrail.pricing import cost_usd

        return cost_usd(self.price, self.max_input_tokens, self.max_calls * self.max_output_tokens)


def plan_items(cases: Sequence[Any], traces: Sequence[Any]) -> list[tuple[str, str, bool]]:
    """(question, context, claimable) per golden case and its prepared trace: a question
    search found nothing for gets the no-context answer, which makes no claim."""
    return [
        (
            case.question,
            "\n\n".join(f"[{c.id}] {c.text}" for c in trace.retrieved) or "(none)",
            bool(case.sources) and trace.prompt is not None,
        )
        for case, trace in zip(cases, traces, strict=True)
    ]


def plan_judge(
    cfg: JudgeConfig,
    prompts: Prompts,
    items: Sequence[tuple[str, str, bool]],
    answer_tokens: int,
    prices: dict[str, Any],
) -> JudgePlan:
    """Count the judge calls a run would make and bound their tokens, sending nothing.

    items: (question, retrieved context, whether the answer can have claims to
    check). Each prompt is estimated with an answer of ``answer_tokens`` (the
    answerer's max_tokens); each re-ask adds the bad reply (the judge's
    max_tokens) and the correction.
    """
    from ragrail.llm import correction
    from ragrail.prompt import estimate_tokens

    filler = "x" * (4 * answer_tokens)
    sizes = []
    for question, context, claimable in items:
        if cfg.faithfulness and claimable:
            text = Template(prompts.claims).safe_substitute(
                question=question, context=context, answer=filler
            )
            sizes.extend([estimate_tokens(text)] * cfg.repeats)
        if cfg.criteria:
            text = Template(prompts.rubric).safe_substitute(
                question=question, answer=filler, criteria=_criteria_text(cfg.criteria)
            )
            sizes.extend([estimate_tokens(text)] * cfg.repeats)
    reask = cfg.max_tokens + estimate_tokens(correction("x" * 200))
    attempts = 1 + cfg.max_retries
    return JudgePlan(
        provider=cfg.provider or "",
        model=cfg.model or "",
        calls=len(sizes),
        max_calls=len(sizes) * attempts,
        input_tokens=sum(sizes),
        max_input_tokens=sum(n * attempts + reask * cfg.max_retries for n in sizes),
        max_output_tokens=cfg.max_tokens,
        price=prices.get(cfg.model or ""),
    )


def build_judge(
    cfg: JudgeConfig, cache_path: Path | None, prices: dict[str, Any], root: Path | None
) -> Judge:
    from ragrail.cache import ResponseCache
    from ragrail.providers import JUDGE_URL, make_provider

    if cfg.provider is None:
        raise InputError(
            "no judge configured: pass --judge claude|openai or add [judge] provider = ..."
        )
    provider = make_provider(cfg.provider, cfg.model, cfg.base_url, cfg.timeout, JUDGE_URL)
    prompts = Prompts.load(root / cfg.prompts_dir if cfg.prompts_dir and root else None)
    cache = ResponseCache(cache_path) if cache_path is not None else None
    return Judge(
        config=cfg,
        provider=provider,
        prompts=prompts,
        cache=cache,
        price=prices.get(provider.model),
    )
