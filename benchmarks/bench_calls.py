"""Model-call throughput: 500 calls against a local fake API with 100 ms latency.

The server runs in its own process on 127.0.0.1; calls go through the real
Anthropic SDK and ragrail's call layer at concurrency 16. Ideal time is
500 x 0.1 / 16 = 3.1 s; the target is within 1.5x of it. A second, cached
run must make 0 calls and take under 2 s.

    python benchmarks/bench_calls.py [--calls 500] [--concurrency 16] [--latency 0.1]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SERVER = """
import sys, time
sys.path.insert(0, {root!r})
from tests.fake_llm import FakeLLM, Reply
fake = FakeLLM(lambda r: Reply(text="ok", input_tokens=250, output_tokens=150), latency={latency})
fake.start()
print(fake.url, flush=True)
while True:
    time.sleep(3600)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.1)
    args = parser.parse_args()

    server = subprocess.Popen(
        [sys.executable, "-c", SERVER.format(root=str(ROOT), latency=args.latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = server.stdout.readline().strip()
        os.environ.setdefault("ANTHROPIC_API_KEY", "sk-bench-not-a-real-key")
        from ragrail.calls.cache import ResponseCache
        from ragrail.calls.layer import CallLayer, CallRequest, CallSettings
        from ragrail.calls.prices import DEFAULT_PRICES
        from ragrail.calls.providers import make_provider

        t_import = time.perf_counter()
        import anthropic  # noqa: F401  (a one-time start-up cost, reported on its own)

        t_import = time.perf_counter() - t_import

        requests = [
            CallRequest(prompt=f"question {i}: how do I reset my password?")
            for i in range(args.calls)
        ]
        with tempfile.TemporaryDirectory() as tmp:
            cache_path = Path(tmp) / "cache.sqlite"

            def once() -> tuple[float, CallLayer]:
                layer = CallLayer(
                    provider=make_provider("anthropic", "claude-opus-5", url, 30.0),
                    settings=CallSettings(concurrency=args.concurrency),
                    cache=ResponseCache(cache_path),
                    price=DEFAULT_PRICES["claude-opus-5"],
                )
                t0 = time.perf_counter()
                results = layer.run(requests)
                elapsed = time.perf_counter() - t0
                assert all(r.error is None for r in results), [r.error for r in results if r.error][
                    :3
                ]
                return elapsed, layer

            cold, layer = once()
            warm, layer2 = once()
        ideal = args.calls * args.latency / args.concurrency
        print(
            f"calls             {args.calls} at concurrency {args.concurrency}, {args.latency * 1000:.0f} ms each"
        )
        print(f"SDK import        {t_import:8.2f} s  (once per process; not in the runs below)")
        print(f"ideal             {ideal:8.2f} s")
        print(
            f"cold run          {cold:8.2f} s  = {cold / ideal:.2f}x ideal (target <= 1.5x); "
            f"{layer.usage.calls} calls, ${layer.usage.cost_usd:.2f}"
        )
        print(
            f"cached re-run     {warm:8.2f} s  (target < 2 s); {layer2.usage.calls} calls, "
            f"{layer2.usage.cached} from the cache"
        )
        ok = cold <= 1.5 * ideal and warm < 2 and layer2.usage.calls == 0
        sys.exit(0 if ok else 1)
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
