"""Bring data from other tools, and take runs to them.

Importers (one module per format: :mod:`~ragrail.interop.ragas`,
:mod:`~ragrail.interop.hf`, :mod:`~ragrail.interop.deepeval`,
:mod:`~ragrail.interop.promptfoo`, :mod:`~ragrail.interop.openinference`) read a
file as the tool writes it into raw cases; :mod:`~ragrail.interop.common` labels
them and writes a golden set and an outputs file, placing each passage in the
documents (:mod:`~ragrail.interop.placing`); a conversation's messages become its turns
(:mod:`~ragrail.interop.conversations`). Exporters write a run as TREC run
and qrels files (:mod:`~ragrail.interop.trec`), a RAGAS dataset or DeepEval goldens. The commands'
work (checks, reading, placing, writing) is :mod:`ragrail.app.interop`; their flags and
lines are ``ragrail.cli.interop``.
"""
