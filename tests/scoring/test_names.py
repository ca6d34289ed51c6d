"""A document as apps name it: one reader for import placement and a system's sources."""

from __future__ import annotations

import pytest

from ragrail.text.names import DocumentNames, name_keys

NAMES = DocumentNames(["npm-ci", "Refund Policy", "v1.2-notes"])


@pytest.mark.parametrize(
    "given",
    [
        "npm-ci",
        "npm-ci.md",
        "docs/npm-ci.md",
        "docs\\npm-ci.md",
        "/home/me/app/docs/npm-ci.md",
        "https://x/docs/npm-ci.html",
        "https://x/docs/npm-ci.html?v=2#usage",
        "https://x/docs/npm-ci/",
        "NPM-CI",
        "NPM-CI.MD",
        "npm-ci#3",  # a chunk id
        "  npm-ci.md ",
    ],
)
def test_a_name_file_name_path_or_url_names_the_document(given):
    assert NAMES.find(given) == "npm-ci"


def test_a_title_in_other_case_or_as_a_slug_names_its_document():
    assert NAMES.find("refund policy") == "Refund Policy"
    assert NAMES.find("refund-policy.md") == "Refund Policy"
    assert NAMES.find("Refund Policy#2") == "Refund Policy"


def test_a_name_with_a_dot_is_matched_whole_before_its_extension_is_dropped():
    assert NAMES.find("v1.2-notes") == "v1.2-notes"
    assert NAMES.find("docs/v1.2-notes.md") == "v1.2-notes"


@pytest.mark.parametrize("given", [None, "", "  ", "npm", "npm-ci-extra.md", "5f1c-uuid"])
def test_what_names_no_document_is_none(given):
    assert NAMES.find(given) is None


def test_membership_is_a_documents_own_name_only():
    assert "npm-ci" in NAMES and "npm-ci.md" not in NAMES and "refund policy" not in NAMES
    assert len(NAMES) == 3 and len(DocumentNames([])) == 0


def test_the_keys_go_from_most_exact_to_slug():
    assert name_keys(" Docs/Refund Policy.MD?x=1 ") == (
        "Docs/Refund Policy.MD?x=1",
        "Refund Policy.MD",
        "Refund Policy",
        "refund policy",
        "refund-policy",
    )


def test_an_exact_name_wins_over_one_that_differs_only_by_case():
    from ragrail.text.names import DocumentNames

    names = DocumentNames(["LOGS", "logs"])
    assert names.find("logs.md") == "logs"
    assert names.find("LOGS.md") == "LOGS"
    assert names.find("Logs") == "logs"  # case-folded, it is one of the exact names
