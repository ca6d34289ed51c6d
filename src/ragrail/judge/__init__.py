"""LLM-as-judge you can check: claim-level faithfulness, rubric grading, validation
against human labels, stability across repeats, and position-fair pairwise comparison.

Every judge call goes through the shared call layer (concurrent, cached, costed,
retried). Replies must be JSON of a fixed shape; a reply that does not parse is
re-asked at once with the parse error in a follow-up message (and structured JSON
output requested where the server supports it) and, if it still fails, recorded
as a judge error for that case: never a silent NaN, never a dropped row. Prompts
are plain text files (``judge_prompts/`` in the package) that a project can
override with its own.

The modules follow the concerns: ``config`` (settings, prompts, keys), ``replies``
(the JSON a judge answers with), ``claims`` and ``rubric`` (what a verdict means for a
case), ``core`` (the judge itself), ``validate`` (agreement with human labels),
``pairs`` (pairwise comparison) and ``plan`` (the dry run). Everything is importable
from ``ragrail.judge``.
"""

from __future__ import annotations

from ragrail.judge.claims import apply_claims, claims_prompt, context_text
from ragrail.judge.config import (
    PROMPT_NAMES,
    PROMPTS_DIR,
    CriterionConfig,
    JudgeConfig,
    Prompts,
    criteria_text,
    judge_key,
    model_family,
)
from ragrail.judge.core import (
    Judge,
    build_judge,
    judge_and_rescore,
    judge_totals,
    same_family_warning,
)
from ragrail.judge.pairs import PairwiseResult, pairwise
from ragrail.judge.plan import JudgePlan, plan_items, plan_judge
from ragrail.judge.replies import (
    ClaimsReply,
    ClaimVerdictReply,
    CriterionReply,
    PairReply,
    RubricReply,
    checker,
    parse_reply,
)
from ragrail.judge.rubric import (
    apply_gates,
    apply_rubric,
    require_validated,
    rubric_checker,
    rubric_prompt,
)
from ragrail.judge.validate import (
    LABEL_COLUMNS,
    Agreement,
    Label,
    Validation,
    agreement_stats,
    cohen_kappa,
    load_labels,
    validate_judge,
)

__all__ = [
    "LABEL_COLUMNS",
    "PROMPTS_DIR",
    "PROMPT_NAMES",
    "Agreement",
    "ClaimVerdictReply",
    "ClaimsReply",
    "CriterionConfig",
    "CriterionReply",
    "Judge",
    "JudgeConfig",
    "JudgePlan",
    "Label",
    "PairReply",
    "PairwiseResult",
    "Prompts",
    "RubricReply",
    "Validation",
    "agreement_stats",
    "apply_claims",
    "apply_gates",
    "apply_rubric",
    "build_judge",
    "checker",
    "claims_prompt",
    "cohen_kappa",
    "context_text",
    "criteria_text",
    "judge_and_rescore",
    "judge_key",
    "judge_totals",
    "load_labels",
    "model_family",
    "pairwise",
    "parse_reply",
    "plan_items",
    "plan_judge",
    "require_validated",
    "rubric_checker",
    "rubric_prompt",
    "same_family_warning",
    "validate_judge",
]
