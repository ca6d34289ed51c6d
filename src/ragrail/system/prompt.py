"""The prompt a model sees, and an estimate of its size in tokens."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ragrail.system.corpus import Chunk

DEFAULT_TEMPLATE = """\
You are the support assistant for {product}. Answer the customer's question using only \
the help-center excerpts below. After each sentence, cite the excerpt it comes from by \
its id in square brackets, for example [{example_id}]. Keep the answer short and use the \
exact names of buttons and menus from the excerpts. If the excerpts do not answer the \
question, reply "I don't know" and suggest contacting support; never guess.

Excerpts:
{excerpts}

Question: {question}
"""


def format_excerpts(chunks: Sequence[Chunk]) -> str:
    return "\n\n".join(f"[{c.id}] {c.text}" for c in chunks) or "(none)"


def build_prompt(
    question: str, chunks: Sequence[Chunk], product: str, template: str = DEFAULT_TEMPLATE
) -> str:
    """Fill the template. ``{product}``, ``{excerpts}``, ``{question}`` and ``{example_id}``
    are the placeholders a custom template may use."""
    example_id = chunks[0].id if chunks else "article#1"
    return template.format(
        product=product,
        excerpts=format_excerpts(chunks),
        question=question.strip(),
        example_id=example_id,
    )


def estimate_tokens(text: str) -> int:
    """Estimated token count: ``ceil(characters / 4)``.

    Four characters per token is the usual rule of thumb for English with BPE
    tokenizers (Claude's and OpenAI's); it is an estimate, shown with ``~``.
    Real runs report the provider's own counts from the API's usage fields.
    """
    return math.ceil(len(text) / 4)
