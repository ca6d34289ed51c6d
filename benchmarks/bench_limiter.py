"""The rate limiter: 100 calls at --rpm 600 against a server that enforces 600 a minute.

The server (tests/fake_llm.py in its own process, on 127.0.0.1) answers 429, with
``retry-after: 1``, to a request that would make more than ``rpm`` accepted requests
in the last 60 s, or that comes early on the per-request schedule ``rpm`` allows: the
generic cell rate algorithm (GCRA), which accepts a request at t only when
``t >= TAT - tolerance`` and then sets ``TAT = max(TAT, t) + 60 / rpm``. With a
tolerance of one interval (100 ms at 600 rpm: one request may come a slot early, for
the network and scheduling jitter no client controls) that refuses anything faster
than 600 a minute sustained and any burst of more than 2: a far stricter check than a
60-s window, as providers quantise a per-minute limit into seconds or less. Calls go
through ragrail's call layer and the real SDK client (anthropic or openai),
concurrency 8, no cache.

With the limiter the calls must draw no 429 and take calls * 60 / rpm +- 10% (100
calls at 600 rpm: 10 s; ideally (calls - 1) * 60 / rpm plus one reply, as the first
goes at once). For contrast, the same calls without it must draw 429s.

    python benchmarks/bench_limiter.py [--calls 100] [--rpm 600] [--api anthropic|openai]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SERVER = """
import json, sys, threading, time
sys.path.insert(0, {root!r})
from tests.fake_llm import FakeLLM, Reply

PER_MINUTE, INTERVAL, TOLERANCE = {rpm!r}, 60.0 / {rpm!r}, {tolerance!r}
lock = threading.Lock()
accepted, arrivals, refused, tat = [], [], [0], [None]

def script(req):
    with lock:
        now = time.monotonic()
        arrivals.append(now)
        minute = sum(1 for t in accepted if now - t < 60.0)
        early = tat[0] is not None and now < tat[0] - TOLERANCE
        if minute + 1 > PER_MINUTE or early:
            refused[0] += 1
            return Reply(status=429, headers={{"retry-after": "1"}})
        accepted.append(now)
        tat[0] = max(tat[0] or now, now) + INTERVAL
    return Reply(text="ok", input_tokens=250, output_tokens=150)

fake = FakeLLM(script, latency={latency!r})
fake.start()
print(fake.url, flush=True)
for line in sys.stdin:  # "stats": print the counts; "reset": forget every request
    with lock:
        if line.strip() == "reset":
            accepted.clear(); arrivals.clear(); refused[0] = 0; tat[0] = None
            print("{{}}", flush=True)
            continue
        busiest = max(
            (sum(1 for u in arrivals if 0 <= u - t < 1.0) for t in arrivals), default=0
        )
        gaps = [b - a for a, b in zip(arrivals, arrivals[1:])]
        print(json.dumps({{"received": len(arrivals), "refused": refused[0],
                           "busiest_second": busiest, "min_gap": min(gaps, default=0.0)}}),
              flush=True)
"""


def ask(server: subprocess.Popen[str], command: str) -> dict[str, Any]:
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(command + "\n")
    server.stdin.flush()
    return json.loads(server.stdout.readline())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--rpm", type=float, default=600.0)
    parser.add_argument("--api", choices=["anthropic", "openai"], default="anthropic")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument(
        "--latency", type=float, default=0.05, help="the server's seconds per reply"
    )
    parser.add_argument(
        "--tolerance", type=float, help="the server's allowance for jitter, s (one interval)"
    )
    parser.add_argument("--no-contrast", action="store_true", help="skip the run without a limiter")
    args = parser.parse_args()
    if args.tolerance is None:
        args.tolerance = 60.0 / args.rpm

    server = subprocess.Popen(
        [
            sys.executable,
            "-c",
            SERVER.format(
                root=str(ROOT), rpm=args.rpm, latency=args.latency, tolerance=args.tolerance
            ),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        if args.api == "openai":
            url += "/v1"
        os.environ.setdefault(f"{args.api.upper()}_API_KEY", "sk-bench-not-a-real-key")
        from ragrail.calls.layer import CallLayer, CallRequest, CallSettings
        from ragrail.calls.providers import make_provider

        # One-time start-up, reported on its own: the SDK's import, and one call, which
        # loads the modules the SDK imports lazily on its first request.
        t_import = time.perf_counter()
        __import__(args.api)
        CallLayer(provider=make_provider(args.api, "bench-model", url, 30.0)).run(
            [CallRequest("warm-up")]
        )
        t_import = time.perf_counter() - t_import

        requests = [
            CallRequest(f"question {i}: how do I reset my password?") for i in range(args.calls)
        ]

        def once(rpm: float | None) -> tuple[float, CallLayer, dict[str, Any]]:
            ask(server, "reset")
            time.sleep(1.1)  # the server's 1-s window forgets the last run
            layer = CallLayer(
                provider=make_provider(args.api, "bench-model", url, 30.0),
                settings=CallSettings(concurrency=args.concurrency, rpm=rpm),
            )
            t0 = time.perf_counter()
            layer.run(requests)
            elapsed = time.perf_counter() - t0
            return elapsed, layer, ask(server, "stats")

        limited, layer, stats = once(args.rpm)
        target = args.calls * 60.0 / args.rpm  # the acceptance's figure: 100 at 600/min
        ideal = (args.calls - 1) * 60.0 / args.rpm + args.latency  # n-1 gaps and one reply
        low, high = 0.9 * target, 1.1 * target
        u = layer.usage
        print(
            f"calls             {args.calls} through the {args.api} SDK, concurrency "
            f"{args.concurrency}, server reply {args.latency * 1000:.0f} ms"
        )
        print(
            f"server            429 above {args.rpm:g} accepted in 60 s, or over "
            f"{args.tolerance * 1000:g} ms ahead of a request every {60 / args.rpm * 1000:g} ms "
            "(GCRA; retry-after: 1)"
        )
        print(
            f"SDK start-up      {t_import:8.2f} s  (import and a first call, once per process; "
            "not in the runs below)"
        )
        print(
            f"with --rpm {args.rpm:<7g}{limited:6.2f} s  (target {target:.1f} s +- 10%: "
            f"{low:.1f}-{high:.1f}; ideal {ideal:.2f}); {stats['refused']} x 429 (target 0), "
            f"{u.calls} requests, {u.errors} errors; busiest 1-s window "
            f"{stats['busiest_second']} requests, closest two {stats['min_gap'] * 1000:.0f} ms "
            "apart"
        )
        ok = stats["refused"] == 0 and u.errors == 0 and low <= limited <= high
        if not args.no_contrast:
            free, layer, stats = once(None)
            u = layer.usage
            print(
                f"without a limit  {free:6.2f} s  {stats['refused']} x 429, {u.calls} requests "
                f"({u.retries} retries), {u.errors} calls failed after "
                f"{layer.settings.max_retries} retries; busiest 1-s window "
                f"{stats['busiest_second']} requests, closest two {stats['min_gap'] * 1000:.0f} "
                "ms apart"
            )
            ok = ok and stats["refused"] > 0
        print("PASS" if ok else "FAIL")
        sys.exit(0 if ok else 1)
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
