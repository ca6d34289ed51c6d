"""Lint: the labels checked against the documents (every source exists, every fact is
in one of its case's sources), near-duplicate questions, unused documents."""

from __future__ import annotations

from dataclasses import dataclass

from ragrail.records.case import Case, GoldenSet


@dataclass(frozen=True)
class LintProblem:
    where: str
    case_id: str
    message: str
    warning: bool = False
    # a turn of a conversation: named as "conversation 'c' turn 2" (its case id is "c turn 2")
    conversation: str | None = None
    turn: int | None = None

    def __str__(self) -> str:
        kind = "warning: " if self.warning else ""
        subject = f"case {self.case_id!r}: " if self.case_id else ""
        if self.conversation is not None:
            subject = f"conversation {self.conversation!r}" + (
                f" turn {self.turn}: " if self.turn is not None else ": "
            )
        return f"{self.where}: {kind}{subject}{self.message}"


def lint_golden(
    golden: GoldenSet, documents: dict[str, str], language: str = "en"
) -> list[LintProblem]:
    """Check the labels against the documents.

    - every source names an existing document;
    - every fact is found (by :mod:`ragrail.text.matching`, as scoring finds it)
      in one of the case's source documents, so a typo in a label fails here
      instead of looking like a bot failure;
    - a case with facts has sources, since a fact is only found in a source.
    """
    from ragrail.text.matching import find, normalise

    texts = {name: normalise(text) for name, text in documents.items()}
    problems = []
    for case in golden.cases:
        where = golden.where(case.id)

        def problem(message: str, where: str = where, case: Case = case) -> None:
            problems.append(
                LintProblem(where, case.id, message, conversation=case.conversation, turn=case.turn)
            )

        unknown = [s for s in case.relevance if s not in texts]  # grade-0 names too
        for source in unknown:
            problem(f"unknown source {source!r}")
        if case.facts and not case.sources:
            problem("has facts but no sources")
        known = [s for s in case.sources if s in texts]
        for fact in case.facts:
            if not known:
                continue
            bare = _without_markup(fact)
            if not any(find(fact, texts[s]) is not None for s in known):
                message = f'fact "{fact}" not found in {", ".join(known)}'
                if bare is not None and any(find(bare, texts[s]) is not None for s in known):
                    # a fact is matched as written, its own * _ ` included (text.markup)
                    message += f' (written with Markdown marks; "{bare}" is there)'
                problem(message)
            elif bare is not None and ("*" in fact or "`" in fact):
                # found as the document writes it, marks and all: an answer that writes
                # it plainly will not match (an identifier's __ pair is no emphasis)
                problems.append(
                    LintProblem(
                        where, case.id, f'fact "{fact}" is written with Markdown marks: only an '
                        f'answer that writes them too has it ("{bare}" without them)',
                        warning=True, conversation=case.conversation, turn=case.turn,
                    )
                )  # fmt: skip
    problems.extend(_near_duplicates(golden, language=language))
    problems.extend(_short_conversations(golden))
    used = {s for case in golden.cases for s in case.relevance}
    for name in sorted(set(documents) - used):
        problems.append(
            LintProblem(str(golden.path), "", f"no case uses the document {name!r}", warning=True)
        )
    return problems


def question_words(question: str, language: str = "en") -> frozenset[str]:
    """A question's content terms in the project's language (Japanese: character bigrams)."""
    from ragrail.text.tokens import terms

    return frozenset(terms(question, language))


def _near_duplicates(
    golden: GoldenSet, threshold: float = 0.8, language: str = "en"
) -> list[LintProblem]:
    """Warn about questions whose content words overlap by Jaccard >= 0.8 (or are identical):
    a near-duplicate adds weight to one behaviour without testing a new one."""
    # a follow-up ("and on the Pro plan?") means what its conversation makes it mean: the
    # same words in two conversations are two tests
    words = [(c, question_words(c.question, language)) for c in golden.cases if (c.turn or 1) == 1]
    out = []
    for i, (a, wa) in enumerate(words):
        for b, wb in words[i + 1 :]:
            if not wa or not wb:
                continue
            jaccard = len(wa & wb) / len(wa | wb)
            if jaccard >= threshold:
                out.append(
                    LintProblem(
                        golden.where(b.id),
                        b.id,
                        f"question is a near-duplicate of {a.id!r} ({jaccard:.0%} shared words)",
                        warning=True,
                    )
                )
    return out


def _short_conversations(golden: GoldenSet) -> list[LintProblem]:
    """Warn about a conversation of one turn: nothing in it tests the follow-up a
    conversation is written for."""
    from ragrail.golden.turns import conversations

    return [
        LintProblem(
            golden.where(turns[0].id),
            turns[0].id,
            "has one turn: write it as a single question, or add the follow-up it is for",
            warning=True,
            conversation=conversation,
        )
        for conversation, turns in conversations(golden.cases).items()
        if len(turns) == 1
    ]


def lint_from_log(
    golden: GoldenSet, from_log: list[tuple[str, str, str, float]], golden_real: str
) -> list[LintProblem]:
    """Warn about each case made from a logged conversation (``ragrail add --from-log``)
    that is no longer in the golden set: production failures are never removed silently.

    ``from_log``: (case id, conversation id, golden file's real path, when added) rows
    of the log database; ``golden_real``: this golden set's real path. A row of another
    golden file that still exists is not this set's; one whose file is gone (renamed or
    moved) is checked against this set, so a move does not hide a removal.
    """
    import os
    from datetime import UTC, datetime

    # a logged conversation added with its turns is recorded by its own id
    ids = {case.id for case in golden.cases} | {c.conversation for c in golden.cases}
    problems = []
    for case_id, conversation_id, path, added in from_log:
        if case_id in ids or (path != golden_real and os.path.exists(path)):
            continue
        day = datetime.fromtimestamp(added, UTC).strftime("%Y-%m-%d")
        problems.append(
            LintProblem(
                str(golden.path),
                case_id,
                f"came from production conversation {conversation_id!r} (added {day}) and "
                f"is no longer in {golden.path.name}: production failures are never removed "
                "silently (add it back, or keep it out on purpose and say why)",
                warning=True,
            )
        )
    return problems


def _without_markup(fact: str) -> str | None:
    """A text fact with the Markdown marks that pair up in it dropped (``**30 days**``
    -> ``30 days``), or None when it has none to drop."""
    from ragrail.text.markup import unmark
    from ragrail.text.matching import Fact

    if not isinstance(fact, Fact) or fact.kind != "text":
        return None
    bare = " ".join(unmark(fact.values[0]).split())
    return bare if bare and bare != " ".join(fact.values[0].split()) else None
