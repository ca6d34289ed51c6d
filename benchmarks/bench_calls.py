"""Model-call throughput: 500 calls against a local fake API with 100 ms latency.

The server runs in its own process on 127.0.0.1; calls go through the real
Anthropic SDK and ragrail's call layer at concurrency 16. Ideal time is
500 x 0.1 / 16 = 3.1 s; the target is within 1.5x of it. A second, cached
run must make 0 calls and take under 2 s.

Then the judge's bill (issue 28): the late-refund example's answers judged for
claim-level faithfulness through the same fake (input tokens counted as the prompt's
characters / 4, 155 output tokens per reply), directly and as one provider batch:
tokens per judged answer and $ per 1,000 answers at claude-opus-5's price and at
$3/$15 per million tokens.

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
import json
from ragrail.scoring.claims import split_claims
from tests.helpers import between
def reply(r):
    if "<answer>" in r.prompt:
        claims = [dict(claim=c, supported=True, chunk=None) for c in split_claims(between(r.prompt, "answer"))]
        return Reply(text=json.dumps(dict(claims=claims)), output_tokens=155)
    return Reply(text="ok", input_tokens=250, output_tokens=150)
fake = FakeLLM(reply, latency={latency})
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
        judge_bill(url)
        ok = cold <= 1.5 * ideal and warm < 2 and layer2.usage.calls == 0
        sys.exit(0 if ok else 1)
    finally:
        server.terminate()
        server.wait()


def judge_bill(url: str) -> None:
    """Tokens per judged answer and $ per 1,000 answers, direct and batch."""
    import shutil

    from ragrail import app
    from ragrail.calls.prices import Price, cost_usd
    from ragrail.project import example_dir

    for mode in ("direct", "batch"):
        with tempfile.TemporaryDirectory() as tmp:
            dest = Path(tmp) / "lr"
            shutil.copytree(example_dir("late-refund"), dest)
            project = app.load_project(dest / "ragrail.toml")
            o = app.Overrides(judge="claude", judge_base_url=url, batch=mode == "batch")
            o.no_history = True
            u = app.evaluate(project, o).result.judge_usage
            assert u is not None and u.input_tokens is not None and u.output_tokens is not None
            n = u.calls
            per_in, per_out = u.input_tokens / n, u.output_tokens / n
            at_3_15 = cost_usd(
                Price(3.0, 15.0), u.input_tokens, u.output_tokens, batch=mode == "batch"
            )
            print(
                f"judge {mode:<7}     {n} answers, {per_in:,.0f} tokens in and {per_out:,.0f} out "
                f"per judged answer; ${(u.cost_usd or 0) / n * 1000:.2f} per 1,000 answers "
                f"(claude-opus-5), ${(at_3_15 or 0) / n * 1000:.2f} at $3/$15"
            )


if __name__ == "__main__":
    main()
