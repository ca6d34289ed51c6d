"""A small question-answering app written the way LlamaIndex's defaults build one: Markdown
files split into sentence chunks, a BM25 retriever, and a generator whose answers carry no
citation markers. Its sources are file names (``metadata["file_name"]``) and its node ids
are opaque, as a framework's are. ``app_settings.json`` beside it says how it runs, so a
test can change the app between runs the way a developer would."""

from __future__ import annotations

import json
import math
import re
import uuid
from pathlib import Path

HERE = Path(__file__).parent
WORD = re.compile(r"[a-z0-9_@]+")
# BM25Retriever drops English stop words before scoring
STOP = frozenset(
    "a an and are as at be by can do does for from how i if in is it its my of on or "
    "the to what when where which who why will with you your".split()
)


def terms(text: str) -> list[str]:
    return [w for w in WORD.findall(text.lower()) if w not in STOP]


def settings() -> dict:
    return json.loads((HERE / "app_settings.json").read_text(encoding="utf-8"))


def split(text: str, chunk_size: int) -> list[str]:
    """Sentences packed into chunks of at most ``chunk_size`` words (a paragraph never
    shares a chunk with the next), as a sentence splitter does."""
    chunks = []
    for para in re.split(r"\n\s*\n", text):
        para = " ".join(para.split())
        if not para or para.startswith("#"):
            continue
        current: list[str] = []
        for sentence in re.split(r"(?<=[.!?])\s+", para):
            words = len(" ".join([*current, sentence]).split())
            if current and words > chunk_size:
                chunks.append(" ".join(current))
                current = []
            current.append(sentence)
        if current:
            chunks.append(" ".join(current))
    return chunks


def nodes(chunk_size: int) -> list[dict]:
    out = []
    for path in sorted((HERE / "docs").glob("*.md")):
        for i, text in enumerate(split(path.read_text(encoding="utf-8"), chunk_size)):
            node_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{path.name}/{i}/{chunk_size}"))
            out.append({"id": node_id, "file_name": path.name, "text": text})
    return out


def bm25(query: str, index: list[dict], k1: float = 1.2, b: float = 0.75) -> list[float]:
    docs = [terms(n["text"]) for n in index]
    avg = sum(map(len, docs)) / len(docs)
    scores = []
    for words in docs:
        score = 0.0
        for term in set(terms(query)):
            df = sum(1 for d in docs if term in d)
            tf = words.count(term)
            if tf:
                idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
                score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(words) / avg))
        scores.append(score)
    return scores


def answer(question: str) -> dict:
    s = settings()
    index = nodes(s["chunk_size"])
    scores = bm25(question, index)
    ranked = sorted(range(len(index)), key=lambda i: -scores[i])[: s["top_k"]]
    contexts = [
        {
            "id": index[i]["id"],
            "source": index[i]["file_name"],
            "text": index[i]["text"],
            "score": round(scores[i], 4),
        }
        for i in ranked
    ]
    used = contexts[: 2 if s["mode"] == "better" else 1]
    if s["mode"] == "constant":
        text = "Please see the quill documentation."
    elif not contexts or contexts[0]["score"] < s.get("min_score", 2.0):
        text = "I don't know: the documentation does not cover that."
        used = []
    else:
        text = " ".join(c["text"] for c in used)
    reply = {
        "answer": text,
        "contexts": contexts,
        "settings": {"chunk_size": s["chunk_size"], "top_k": s["top_k"]},
    }
    if s.get("cited"):
        reply["cited"] = [c["id"] for c in used]
    return reply
