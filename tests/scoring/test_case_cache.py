"""Scoring with a run's cache scores every case exactly as scoring each on its own."""

from __future__ import annotations

import dataclasses
import random

from ragrail.diagnose import assign_cause
from ragrail.golden import Case
from ragrail.records.results import RetrievedChunk, Sample, Trace
from ragrail.scoring import ranking
from ragrail.scoring.case import ScoringOptions, article_scores, score_case
from ragrail.scoring.claims import check_claim, check_claims, numbers
from ragrail.scoring.memo import ScoringCache
from ragrail.text.matching import normalise
from ragrail.text.tokens import terms

CHUNKS = {
    "refunds#1": (
        "refunds",
        "Refunds arrive within 30 days of the request. Fees are not refunded.",
    ),
    "refunds#2": ("refunds", "A late order gets 10% back, capped at ₹150."),
    "plans#1": ("plans", "The Pro plan costs $10 a month; Teams costs $100."),
    "plans#2": ("plans", "Straße und Rückerstattung: 返金は30日以内に申請できます。"),
    "sso#1": ("sso", "Open Settings, then Security, and turn on single sign-on."),
}
ANSWERS = [
    "Refunds arrive within 30 days [refunds#1]. Fees are not refunded [refunds#1].",
    "You get 10% back, capped at ₹150 [refunds#2], and a free voucher.",
    "The Pro plan costs $12 a month [plans#1].",
    "Open Settings, then Security [sso#1]. Carrier pigeons deliver the code.",
    "I don't know.",
    "返金は30日以内に申請できます [plans#2]。",
    "",
]
FACTS = ["30 days", "10%", "₹150", "$10", "Settings", "返金", {"any": ["Pro", "Teams"]}]


def random_cases(seed: int, n: int) -> list[tuple[Case, Trace]]:
    """Cases whose chunks and answers repeat, as across a real run's questions."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        ids = rng.sample(sorted(CHUNKS), rng.randint(0, 3))
        retrieved = [
            RetrievedChunk(id=cid, source=CHUNKS[cid][0], rank=r, score=1.0, text=CHUNKS[cid][1])
            for r, cid in enumerate(ids, 1)
        ]
        sources = rng.sample(["refunds", "plans", "sso"], rng.randint(0, 2))
        case = Case(
            id=f"q{i}",
            question="?",
            sources=sources,
            facts=rng.sample(FACTS, rng.randint(0, 2)) if sources else [],
        )
        repeats = [Sample(answer=rng.choice(ANSWERS)) for _ in range(rng.randint(0, 2))]
        trace = Trace(
            case_id=case.id, retrieved=retrieved, answer=rng.choice(ANSWERS), samples=repeats
        )
        out.append((case, trace))
    return out


def scored(case: Case, trace: Trace, options: ScoringOptions, memoised: bool) -> dict:
    result = score_case(case, trace, options)
    if memoised:
        assign_cause(result, 0.0, options.cache.memoised(normalise))
    else:
        assign_cause(result, 0.0)
    return result.model_dump(mode="json")


def test_a_shared_cache_changes_no_score():
    for language in ("en", "auto"):
        for require_faithful in (False, True):
            shared = ScoringOptions(k=2, language=language, require_faithful=require_faithful)
            for case, trace in random_cases(len(language) + require_faithful, 300):
                alone = dataclasses.replace(shared, cache=ScoringCache())
                assert scored(case, trace, shared, True) == scored(case, trace, alone, False)
            assert len(shared.cache) > 0  # the work was shared


def test_a_tiny_cache_forgets_and_still_changes_no_score():
    tiny = ScoringOptions(cache=ScoringCache(max_entries=2, max_chars=60))
    for case, trace in random_cases(5, 200):
        assert scored(case, trace, tiny, True) == scored(case, trace, ScoringOptions(), False)
    assert all(len(memo) <= 2 for memo in tiny.cache._tables.values())


def test_each_options_object_has_its_own_cache_and_replace_keeps_it():
    first, second = ScoringOptions(), ScoringOptions()
    assert first.cache is not second.cache
    assert dataclasses.replace(first, k=5).cache is first.cache  # a sweep's points share it
    assert first == second  # the cache is not part of what the options say


def test_the_percent_after_a_line_break_counts_as_in_the_joined_contexts():
    # "\n".join(contexts) reads "10" + "\n" + "% of" as "10%": the context-by-context
    # check must give the same verdict as the joined text
    contexts = ["Late orders get 10", "% of the price back"]
    joined = "\n".join(contexts)
    assert "10%" in numbers(joined) and "10%" not in numbers(contexts[0])
    claim = "late orders get 10% of the price back"
    expected = check_claim(claim, set(terms(joined)), numbers(joined))
    assert expected.supported
    [verdict] = check_claims(claim, contexts, cache=ScoringCache())
    assert (verdict.supported, verdict.reason) == (True, "")


def test_a_claim_the_first_context_supports_reads_no_other_context():
    cache = ScoringCache()
    contexts = ["refunds arrive within thirty days", "an unrelated chunk about plans"]
    [verdict] = check_claims("refunds arrive within thirty days", contexts, cache=cache)
    assert verdict.supported
    assert contexts[1] not in cache.table(("terms", "en"))


def test_unsupported_claims_count_words_over_every_context():
    contexts = ["refunds arrive", "within thirty days", "nothing here"]
    claim = "refunds arrive within days by carrier pigeon on tuesday mornings quickly"
    [verdict] = check_claims(claim, contexts, cache=ScoringCache())
    joined = "\n".join(contexts)
    assert verdict == check_claim(claim, set(terms(joined)), numbers(joined))
    # refund and arrive from the first context, within and day from the second
    assert (verdict.supported, verdict.reason) == (False, "4 of 9 content words in the context")


def test_article_scores_are_shared_by_rankings_of_the_same_shape():
    cache = ScoringCache()
    graded = {"a": 2, "b": 1, "z": 0}
    ranked = ["b", "x", "b", "y", "a"]  # a duplicate, unjudged articles
    case = Case(id="1", question="?", sources={"a": 2, "b": 1, "z": 0}, facts=["f"])
    renamed = Case(id="2", question="?", sources={"c": 2, "d": 1, "y": 0}, facts=["f"])

    def trace(sources: list[str]) -> Trace:
        return Trace(
            case_id="t",
            retrieved=[
                RetrievedChunk(id=f"{s}#{i}", source=s, rank=i, score=1.0, text="t")
                for i, s in enumerate(sources, 1)
            ],
        )

    first = article_scores(case, trace(ranked), 3, cache)
    again = article_scores(renamed, trace(["d", "w", "d", "v", "c"]), 3, cache)
    assert len(cache.table("article scores")) == 1
    assert first == again
    assert first.ndcg_at_k == ranking.ndcg_at_k(ranked, graded, 3)
    assert first.average_precision == ranking.average_precision(ranked, graded, 3)
    assert first.precision_at_k == 1 / 3  # b at rank 1; x, y unjudged; a cut off at k = 3
    other_k = article_scores(case, trace(ranked), 4, cache)
    assert other_k.recall_at_k == 1.0 and len(cache.table("article scores")) == 2


def test_one_cache_shared_by_runs_of_different_settings_changes_no_score():
    # a sweep (or a caller reusing an options object through dataclasses.replace) keeps
    # one cache while the language, the abstain phrases, k and require_faithful change:
    # every memo must be keyed on what its value depends on, not on the text alone
    shared = ScoringCache()
    variants = [
        ScoringOptions(k=2, language="en", cache=shared),
        ScoringOptions(k=1, language="none", require_faithful=True, cache=shared),
        ScoringOptions(k=3, language="de", abstain_phrases=("refunds arrive",), cache=shared),
        ScoringOptions(k=2, language="auto", abstain_phrases=("open settings",), cache=shared),
        ScoringOptions(k=2, language="en", abstain_phrases=(), require_faithful=True, cache=shared),
    ]
    scored = 0
    for case, trace in random_cases(41, 200):
        for options in variants:  # interleaved: each text is met under every setting
            fresh = dataclasses.replace(options, cache=ScoringCache())
            with_shared = score_case(case, trace, options)
            alone = score_case(case, trace, fresh)
            assert with_shared.model_dump() == alone.model_dump(), (case.id, options)
            scored += with_shared.answer_runs
    assert scored > 0 and len(shared) > 0
