"""``ragrail cache stats`` and ``ragrail cache clear``: the model-reply cache and the
dense retriever's embeddings cache beside it."""

from __future__ import annotations

from pathlib import Path

import click

from ragrail.cli.common import CONTEXT, PATH, json_option, project_or_none
from ragrail.cli.ui import Out, output_options
from ragrail.errors import EXIT_OK

EMBEDDINGS = "embeddings.sqlite"  # beside the reply cache (ragrail.system.embeddings)


@click.group(context_settings=CONTEXT)
def cache() -> None:
    """The model-reply and embeddings caches (.ragrail/ beside the project file).

    cache.sqlite holds model replies; embeddings.sqlite the dense retriever's vectors.
    """


def cache_path(config: Path | None) -> Path:
    """The project's cache (or this folder's, when there is no project)."""
    from ragrail.project import CONFIG_NAME, load_config

    if config is not None or (Path.cwd() / CONFIG_NAME).is_file():
        return load_config(config or Path.cwd() / CONFIG_NAME).state_dir / "cache.sqlite"
    return Path.cwd() / ".ragrail" / "cache.sqlite"


@cache.command("stats", context_settings=CONTEXT)
@click.option("--config", "-c", type=PATH, help="Project file.")
@json_option("the counts")
@output_options()
def cache_stats(config: Path | None, json_path: Path | None) -> int:
    """How many replies and vectors are cached, and where."""
    from ragrail.calls.cache import ResponseCache
    from ragrail.outputs import guard_outputs
    from ragrail.reports.machine import cache_json

    path = cache_path(config)
    guard_outputs(
        [(json_path, "--json cache stats")], project_or_none(config, None), state_dir=path.parent
    )
    out = Out(json_path)
    vectors = _embeddings_counts(path.with_name(EMBEDDINGS))
    if not path.exists():
        out.json(cache_json(path, None, None, [], vectors), json_path, "--json cache stats")
        out.verdict(f"{path}: no cache yet")
        _embeddings_lines(out, vectors)
        return EXIT_OK
    store = ResponseCache(path, required=True)  # its own command: fail, not skip
    try:
        count, by_model = store.count(), store.by_model()
    finally:
        store.close()
    size = path.stat().st_size
    out.json(cache_json(path, count, size, by_model, vectors), json_path, "--json cache stats")
    out.verdict(f"{path}: {count} cached replies, {size:,} bytes")
    from ragrail.text.guard import visible

    for provider, model, n in by_model:  # rows any sqlite3 session could have written
        out.say(f"  {visible(provider):<10} {visible(model):<30} {n}")
    _embeddings_lines(out, vectors)
    return EXIT_OK


def _embeddings_counts(path: Path) -> tuple[Path, int, int, list[tuple[str, str, int]]] | None:
    """The embeddings cache's path, vectors, bytes and vectors per model and kind; None
    when there is no file."""
    from ragrail.system.embeddings import EmbeddingCache

    if not path.exists():
        return None
    store = EmbeddingCache(path, required=True)
    try:
        count, by_model = store.count(), store.by_model()
    finally:
        store.close()
    return path, count, path.stat().st_size, by_model


def _embeddings_lines(
    out: Out, vectors: tuple[Path, int, int, list[tuple[str, str, int]]] | None
) -> None:
    """The embeddings cache's lines of ``cache stats`` (none when there is no file)."""
    from ragrail.text.guard import visible

    if vectors is None:
        return
    path, count, size, by_model = vectors
    out.say(f"{path}: {count} cached vectors, {size:,} bytes")
    for model, kind, n in by_model:
        out.say(f"  {visible(model):<36} {visible(kind):<8} {n}")


@cache.command("clear", context_settings=CONTEXT)
@click.option("--config", "-c", type=PATH, help="Project file.")
@output_options()
def cache_clear(config: Path | None) -> int:
    """Delete every cached reply and vector: the next model run calls the API again,
    the next dense run encodes every chunk again."""
    from ragrail.calls.cache import ResponseCache
    from ragrail.system.embeddings import EmbeddingCache

    path = cache_path(config)
    vectors = path.with_name(EMBEDDINGS)
    if vectors.exists():
        embeddings = EmbeddingCache(vectors, required=True)
        try:
            n = embeddings.clear()
        finally:
            embeddings.close()
        Out().verdict(f"{vectors}: cleared {n} cached vectors")
    if not path.exists():
        Out().verdict(f"{path}: no cache to clear")
        return EXIT_OK
    store = ResponseCache(path, required=True)  # its own command: fail, not skip
    try:
        n = store.clear()
    finally:
        store.close()
    Out().verdict(f"{path}: cleared {n} cached replies")
    return EXIT_OK
