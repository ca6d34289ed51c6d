"""The dense retriever's embeddings cache (ragrail.system.embeddings).

Most tests stand a counting fake in for the model (deterministic float32 vectors from
each text's hash), so they check the cache, not torch. The tests marked ``real`` load
all-MiniLM-L6-v2 and skip without the semantic extra (unless RAGRAIL_REQUIRE_SEMANTIC=1).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from ragrail.system.embeddings import (
    Embedder,
    EmbeddingCache,
    ModelKey,
    progress_bar,
    text_hash,
)

KEY = ModelKey("fake@1", 8)


class FakeModel:
    """Counts what it is asked to encode; a text's vector depends on the text alone."""

    def __init__(self, dim: int = 8) -> None:
        self.texts: list[str] = []
        self.dim = dim

    def encode(self, texts: list[str], **kwargs: object) -> np.ndarray:
        self.texts.extend(texts)
        return np.stack([fake_vector(t, self.dim) for t in texts])


def fake_vector(text: str, dim: int = 8) -> np.ndarray:
    seed = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


def embedder(path: Path | None, key: ModelKey = KEY) -> tuple[Embedder, list[FakeModel]]:
    """An Embedder over the cache at ``path``; the list holds the model once it is loaded."""
    loaded: list[FakeModel] = []

    def load() -> FakeModel:
        loaded.append(FakeModel(key.dim or 8))
        return loaded[-1]

    return Embedder(EmbeddingCache(path), key, load, progress=False), loaded


TEXTS = [f"section {i}: " + "how to reset a password " * (i % 5 + 1) for i in range(70)]


def test_a_second_build_encodes_nothing_and_never_loads_the_model(tmp_path):
    path = tmp_path / "embeddings.sqlite"
    first, loaded = embedder(path)
    cold = first.embed(TEXTS, "passage", 16)
    assert len(loaded[0].texts) == 70
    assert (first.stats["passage"].encoded, first.stats["passage"].cached) == (70, 0)

    again, loaded_again = embedder(path)
    warm = again.embed(TEXTS, "passage", 16)
    assert loaded_again == []  # every vector came from the cache: no model at all
    assert (again.stats["passage"].encoded, again.stats["passage"].cached) == (0, 70)
    assert warm.dtype == np.float32 and np.array_equal(warm, cold)  # bit for bit
    assert again.summary("passage", "chunks") == "70 chunks: 0 encoded, 70 from the cache"


def test_changed_text_re_encodes_only_that_chunk(tmp_path):
    path = tmp_path / "embeddings.sqlite"
    embedder(path)[0].embed(TEXTS, "passage", 16)
    edited = [*TEXTS]
    edited[3] = TEXTS[3] + "."  # one character
    e, loaded = embedder(path)
    out = e.embed(edited, "passage", 16)
    assert loaded[0].texts == [edited[3]]
    assert (e.stats["passage"].encoded, e.stats["passage"].cached) == (1, 69)
    assert np.array_equal(out[3], fake_vector(edited[3]))


def test_a_model_that_contradicts_its_dimension_is_a_system_failure(tmp_path):
    from ragrail.errors import SystemFailure

    e = Embedder(EmbeddingCache(None), ModelKey("fake@1", 16), FakeModel, progress=False)
    with pytest.raises(SystemFailure, match="pooling config"):
        e.embed(["a"], "passage", 16)


def test_another_model_or_kind_never_reuses_a_vector(tmp_path):
    path = tmp_path / "embeddings.sqlite"
    embedder(path)[0].embed(TEXTS[:5], "passage", 16)
    other, loaded = embedder(path, ModelKey("fake@2", 8))
    other.embed(TEXTS[:5], "passage", 16)
    assert len(loaded[0].texts) == 5
    query, loaded = embedder(path)
    query.embed(TEXTS[:5], "query", 16)
    assert len(loaded[0].texts) == 5


def test_duplicate_texts_are_encoded_once(tmp_path):
    e, loaded = embedder(tmp_path / "embeddings.sqlite")
    out = e.embed(["a", "b", "a"], "passage", 16)
    assert loaded[0].texts.count("a") == 1
    assert np.array_equal(out[0], out[2])
    assert e.stats["passage"].encoded == 3  # per text asked for: encoded + cached = 3


def test_no_cache_encodes_every_time_and_writes_nothing(tmp_path):
    for _ in range(2):
        e, loaded = embedder(None)
        e.embed(TEXTS[:4], "passage", 16)
        assert len(loaded[0].texts) == 4
    assert list(tmp_path.iterdir()) == []


def test_texts_are_encoded_in_the_models_own_batches(tmp_path):
    """Longest first, batch_size to a call: the batches one encode() call would make, so
    an all-miss run gives the vectors a run without the cache gives."""
    calls: list[list[str]] = []

    class Recording(FakeModel):
        def encode(self, texts: list[str], **kwargs: object) -> np.ndarray:
            calls.append(list(texts))
            return super().encode(texts, **kwargs)

    e = Embedder(EmbeddingCache(tmp_path / "e.sqlite"), KEY, Recording, progress=False)
    e.embed(["bb", "a", "dddd", "ccc", "eeeee"], "passage", 2)
    assert calls == [["eeeee", "dddd"], ["ccc", "bb"], ["a"]]


def test_a_corrupt_cache_file_is_moved_aside_with_one_warning(tmp_path):
    path = tmp_path / ".ragrail" / "embeddings.sqlite"
    path.parent.mkdir()
    path.write_bytes(b"garbage" * 1000)
    with pytest.warns(UserWarning, match="moved it to embeddings.sqlite.corrupt-"):
        e, _ = embedder(path)
    e.embed(TEXTS[:3], "passage", 16)
    assert len(list(path.parent.glob("embeddings.sqlite.corrupt-*"))) == 1
    again, loaded = embedder(path)
    again.embed(TEXTS[:3], "passage", 16)
    assert loaded == []  # the fresh file kept this run's vectors


@pytest.mark.parametrize("blob", [b"\x00" * 12, np.full(8, np.nan, dtype="<f4").tobytes(), "text"])
def test_a_damaged_row_is_a_miss_and_is_replaced(tmp_path, blob):
    path = tmp_path / "embeddings.sqlite"
    embedder(path)[0].embed(TEXTS[:2], "passage", 16)
    db = sqlite3.connect(path)
    db.execute("UPDATE embeddings SET vector = ? WHERE sha = ?", (blob, text_hash(TEXTS[0])))
    db.commit()
    db.close()
    e, loaded = embedder(path)
    out = e.embed(TEXTS[:2], "passage", 16)
    assert loaded[0].texts == [TEXTS[0]]
    assert np.array_equal(out[0], fake_vector(TEXTS[0]))
    repaired, loaded = embedder(path)
    repaired.embed(TEXTS[:2], "passage", 16)
    assert loaded == []  # the fresh vector replaced the damaged row


def test_an_unusable_cache_costs_one_warning_and_the_run_goes_on(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.warns(UserWarning, match="cannot use the embeddings cache"):
        e, loaded = embedder(blocker / "embeddings.sqlite")  # its folder is a file
    assert e.embed(TEXTS[:3], "passage", 16).shape == (3, 8)
    assert len(loaded[0].texts) == 3 and e.cache.disabled is not None
    assert blocker.read_text() == "x"


def test_a_newer_cache_is_left_alone(tmp_path):
    path = tmp_path / "embeddings.sqlite"
    embedder(path)[0].embed(TEXTS[:2], "passage", 16)
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 9")
    db.close()
    before = path.read_bytes()
    with pytest.warns(UserWarning, match="newer ragrail"):
        e, loaded = embedder(path)
    e.embed(TEXTS[:2], "passage", 16)
    assert len(loaded[0].texts) == 2 and path.read_bytes() == before


WRITER = """
import hashlib, sys, time
import numpy as np
from pathlib import Path
from ragrail.system.embeddings import EmbeddingCache, Embedder, ModelKey

class Model:
    def encode(self, texts, **kw):
        out = []
        for t in texts:
            seed = int(hashlib.sha256(t.encode()).hexdigest()[:8], 16)
            v = np.random.default_rng(seed).standard_normal(8).astype(np.float32)
            out.append(v / np.linalg.norm(v))
        return np.stack(out)

path, start, stop = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
e = Embedder(EmbeddingCache(path), ModelKey("fake@1", 8), Model, progress=False)
(path.parent / f"ready-{start}").touch()
while not (path.parent / "go").exists():  # both start writing at the same moment
    time.sleep(0.001)
e.embed([f"text {i}" for i in range(start, stop)], "passage", 2)  # a commit per 2 texts
print(e.stats["passage"].encoded)
"""


def test_two_processes_writing_at_once_leave_a_sound_cache(tmp_path):
    path = tmp_path / "embeddings.sqlite"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(start), str(stop)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for start, stop in ((0, 600), (300, 900))  # 300 texts both write
    ]
    deadline = time.monotonic() + 60
    while not all((tmp_path / f"ready-{n}").exists() for n in (0, 300)):
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs)
        time.sleep(0.01)
    (tmp_path / "go").touch()
    encoded = 0
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0 and "warning" not in err.lower(), err
        encoded += int(out)
    assert 900 <= encoded <= 1200  # shared texts may be encoded by both, never lost
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    db.close()
    texts = [f"text {i}" for i in range(900)]
    e, loaded = embedder(path)
    out = e.embed(texts, "passage", 64)
    assert loaded == []  # all 900 are there
    assert np.array_equal(out, np.stack([fake_vector(t) for t in texts]))


def test_the_progress_bar_only_draws_when_asked(capsys):
    with progress_bar(10, "encoding", enabled=False) as advance:
        advance(10)
    assert capsys.readouterr().err == ""
    with progress_bar(0, "encoding", enabled=True) as advance:
        pass
    assert capsys.readouterr().err == ""
    with progress_bar(10, "encoding", enabled=True) as advance:
        advance(4)
        advance(6)  # no error: the bar reaches its total


def test_no_cache_flag_turns_the_embeddings_cache_off():
    from ragrail.app import load_project
    from ragrail.settings import Overrides, pipeline_settings

    project = load_project(example="kitebase")
    assert pipeline_settings(project).embeddings_cache == project.state_dir / "embeddings.sqlite"
    assert pipeline_settings(project, Overrides(no_cache=True)).embeddings_cache is None


def test_cache_stats_and_clear_show_the_vectors(cli, tmp_path):
    path = tmp_path / ".ragrail" / "embeddings.sqlite"
    embedder(path)[0].embed(TEXTS[:5], "passage", 16)
    r = cli("cache", "stats")
    assert r.code == 0 and "5 cached vectors" in r.out and "fake@1" in r.out, r.out
    r = cli("cache", "stats", "--json", "-")
    vectors = json.loads(r.out)["embeddings"]
    assert r.code == 0 and (vectors["exists"], vectors["vectors"]) == (True, 5)
    assert vectors["cache"] == str(path) and vectors["bytes"] == path.stat().st_size
    assert [(m["kind"], m["vectors"]) for m in vectors["by_model"]] == [("passage", 5)]
    r = cli("cache", "clear")
    assert r.code == 0 and "cleared 5 cached vectors" in r.out
    assert EmbeddingCache(path).count() == 0


# ------------------------------------------------------------- with the real model


def needs_model() -> None:
    if os.environ.get("RAGRAIL_REQUIRE_SEMANTIC") != "1":
        pytest.importorskip("sentence_transformers")


def kitebase_chunks(kitebase: Path) -> list:
    from ragrail.system.corpus import load_documents, make_chunks

    return make_chunks(load_documents(kitebase / "docs"), None)


QUESTIONS = [
    "How long does the password reset link last?",
    "I lost my phone and can't get a two-factor code",
    "Can I pay for Kitebase yearly?",
]


def test_scores_are_identical_with_and_without_the_cache(kitebase, tmp_path, monkeypatch):
    needs_model()
    from ragrail.system import retrieval

    model = retrieval.load_dense_model()
    monkeypatch.setattr(retrieval, "load_dense_model", lambda: model)
    chunks = kitebase_chunks(kitebase)
    path = tmp_path / "embeddings.sqlite"
    plain = retrieval.DenseRetriever(chunks)
    cold = retrieval.DenseRetriever(chunks, cache=path)
    warm = retrieval.DenseRetriever(chunks, cache=path)
    expected = plain.score_batch(QUESTIONS)
    assert np.array_equal(cold.score_batch(QUESTIONS), expected)
    assert np.array_equal(warm.score_batch(QUESTIONS), expected)
    assert np.array_equal(warm.matrix, plain.matrix)  # the exact float32 the model gave
    assert warm.search(QUESTIONS, 3) == plain.search(QUESTIONS, 3)
    assert warm.embedder.stats["passage"].encoded == 0
    assert warm.embedder.stats["query"].encoded == 0
    assert warm.embedder._model is None  # never loaded


WARM_RUN = """
import sys
from pathlib import Path
from ragrail.system.corpus import load_documents, make_chunks
from ragrail.system.retrieval import DenseRetriever

chunks = make_chunks(load_documents(Path(sys.argv[2])), None)
r = DenseRetriever(chunks, cache=Path(sys.argv[1]))
r.search(sys.argv[3:], 3)
heavy = [m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules]
print(heavy, r.embedder.stats["passage"].encoded, r.embedder.stats["query"].encoded)
"""


def test_a_warm_run_never_imports_torch(kitebase, tmp_path):
    needs_model()
    from ragrail.system.embeddings import model_key

    # filled under the real model's key by the fake: only the lookups are under test
    path = tmp_path / "embeddings.sqlite"
    e, _ = embedder(path, model_key())
    e.embed([c.text for c in kitebase_chunks(kitebase)], "passage", 64)
    e.embed(QUESTIONS, "query", 32)
    done = subprocess.run(
        [sys.executable, "-c", WARM_RUN, str(path), str(kitebase / "docs"), *QUESTIONS],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]", "0", "0"]


def test_a_second_cli_run_encodes_nothing_and_prints_the_same(cli, tmp_path):
    needs_model()
    corrupt = tmp_path / ".ragrail" / "embeddings.sqlite"
    corrupt.parent.mkdir()
    corrupt.write_bytes(b"not a database" * 100)
    args = ("run", "--example", "kitebase", "--retriever", "dense", "--no-history")
    first = cli(*args)
    # against the stand-in retriever's baseline, dense retrieval costs secure-account the
    # fact its answer held: a check lost, so both runs exit 1, the same way
    assert first.code == 1 and "moved it to" in first.err, first.err
    assert 'WORSE:  secure-account: fact "recovery email" no longer in the answer' in first.out
    assert "13 chunks: 13 encoded, 0 from the cache" in first.out
    second = cli(*args)
    assert second.code == 1 and second.err == ""
    assert "13 chunks: 0 encoded, 13 from the cache" in second.out
    note = "dense retriever ("
    rest = [[ln for ln in r.out.splitlines() if not ln.startswith(note)] for r in (first, second)]
    assert rest[0] == rest[1]


def test_a_model_of_unknown_dimension_is_never_cached(tmp_path):
    path = tmp_path / "embeddings.sqlite"
    for _ in range(2):
        e, loaded = embedder(path, ModelKey("fake@1", None))
        assert e.embed(TEXTS[:3], "passage", 16).shape == (3, 8)
        assert len(loaded[0].texts) == 3
    assert EmbeddingCache(path).count() == 0
