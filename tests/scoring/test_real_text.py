"""Real-text cases, one row each: (id, kind, inputs, expected verdict).

Text as help centers and real models write it: wrapped lines, NBSPs, ligatures, curly
quotes, loose citations, polite abstentions, other languages. Each row is a verdict a
user would check by eye; a change to the matcher, the abstention rule or the citation
reader that flips one is a change in what ragrail passes.

Kinds:
- ``match``: (fact, text) -> is the fact found in the text (the one matcher);
- ``abstain``: answer -> is it an abstention;
- ``cite``: answer -> the chunk ids read as citations, in order;
- ``check``: (facts, sources, answer, given chunk id -> source) -> the answer's problems;
- ``slug``: document name -> the slug its chunk ids start with;
- ``claims``: (answer, language) -> the claims the faithfulness check reads;
- ``support``: (answer, context, language) -> each claim supported or not;
- ``tokens``: text -> the words ragrail counts (retrievers, claims, lint).
"""

from __future__ import annotations

from typing import Any

import pytest

from ragrail.scoring.answers import abstains, check_answer, citations
from ragrail.scoring.claims import check_claims, split_claims
from ragrail.text.matching import contains, parse_fact, slug
from ragrail.text.tokens import tokens

ANY_10 = {"any": ["10%", "10 percent"]}
REFUND = {"refund-policy#1": "Refund Policy", "refund-policy#2": "Refund Policy"}

# One row per line, so the table reads as a table.
# fmt: off
CASES: list[tuple[str, str, Any, Any]] = [
    # --- boundaries: a fact is a whole token, never part of a longer word or number
    ("window-not-in-130", "match", ("30 days", "You can return items within 130 days of delivery."), False),
    ("window-found", "match", ("30 days", "Returns are accepted within 30 days of delivery."), True),
    ("price-not-in-100", "match", ("$10", "The Pro plan costs $100 per month."), False),
    ("price-found", "match", ("$10", "The Starter plan costs $10 per month."), True),
    ("price-not-in-10000", "match", ("$10", "Enterprise starts at $10,000 a year."), False),
    ("price-at-sentence-end", "match", ("$10", "Extra seats cost $10."), True),
    ("price-after-currency-code", "match", ("$10", "Each seat is US$10 per month."), True),
    ("pro-not-in-professional", "match", ("Pro", "Professional services are billed hourly."), False),
    ("pro-found", "match", ("Pro", "Upgrade to Pro to unlock SSO."), True),
    ("percent-not-in-210", "match", ("10%", "Prices rose 210% since launch."), False),
    ("percent-found", "match", ("10%", "Annual plans save 10% on the monthly price."), True),
    ("version-not-in-decimal", "match", ("API v2", "API v2.1 is deprecated; use v3."), False),
    ("admin-not-in-administrator", "match", ("IT admin", "Ask your IT administrator for access."), False),
    ("admin-found", "match", ("IT admin", "Contact your IT admin, who manages SSO."), True),
    ("menu-path-with-symbols", "match", ("Settings > Profile", "Open Settings > Profile and change it."), True),
    ("fact-before-hyphen", "match", ("SSO", "SSO-enabled workspaces sign in with Okta."), True),
    ("fact-in-parentheses", "match", ("(30 days)", "The refund window (30 days) starts at delivery."), True),
    ("rupees-not-in-1500", "match", ("₹150", "Late refunds are capped at ₹1500 per order."), False),
    ("rupees-found", "match", ("₹150", "Late refunds are capped at ₹150 per order."), True),
    ("fact-before-apostrophe", "match", ("Kitebase", "Kitebase's export is a ZIP file."), True),
    ("plural-is-another-word", "match", ("backup code", "Use one of your backup codes."), False),
    # --- normalisation: the same text written differently is the same fact
    ("sharp-s-casefold", "match", ("Straße des 17. Juni", "Write to us at STRASSE DES 17. JUNI 135, BERLIN."), True),
    ("composed-fact-decomposed-text", "match", ("café", "Visit our Cafe\u0301 on the first floor."), True),
    ("decomposed-fact-composed-text", "match", ("cafe\u0301", "Visit our café on the first floor."), True),
    ("ligature-in-text", "match", ("file", "Upload the ﬁle from your computer."), True),
    ("ligature-in-fact", "match", ("ﬁle", "Upload the file from your computer."), True),
    ("fullwidth-digits-in-text", "match", ("30", "返金は３０日以内です。"), True),
    ("fullwidth-letters-in-fact", "match", ("ＳＳＯ", "Sign in with SSO."), True),
    ("nbsp", "match", ("30 days", "within 30\u00a0days"), True),
    ("narrow-nbsp", "match", ("30 days", "within 30\u202fdays"), True),
    ("wrapped-line", "match", ("end of the billing period", "Downgrades apply at the end of the\n   billing period."), True),
    ("zero-width-space", "match", ("recovery email", "Add a recov\u200bery email first."), True),
    ("soft-hyphen", "match", ("reset link", "The re\u00adset link expires after 30 minutes."), True),
    ("word-joiner", "match", ("authenticator app", "Use an authenti\u2060cator app."), True),
    ("byte-order-mark", "match", ("settings", "\ufeffSettings > Members"), True),
    ("curly-apostrophe", "match", ("I can't access my email", "Choose “I can’t access my email”."), True),
    ("en-dash-range", "match", ("9-5", "Support hours are 9–5 on weekdays."), True),
    ("case-insensitive", "match", ("ZIP", "You get a .zip archive."), True),
    ("spelling-is-not-normalised", "match", ("e-mail", "Change your email in Settings."), False),
    # --- alternatives and regexes, with the same boundaries
    ("any-second-alternative", "match", (ANY_10, "Late orders get 10 percent back."), True),
    ("any-first-alternative", "match", (ANY_10, "Late orders get 10% back."), True),
    ("any-not-in-110", "match", (ANY_10, "Late orders get 110 percent back."), False),
    ("regex-days", "match", ({"regex": r"\d+ days"}, "Deleted workspaces are kept for 14 days."), True),
    ("regex-obeys-boundaries", "match", ({"regex": "30 days"}, "Kept for 130 days."), False),
    ("regex-optional-plural", "match", ({"regex": r"refunds? within \d+ days"}, "Refund within 30 days."), True),
    # --- abstention: the answer IS "I don't know", not merely quotes it
    ("plain-dont-know", "abstain", "I don't know.", True),
    ("standin-no-context", "abstain", "I don’t know: the help center doesn't cover this. Please contact support.", True),
    ("sorry-couldnt-find", "abstain", "Sorry, but I couldn't find anything about bank transfers in the help center.", True),
    ("unfortunately-not-covered", "abstain", "Unfortunately, the help center doesn't cover bank transfers.", True),
    ("markdown-bold", "abstain", "**I don't know.** Please contact support.", True),
    ("preamble-then-dont-know", "abstain", "Based on the provided context, I don't know.", True),
    ("there-is-no-information", "abstain", "There is no information about bank transfers in the help center.", True),
    ("no-information-needed-is-an-answer", "abstain", "No information is needed to sign up: click Join [invite#1].", False),
    ("quoted-in-real-answer", "abstain", "Refunds take 5 days [refund-policy#1]. We do not know at this time if weekends count.", False),
    ("we-do-not-know-opening", "abstain", "We do not know at this time if weekends count, but refunds take 5 days.", False),
    ("answer-then-dont-know", "abstain", "You can pay by card [plans#1]. I don't know about bank transfers.", False),
    ("no-is-an-answer", "abstain", "No, bank transfers are not supported [plans#1].", False),
    ("german-leider", "abstain", "Leider weiß ich das nicht.", True),
    ("french-dont-know", "abstain", "Je ne sais pas, désolé.", True),
    ("spanish-sorry", "abstain", "Lo siento, no tengo información sobre transferencias bancarias.", True),
    ("hindi-dont-know", "abstain", "मुझे नहीं पता।", True),
    ("hindi-verb-last", "abstain", "इस बारे में मुझे जानकारी नहीं है।", True),
    ("japanese-verb-last", "abstain", "申し訳ありませんが、その情報はわかりません。", True),
    ("japanese-real-answer", "abstain", "Proプランは月額10ドルです。", False),
    ("empty-answer", "abstain", "", False),
    # --- citations: loose brackets and spacing are read; other brackets are not
    ("cite-plain", "cite", "Resets last 30 minutes [reset-password#1].", ["reset-password#1"]),
    ("cite-space-before-hash", "cite", "Ask your IT admin [sso #1].", ["sso#1"]),
    ("cite-padded", "cite", "Ask your IT admin [ sso#1 ].", ["sso#1"]),
    ("cite-lenticular", "cite", "IT 管理者に連絡してください【sso#1】。", ["sso#1"]),
    ("cite-fullwidth", "cite", "IT 管理者に連絡してください［sso#1］。", ["sso#1"]),
    ("cite-two-in-one", "cite", "Pro includes SSO [sso#1, plans#2].", ["sso#1", "plans#2"]),
    ("cite-by-file-name", "cite", "Refunds take 30 days [Refund Policy#2].", ["refund-policy#2"]),
    ("cite-leading-zero", "cite", "See [sso#01].", ["sso#1"]),
    ("not-a-citation-words", "cite", "Click [Save] and then [Done].", []),
    ("not-a-citation-step", "cite", "Repeat [step #2 of 3] twice.", []),
    ("not-a-citation-empty-source", "cite", "See [#3].", []),
    ("check-file-name-with-space", "check", (["30 days"], ["Refund Policy"], "Returns within 30 days [refund policy #1].", REFUND), []),
    ("check-lenticular-passes", "check", (["30 days"], ["Refund Policy"], "Returns within 30 days【refund-policy#1】.", REFUND), []),
    ("check-unknown-chunk", "check", (["30 days"], ["Refund Policy"], "Returns within 30 days [refund-policy#9].", REFUND), ["cites a chunk it was never given (refund-policy#9)"]),
    ("check-wrong-number-fails", "check", (["30 days"], ["Refund Policy"], "Returns within 130 days [refund-policy#1].", REFUND), ['missing "30 days"']),
    ("check-wrong-article-named", "check", (["IT admin"], ["sso"], "Ask your IT admin [plans#1].", {"plans#1": "plans"}), ["wrong article cited (plans#1)"]),
    ("check-any-label", "check", ([ANY_10], ["Refund Policy"], "You get a refund [refund-policy#1].", REFUND), ['missing "10% | 10 percent"']),
    ("slug-space", "slug", "Refund Policy", "refund-policy"),
    ("slug-punctuation", "slug", "FAQ (2024)", "faq-2024"),
    ("slug-umlaut", "slug", "Über uns", "über-uns"),
    ("slug-japanese", "slug", "返金 ポリシー", "返金-ポリシー"),
    # --- lists and languages (claims/tokeniser helper)
    ("german-word", "match", ("Rückerstattung", "Die Rückerstattung dauert 14 Tage."), True),
    ("german-compound-is-another-word", "match", ("Rückerstattung", "Rückerstattungsanträge stellen Sie online."), False),
    ("hindi-nukta-precomposed-vs-combining", "match", ("\u095eीस", "इस प्लान की \u092b\u093cीस 500 रुपये है।"), True),
    ("hindi-vowel-sign-continues-word", "match", ("कम", "इस महीने कमी है।"), False),
    ("japanese-no-spaces", "match", ("返金", "返金は14日以内に処理されます。"), True),
    ("japanese-number-boundary", "match", ("14日", "返金は114日以内に処理されます。"), False),
    ("japanese-fullwidth-number", "match", ("14日", "返金は１４日以内に処理されます。"), True),
    ("claims-numbered-inline", "claims", ("1. Go to Settings. 2. Click Save.", "en"), ["Go to Settings", "Click Save"]),
    ("claims-numbered-lines-lead-in", "claims", ("Here's how:\n1. Open Settings.\n2. Click Save.", "en"), ["Open Settings", "Click Save"]),
    ("claims-dash-bullets", "claims", ("- Open Settings\n- Click Save", "en"), ["Open Settings", "Click Save"]),
    ("claims-paren-numbers", "claims", ("1) Open Settings\n2) Click Save", "en"), ["Open Settings", "Click Save"]),
    ("claims-letter-items", "claims", ("a. Open the app. b. Tap Save.", "en"), ["Open the app", "Tap Save"]),
    ("claims-only-list-numbers", "claims", ("1. 2. 3.", "en"), []),
    ("claims-eg-does-not-split", "claims", ("Pick a plan, e.g. Team or Business.", "en"), ["Pick a plan", "e.g. Team or Business"]),
    ("claims-dr-does-not-split", "claims", ("Dr. Lee signs off refunds.", "en"), ["Dr. Lee signs off refunds"]),
    ("claims-pm-mid-sentence", "claims", ("Support closes at 6 p.m. on Fridays.", "en"), ["Support closes at 6 p.m. on Fridays"]),
    ("claims-pm-ends-sentence", "claims", ("Order before 3 p.m. We ship the same day.", "en"), ["Order before 3 p.m.", "We ship the same day"]),
    ("claims-decimal", "claims", ("The fee is 2.5% per order. It is billed monthly.", "en"), ["The fee is 2.5% per order", "It is billed monthly"]),
    ("claims-quoted-question-mark", "claims", ('Click "Forgot password?" on the sign-in page.', "en"), ['Click "Forgot password?" on the sign-in page']),
    ("claims-japanese-maru", "claims", ("返金は30日以内です。送料は無料です。", "ja"), ["返金は30日以内です", "送料は無料です"]),
    ("claims-japanese-hiragana-reply-no-claim", "claims", ("返金できますか？はい、できます。", "ja"), ["返金できますか"]),
    ("claims-hindi-danda", "claims", ("धनवापसी 7 दिनों में होती है। डिलीवरी मुफ़्त है।", "hi"), ["धनवापसी 7 दिनों में होती है", "डिलीवरी मुफ़्त है"]),
    ("support-numbered-list", "support", ("1. Go to Settings. 2. Click Save.", "Go to Settings, then click Save.", "en"), [True, True]),
    ("support-japanese-bigrams", "support", ("返金は30日以内に申請できます。", "返金は購入後30日以内に申請できます。", "ja"), [True]),
    ("support-japanese-wrong-number", "support", ("返金は60日以内に申請できます。", "返金は購入後30日以内に申請できます。", "ja"), [False]),
    ("support-hindi-stemmed", "support", ("धनवापसी 7 दिन में मिलती है।", "धनवापसी 7 दिनों के भीतर मिलती है।", "hi"), [True]),
    ("support-german-stemmed", "support", ("Rückerstattungen dauern 5 Werktage.", "Eine Rückerstattung dauert 5 Werktage.", "de"), [True]),
    ("support-german-unstemmed-in-en", "support", ("Rückerstattungen dauern 5 Werktage.", "Eine Rückerstattung dauert 5 Werktage.", "en"), [False]),
    ("support-fullwidth-digits", "support", ("Refunds take ３０ days.", "Refunds take 30 days.", "en"), [True]),
    ("tokens-german-umlaut", "tokens", "Rückerstattung", ["rückerstattung"]),
    ("tokens-hindi-vowel-signs", "tokens", "धनवापसी", ["धनवापसी"]),
    ("tokens-japanese-bigrams", "tokens", "パスワード", ["パス", "スワ", "ワー", "ード"]),
    ("tokens-eszett-folds", "tokens", "STRASSE Straße", ["strasse", "strasse"]),
]
# fmt: on


def verdict(kind: str, inputs: Any) -> Any:
    if kind == "match":
        fact, text = inputs
        return contains(parse_fact(fact), text)
    if kind == "abstain":
        return abstains(inputs)
    if kind == "cite":
        return citations(inputs)
    if kind == "check":
        facts, sources, answer, given = inputs
        return check_answer([parse_fact(f) for f in facts], sources, answer, given)
    if kind == "slug":
        return slug(inputs)
    if kind == "claims":
        answer, language = inputs
        return split_claims(answer, language)
    if kind == "support":
        answer, context, language = inputs
        return [v.supported for v in check_claims(answer, [context], language)]
    if kind == "tokens":
        return tokens(inputs)
    raise AssertionError(f"unknown kind {kind}")


def test_the_table_is_large_and_ids_are_unique():
    assert len(CASES) >= 60
    assert len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize(
    ("case_id", "kind", "inputs", "expected"), CASES, ids=[c[0] for c in CASES]
)
def test_real_text(case_id: str, kind: str, inputs: Any, expected: Any) -> None:
    assert verdict(kind, inputs) == expected
