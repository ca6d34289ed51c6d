"""The baseline a pull request reviews: per-question verdicts and scores, nothing else.

A baseline is what ``--save-baseline`` accepts and what the next run is
compared with. It keeps only what :func:`ragrail.diff.compare` and a
reviewer need: the run's configuration, fingerprints of the documents and the
golden set, the totals, and per question its retrieval and answer verdicts,
whether it errored, its failure cause and its metric values. Prompts, traces,
latency, usage, timestamps and ragrail's version are left out, and so are the
article-level ranking metrics and the totals' intervals, both derived (the run
history and ``--json`` keep the whole run), so accepting an unchanged run
rewrites a byte-identical file and a real model's diff shows only verdicts that
moved.

The file is deterministic: keys sorted, scores rounded to six significant
digits (so float noise in the last bits never shows up as a diff), each
question a block of a few lines holding its id, so a diff names the question
that changed. Older baselines (a whole saved run, ``schema_version`` 1) still
load, into the same structure.

Format (version 3)::

    {
      "cases": [
        {
          "answer": {"checks": {"behaviour": 1, "citation": 1, "fact: 24 hours": 1},
                     "pass": true, "passes": 1, "problems": [], "runs": 1},
          "cause": null,
          "errored": false,
          "id": "link-expiry",
          "metrics": {"context_precision": 0.5, ...},
          "retrieval": {"facts": 1, "found": ["30 minutes"], "hit": true, "recall": 1.0,
                        "retrieved": 1}
        }
      ],
      "config": {...},
      "fingerprints": {"docs": "sha256:...", "golden": "sha256:..."},
      "format": "ragrail-baseline",
      "totals": {...},
      "version": 3
    }

(the answer is one line in the file). ``answer.checks`` names each check the answers
faced (``ragrail.records.results.CHECK_NAMES``) with the number of them in which it held
(a judge criterion: 1 or 0, its majority verdict), and ``retrieval.found`` the facts
retrieval found: the diff compares them one by one, so a question that already failed
can still get WORSE. Version 2 files, which kept neither, still load and are compared by
their verdicts alone.
"""

from ragrail.store.baseline.read import load_baseline, parse_baseline
from ragrail.store.baseline.records import (
    CASE_METRICS,
    FORMAT,
    SIGNIFICANT_DIGITS,
    VERSION,
    Baseline,
    BaselineCase,
    rounded,
)
from ragrail.store.baseline.write import (
    fingerprint_docs,
    fingerprint_file,
    fingerprints,
    save_baseline,
)

__all__ = [
    "CASE_METRICS",
    "FORMAT",
    "SIGNIFICANT_DIGITS",
    "VERSION",
    "Baseline",
    "BaselineCase",
    "fingerprint_docs",
    "fingerprint_file",
    "fingerprints",
    "load_baseline",
    "parse_baseline",
    "rounded",
    "save_baseline",
]
