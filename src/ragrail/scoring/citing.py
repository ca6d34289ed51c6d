"""Whether a run's answers must cite a source: ``[scoring] require_citation``.

``true`` requires a citation of every answer that must hold facts; ``false`` never does
(a citation given is still checked: a chunk never given, or only other articles, fails);
``"auto"`` (the default) requires one unless no answer of the run cites anything, no
``[id]`` in any answer and no ``cited`` from the system. An app built the way LlamaIndex
or LangChain answer by default writes no markers, and every answer would fail "no
citation" for it; an app that cites is held to it, a miss included.

The rule reads every answer, so it is the run's to decide: before scoring when the
traces are all at hand (:func:`ragrail.run.score_run`), after it for a run scored in
slices (:func:`ragrail.run.settle_citations`). A case scored alone treats "auto" as
required, and so does a run compared with a baseline whose answers had to cite
(``ragrail.app.prepare``): an app that stops citing is a regression, not a dropped rule.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from ragrail.records.results import RunConfig, Trace
from ragrail.scoring.answers import cites
from ragrail.scoring.memo import ScoringCache

Citations = Literal["required", "off", "none cited"]  # as RunConfig.citations records it


def any_cited(traces: Iterable[Trace], cache: ScoringCache | None = None) -> bool:
    """Whether any answer of the traces (each repeat too) cites something, or any system
    said which contexts an answer used."""
    return any(
        cites(
            [t.answer, *[s.answer for s in t.samples]],
            t.cited,
            cache,
            [c.id for c in t.retrieved],
        )
        or any(s.cited for s in t.samples)
        for t in traces
    )


def citation_rule(
    setting: bool | Literal["auto"], traces: Iterable[Trace], cache: ScoringCache | None = None
) -> tuple[bool, Citations]:
    """(whether an answer must cite, what the run's config records): true -> required;
    false -> off; "auto" -> required when some answer cites (:func:`any_cited`), else
    "none cited" and not required."""
    if setting == "auto":
        return (True, "required") if any_cited(traces, cache) else (False, "none cited")
    return (True, "required") if setting else (False, "off")


def citations_note(config: RunConfig) -> str | None:
    """The scorecard's one line when answers need not cite, saying why; None when they must."""
    if config.citations == "none cited":
        return (
            "citations: not required, no answer cites a source "
            '([scoring] require_citation = "auto")'
        )
    if config.citations == "off":
        return "citations: not required ([scoring] require_citation = false)"
    return None
