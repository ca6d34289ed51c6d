"""Deterministic faithfulness, on the second article's four late-refund scenarios."""

from __future__ import annotations

import pytest

from ragrail.scoring.answers import answer_correctness
from ragrail.scoring.claims import check_claims, faithfulness, numbers, split_claims

GOOD = [
    "10% refund for orders over 30 min late",
    "late refunds capped at ₹150",
    "wallet refunds are instant",
]
NOISY = [
    "Gold costs ₹149/month",
    "10% refund for orders over 30 min late",
    "tips go to the partner",
]
FACTS = ["10%", "₹150"]


def faith(answer: str, context: list[str]) -> float | None:
    return faithfulness(check_claims(answer, context))


def test_split_claims():
    assert split_claims(
        "You get a 10% refund [p#1], capped at ₹150 [p#2], and a free voucher."
    ) == ["You get a 10% refund", "capped at ₹150", "a free voucher"]
    assert split_claims("First. Second one!\n- third item\n* fourth") == [
        "First",
        "Second one",
        "third item",
        "fourth",
    ]
    assert split_claims("Yes. Thanks!") == []  # no content word, no number: not a claim
    assert split_claims("") == []


def test_numbers_must_match_exactly():
    assert numbers("10% off, ₹1,500 or 30 min, v2") == {"10%", "1500", "30"}
    assert not check_claims("capped at ₹150", NOISY)[0].supported  # ₹149 is not ₹150


@pytest.mark.parametrize(
    ("answer", "context", "faithful", "correct"),
    [
        ("You get a 10% refund, capped at ₹150.", GOOD, 1.0, 1.0),
        ("You get a 10% refund, capped at ₹150, and a free dessert voucher.", GOOD, 2 / 3, 1.0),
        ("You get a 10% refund, capped at ₹150.", NOISY, 0.5, 1.0),
        ("You get a 10% refund.", GOOD, 1.0, 0.5),
    ],
    ids=["right", "voucher", "noisy", "only-10"],
)
def test_the_four_scenarios(answer, context, faithful, correct):
    assert faith(answer, context) == pytest.approx(faithful)
    assert answer_correctness(FACTS, answer) == correct


def test_no_claims_is_undefined_and_content_words_need_half_coverage():
    assert faith("Thanks!", GOOD) is None
    verdicts = check_claims("wallet refunds arrive by carrier pigeon", GOOD)
    assert not verdicts[0].supported and "content words" in verdicts[0].reason
    assert check_claims("refunds to the wallet are instant", GOOD)[0].supported


@pytest.mark.parametrize(
    ("answer", "claims"),
    [
        # numbered lists: the numbers are labels, not claims
        ("1. Go to Settings. 2. Click Save.", ["Go to Settings", "Click Save"]),
        ("1. Go to Settings.\n2. Click Save.", ["Go to Settings", "Click Save"]),
        ("1) Open Settings\n2) Click Save", ["Open Settings", "Click Save"]),
        ("(1) Open the app (2) Tap Save", ["Open the app", "Tap Save"]),
        ("a. Open the app. b. Tap Save.", ["Open the app", "Tap Save"]),
        ("- Open Settings\n- Click Save", ["Open Settings", "Click Save"]),
        ("• Open Settings\n• Click Save", ["Open Settings", "Click Save"]),
        # a lead-in line ending in a colon is not a claim; a bare list of numbers says nothing
        ("Here are the steps:\n1. Open Settings.\n2. Click Save.", ["Open Settings", "Click Save"]),
        ("1. 2. 3.", []),
        ("See 10%.", ["See 10%"]),
        # abbreviations do not end sentences
        (
            "Use a passphrase, e.g. Three random words. Dr. Smith approves refunds.",
            ["Use a passphrase", "e.g. Three random words", "Dr. Smith approves refunds"],
        ),
        (
            "Mr. and Mrs. Lee share one plan vs. two seats.",
            ["Mr. and Mrs. Lee share one plan vs. two seats"],
        ),
        ("Ask for order No. 5 in the U.S. office.", ["Ask for order No. 5 in the U.S. office"]),
        ("The answer is no. Call us.", ["The answer is no", "Call us"]),
        ("Refunds take approx. 5 days, etc.", ["Refunds take approx. 5 days"]),
        ("Pages, files, etc. Stay with you.", ["Pages", "files", "Stay with you"]),
        # times: a.m./p.m. end a sentence only before a capital letter
        ("We open at 10 a.m. on weekdays.", ["We open at 10 a.m. on weekdays"]),
        (
            "Call before 3 p.m. We ship the same day.",
            ["Call before 3 p.m.", "We ship the same day"],
        ),
        # decimals are not sentence ends
        (
            "The fee is 2.5% of the total. Refunds take 5 days.",
            ["The fee is 2.5% of the total", "Refunds take 5 days"],
        ),
        # a quoted "?" inside a sentence does not end it
        (
            'Click "Forgot password?" on the sign-in page.',
            ['Click "Forgot password?" on the sign-in page'],
        ),
        # Japanese, Chinese-style full-width and Hindi sentence ends
        (
            "返金は購入後30日以内に申請できます。パスワードは設定画面から変更できます！",
            ["返金は購入後30日以内に申請できます", "パスワードは設定画面から変更できます"],
        ),
        ("「返金は30日以内です。」次に申請します？", ["返金は30日以内です", "次に申請します"]),
        (
            "धनवापसी 30 दिनों में होती है। पासवर्ड सेटिंग्स में बदलें।",
            ["धनवापसी 30 दिनों में होती है", "पासवर्ड सेटिंग्स में बदलें"],
        ),
        ("هل يمكنني الاسترداد؟ نعم خلال 30 يوما", ["هل يمكنني الاسترداد", "نعم خلال 30 يوما"]),
        # citations with spaces or full-width brackets are removed
        (
            "Refunds take 5 days [refunds #2] and 【faq#1】 arrive by card.",
            ["Refunds take 5 days", "arrive by card"],
        ),
        # the comma after e.g. / i.e. opens an example, it does not end the claim
        (
            'Pick a custom name (e.g., "export-data") for the file.',
            ['Pick a custom name (e.g., "export-data") for the file'],
        ),
        ("Use a long password, i.e., 12 characters.", ["Use a long password", "i.e., 12 characters"]),
    ],
)
def test_split_claims_real_text(answer: str, claims: list[str]):
    assert split_claims(answer) == claims


def test_a_numbered_list_answer_is_faithful_to_its_context():
    context = ["Go to Settings, then click Save."]
    verdicts = check_claims("1. Go to Settings. 2. Click Save.", context)
    assert [(v.claim, v.supported) for v in verdicts] == [
        ("Go to Settings", True),
        ("Click Save", True),
    ]
    assert faithfulness(verdicts) == 1.0


def test_numbers_in_any_digits_and_glued_to_han():
    assert numbers("購入後30日以内") == {"30"}  # Han before a number is no name like "v2"
    assert numbers("３０％ off") == {"30%"}
    assert numbers("३० दिन") == {"30"}
    assert numbers("v2 mp3 x_5") == set()
    assert numbers("₹1,500 or 2.5%") == {"1500", "2.5%"}


def test_claims_checked_in_japanese_and_hindi():
    ja = ["返金は購入後30日以内に申請できます。"]
    verdicts = check_claims("返金は30日以内に申請できます。送料は無料です。", ja, "ja")
    assert [(v.claim, v.supported) for v in verdicts] == [
        ("返金は30日以内に申請できます", True),
        ("送料は無料です", False),  # no bigram of 送料 or 無料 in the context
    ]
    assert check_claims("返金は60日以内に申請できます。", ja, "ja")[0].reason == (
        "number 60 not in the context"
    )
    hi = ["धनवापसी 7 दिनों के भीतर मिलती है।"]
    # दिन and दिनों are one term under the Hindi stemmer
    assert check_claims("धनवापसी 7 दिन में मिलती है।", hi, "hi")[0].supported
    assert not check_claims("पासवर्ड ईमेल से बदलें।", hi, "hi")[0].supported
