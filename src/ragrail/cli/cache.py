"""``ragrail cache stats`` and ``ragrail cache clear``: the model-reply cache."""

from __future__ import annotations

from pathlib import Path

import click

from ragrail.cli.common import CONTEXT, PATH, json_option
from ragrail.cli.ui import Out, check_json_target, output_options
from ragrail.errors import EXIT_OK


@click.group(context_settings=CONTEXT)
def cache() -> None:
    """The model-reply cache (.ragrail/cache.sqlite beside the project file)."""


def cache_path(config: Path | None) -> Path:
    """The project's cache (or this folder's, when there is no project)."""
    from ragrail.config import CONFIG_NAME, load_config

    if config is not None or (Path.cwd() / CONFIG_NAME).is_file():
        return load_config(config or Path.cwd() / CONFIG_NAME).state_dir / "cache.sqlite"
    return Path.cwd() / ".ragrail" / "cache.sqlite"


@cache.command("stats", context_settings=CONTEXT)
@click.option("--config", "-c", type=PATH, help="Project file.")
@json_option("the counts")
@output_options()
def cache_stats(config: Path | None, json_path: Path | None) -> int:
    """How many replies are cached, and where."""
    from ragrail.calls.cache import ResponseCache
    from ragrail.reports.machine import cache_json

    check_json_target(json_path, "--json cache stats")
    out = Out(json_path)
    path = cache_path(config)
    if not path.exists():
        out.json(cache_json(path, None, None, []), json_path, "--json cache stats")
        out.verdict(f"{path}: no cache yet")
        return EXIT_OK
    store = ResponseCache(path, required=True)  # its own command: fail, not skip
    try:
        count, by_model = store.count(), store.by_model()
    finally:
        store.close()
    size = path.stat().st_size
    out.json(cache_json(path, count, size, by_model), json_path, "--json cache stats")
    out.verdict(f"{path}: {count} cached replies, {size:,} bytes")
    from ragrail.reports.text import visible

    for provider, model, n in by_model:  # rows any sqlite3 session could have written
        out.say(f"  {visible(provider):<10} {visible(model):<30} {n}")
    return EXIT_OK


@cache.command("clear", context_settings=CONTEXT)
@click.option("--config", "-c", type=PATH, help="Project file.")
@output_options()
def cache_clear(config: Path | None) -> int:
    """Delete every cached reply: the next model run calls the API again."""
    from ragrail.calls.cache import ResponseCache

    path = cache_path(config)
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
