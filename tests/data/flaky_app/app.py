"""A system whose answers vary from call to call, as a real model's do at temperature > 0:
the issue-24 simulation. Item i's code is ``K{i:03d}X``; a right answer states it, a wrong
one does not. Retrieval is exact (the item's line), so only the answers vary.

- items 0-149 are answered right every time (in ``FLAKY_MODE=worse``, items 0-9 only 10%
  of the time: a regression of ten questions);
- items 150-159 never;
- items 160-199 60% of the time.

``FLAKY_SEED`` seeds the draws, so a test run is the same every time; a sync function is
called one question at a time, so the order of the draws is fixed too.

``python app.py`` writes golden.jsonl and docs/items.md.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

N = 200
_rng = random.Random(int(os.environ.get("FLAKY_SEED", "0")))
_MODE = os.environ.get("FLAKY_MODE", "same")


def code(i: int) -> str:
    return f"K{i:03d}X"


def line(i: int) -> str:
    return f"The code of item {i} is {code(i)}."


def chance(i: int) -> float:
    """How often item ``i`` is answered right."""
    if i < 10 and _MODE == "worse":
        return 0.1
    if i < 150:
        return 1.0
    if i < 160:
        return 0.0
    return 0.6


def answer(question: str) -> dict:
    i = int(question.rsplit(" ", 1)[1].rstrip("?"))
    right = _rng.random() < chance(i)
    text = line(i) if right else f"Item {i} has a code, listed in the catalogue."
    context = {"id": f"items#{i}", "source": "items", "text": line(i)}
    return {"answer": text, "contexts": [context]}


def write(folder: Path) -> None:
    cases = [
        {
            "id": f"item-{i}",
            "question": f"What is the code of item {i}?",
            "facts": [code(i)],
            "sources": ["items"],
        }
        for i in range(N)
    ]
    (folder / "golden.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (folder / "docs").mkdir(exist_ok=True)
    (folder / "docs" / "items.md").write_text("# Items\n\n" + "\n".join(line(i) for i in range(N)) + "\n")


if __name__ == "__main__":
    write(Path(__file__).parent)
