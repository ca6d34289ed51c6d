"""The ground floor's records: the typed data every stage of the flow shares.

``case`` (a golden-set case, its label types and expected behaviour), ``results`` (a run:
its configuration, per-question traces and scores, totals), ``verdicts`` (the LLM judge's),
``base`` and ``lean`` (the model base classes), ``frames`` (runs as pandas frames). Records
import nothing above this floor: text helpers, errors and file reading only.
"""
