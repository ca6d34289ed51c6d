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

import importlib
from typing import Any

# Names load from their module on first use: reading a config needs JudgeConfig, and
# should not load the judge, its validation statistics and the call layer with it.
_WHERE = {
    "apply_claims": "claims",
    "claims_prompt": "claims",
    "context_text": "claims",
    "PROMPT_NAMES": "config",
    "PROMPTS_DIR": "config",
    "CriterionConfig": "config",
    "JudgeConfig": "config",
    "Prompts": "config",
    "criteria_text": "config",
    "judge_key": "config",
    "model_family": "config",
    "Judge": "core",
    "build_judge": "core",
    "judge_and_rescore": "core",
    "judge_totals": "core",
    "same_family_warning": "core",
    "PairwiseResult": "pairs",
    "pairwise": "pairs",
    "JudgePlan": "plan",
    "plan_items": "plan",
    "plan_judge": "plan",
    "plan_judge_run": "plan",
    "judge_jobs": "core",
    "ClaimsReply": "replies",
    "ClaimVerdictReply": "replies",
    "CriterionReply": "replies",
    "PairReply": "replies",
    "RubricReply": "replies",
    "checker": "replies",
    "parse_reply": "replies",
    "apply_gates": "rubric",
    "apply_rubric": "rubric",
    "require_validated": "rubric",
    "rubric_checker": "rubric",
    "rubric_prompt": "rubric",
    "LABEL_COLUMNS": "validate",
    "Agreement": "validate",
    "Label": "validate",
    "Validation": "validate",
    "agreement_stats": "validate",
    "cohen_kappa": "validate",
    "load_labels": "validate",
    "validate_judge": "validate",
}


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
    "judge_jobs",
    "judge_key",
    "judge_totals",
    "load_labels",
    "model_family",
    "pairwise",
    "parse_reply",
    "plan_items",
    "plan_judge",
    "plan_judge_run",
    "require_validated",
    "rubric_checker",
    "rubric_prompt",
    "same_family_warning",
    "validate_judge",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])
