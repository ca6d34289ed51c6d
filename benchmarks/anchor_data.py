"""The shared anchor data, rebuilt here so the project reads nothing outside itself.

Synthetic, deterministic (seed 20240601, the standard library's ``random`` only):
a 5,000-word vocabulary of pseudo-words, 2,000 articles of 10 chunks of 40-60 words,
and N questions. Each question names an article and 1 or 2 facts (a 3-6-word run
copied from one of its chunks); three contexts are "retrieved": each fact's chunk
with probability 0.8 at a random rank, other random chunks in the free slots.

The random calls are made in the same order as the peer benchmark's generator, so
the same seed gives the same questions, and the first 2,000 questions of any N are
the same. :func:`write_project` turns them into a ragrail project that scores the
precomputed retrieval (``[system] kind = "outputs"``): the answer is the first
retrieved context followed by its citation, as the stand-in answerer would give.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Iterator
from pathlib import Path

SEED = 20240601
VOCAB, ARTICLES, PER_ARTICLE = 5_000, 2_000, 10
CHUNK_WORDS, FACT_WORDS, RETRIEVED, P_HIT = (40, 60), (3, 6), 3, 0.8


def _vocabulary(rng: random.Random) -> list[str]:
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < VOCAB:
        word = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 10)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def questions(n: int, seed: int = SEED) -> Iterator[dict]:
    """The first ``n`` anchor questions, each with its facts and retrieved chunk ids/texts."""
    rng = random.Random(seed)
    vocab = _vocabulary(rng)
    chunks = [
        [vocab[rng.randrange(VOCAB)] for _ in range(rng.randint(*CHUNK_WORDS))]
        for _ in range(ARTICLES * PER_ARTICLE)
    ]
    texts = [" ".join(words) for words in chunks]
    for q in range(n):
        article = rng.randrange(ARTICLES)
        facts = []
        for _ in range(rng.randint(1, 2)):
            cid = article * PER_ARTICLE + rng.randrange(PER_ARTICLE)
            words = chunks[cid]
            length = rng.randint(*FACT_WORDS)
            start = rng.randrange(len(words) - length + 1)
            facts.append((" ".join(words[start : start + length]), cid))
        wanted = sorted({cid for _, cid in facts})
        hits = [cid for cid in wanted if rng.random() < P_HIT]
        slots: list[int | None] = [None] * RETRIEVED
        for pos, cid in zip(rng.sample(range(RETRIEVED), len(hits)), hits, strict=True):
            slots[pos] = cid
        used = set(wanted)
        for i in range(RETRIEVED):
            if slots[i] is None:
                while (cid := rng.randrange(len(texts))) in used:
                    pass
                used.add(cid)
                slots[i] = cid
        yield {
            "qid": f"q{q}",
            "article": article,
            "question": "what is said about " + " and ".join(t for t, _ in facts) + "?",
            "facts": [t for t, _ in facts],
            "retrieved": [(cid, texts[cid]) for cid in slots if cid is not None],
        }


TOML = """\
name = "anchor-{n}"
product = "anchor"
golden = "golden.jsonl"
baseline = "baseline.json"

[system]
kind = "outputs"
path = "outputs.jsonl"
"""


def _ref(cid: int) -> tuple[str, str]:
    source = f"a{cid // PER_ARTICLE}"
    return f"{source}#{cid % PER_ARTICLE + 1}", source


def write_project(n: int, out: Path) -> Path:
    """Write an outputs project for the first ``n`` questions; return its ragrail.toml."""
    out.mkdir(parents=True, exist_ok=True)
    with (
        open(out / "golden.jsonl", "w", encoding="utf-8") as golden,
        open(out / "outputs.jsonl", "w", encoding="utf-8") as outputs,
    ):
        for q in questions(n):
            case = {
                "id": q["qid"],
                "question": q["question"],
                "sources": [f"a{q['article']}"],
                "facts": q["facts"],
            }
            golden.write(json.dumps(case, ensure_ascii=False) + "\n")
            contexts = []
            for rank, (cid, text) in enumerate(q["retrieved"]):
                ident, source = _ref(cid)
                contexts.append(
                    {"id": ident, "source": source, "text": text, "score": round(1.0 - 0.1 * rank, 1)}
                )
            answer = f"{contexts[0]['text']} [{contexts[0]['id']}]"
            row = {"id": q["qid"], "answer": answer, "contexts": contexts}
            outputs.write(json.dumps(row, ensure_ascii=False) + "\n")
    (out / "ragrail.toml").write_text(TOML.format(n=n), encoding="utf-8")
    return out / "ragrail.toml"
