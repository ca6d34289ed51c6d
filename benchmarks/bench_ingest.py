"""Ingest of a production log, measured honestly (issue 25): lines per CPU-second of
ragrail's ingest beside two floors measured in the same run, peak memory, what a huge
line costs, and how much cheaper ingesting the same file again is.

The log is written into a temporary folder (deterministic, seed 25) the way production
writes one: every question, answer and passage is text of its own (no repeats for a
cache to hit), three passages a line with their own ids and sources, the outcome fields,
a follow-up turn in one of four, and personal data in one of twenty lines (an e-mail
address, a phone or a card number). Each measurement runs in a child process, whose CPU
time (user + system, its worker processes included) and peak RSS come from wait4:

- floor: orjson + sqlite3 executemany, no redaction (the least any ingest can cost);
- floor + regex: the same, every string through an e-mail and a digit-run regex;
- ragrail, one process: ``ingest(..., workers=1)``, the redaction in the tree;
- ragrail again: the same file into the same database (every id already stored);
- ragrail CLI: ``ragrail logs ingest`` with its worker processes (one per CPU): wall
  time, and the peak RSS of all its processes together, sampled from /proc;
- a huge line: one line of 50 MB (refused, read past in pieces) and one of 15 MB (about
  the longest read: 16 MiB), each ingested by the CLI: peak RSS.

    .venv/bin/python benchmarks/bench_ingest.py                 # 200,000 lines
    .venv/bin/python benchmarks/bench_ingest.py --lines 50000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sqlite3
import string
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

SEED = 25
PII = (
    "my email is ana.perez{n}@example.com",
    "call me on +44 20 7946 {n:04d}",
    "card 4111 1111 1111 1111 was charged twice",
    "reach me at (415) 555-{n:04d}",
)
_LETTERS = string.ascii_lowercase


def _words(rng: random.Random, n: int) -> str:
    return " ".join("".join(rng.choices(_LETTERS, k=rng.randint(2, 9))) for _ in range(n))


def row(rng: random.Random, i: int, start: int = 1_704_067_200) -> dict[str, object]:
    """Conversation ``i``: all its text its own."""
    question = _words(rng, rng.randint(6, 14)) + "?"
    if rng.random() < 0.05:
        question += " " + rng.choice(PII).format(n=i % 10_000)
    contexts = []
    for k in range(3):
        doc = f"kb/{''.join(rng.choices(_LETTERS, k=8))}-{rng.randrange(1000)}.md"
        contexts.append({"id": f"{doc}#{k}", "source": doc, "text": _words(rng, 34)})
    out: dict[str, object] = {
        "id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),  # as apps log them
        "timestamp": start + i * 2,
        "version": "v2" if i % 2 else "v1",
        "user": f"user{rng.randrange(50_000)}@example.com",
        "question": question,
        "answer": _words(rng, rng.randint(20, 45)) + ".",
        "contexts": contexts,
        "thumbs": rng.choice(("up", "down", None, None, None)),
        "escalated": rng.random() < 0.08,
        "resolved": rng.random() < 0.7,
        "latency_ms": round(rng.uniform(300, 4000), 1),
        "tokens_in": rng.randint(500, 3000),
        "tokens_out": rng.randint(50, 400),
        "cost": round(rng.uniform(0.001, 0.02), 5),
    }
    if rng.random() < 0.25:
        out["turns"] = [{"question": _words(rng, 8) + "?", "timestamp": start + i * 2 + 60}]
    return out


def write_log(path: Path, lines: int) -> int:
    """Write ``lines`` conversations as JSON Lines; returns the file's size in bytes."""
    rng = random.Random(SEED)
    with path.open("w", encoding="utf-8") as fh:
        for i in range(lines):
            fh.write(json.dumps(row(rng, i), ensure_ascii=False) + "\n")
    return path.stat().st_size


def write_huge(path: Path, megabytes: int) -> None:
    """Three lines, the second one ``megabytes`` MB (its answer), all of one id each."""
    rng = random.Random(SEED)
    big = row(rng, 1)
    words = _words(rng, 2000) + " "
    big["answer"] = (words * (megabytes * 1024 * 1024 // len(words) + 1))[: megabytes * 1024 * 1024]
    with path.open("w", encoding="utf-8") as fh:
        for r in (row(rng, 0), big, row(rng, 2)):
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")


# ---------------------------------------------------------------- the floors (child processes)

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_DIGITS = re.compile(r"\+?\d[\d ().-]{5,}\d")
_SCHEMA = (
    "CREATE TABLE conversations (id TEXT PRIMARY KEY, at REAL, version TEXT, user TEXT, "
    "question TEXT, answer TEXT, contexts TEXT, turns TEXT, thumbs TEXT, escalated INTEGER, "
    "resolved INTEGER, latency_ms REAL, tokens_in INTEGER, tokens_out INTEGER, cost REAL)"
)


def floor(log: Path, db: Path, redact: bool) -> None:
    import orjson

    def scrub(text: str) -> str:
        return _DIGITS.sub("[n]", _EMAIL.sub("[e]", text)) if redact else text

    con = sqlite3.connect(db)
    con.execute(_SCHEMA)
    insert = f"INSERT OR IGNORE INTO conversations VALUES ({', '.join('?' * 15)})"
    rows: list[tuple[object, ...]] = []
    with log.open("rb") as fh:
        for raw in fh:
            r = orjson.loads(raw)
            contexts = [
                [scrub(c["id"]), scrub(c["source"]), scrub(c["text"])] for c in r["contexts"]
            ]
            turns = [[scrub(t["question"]), t["timestamp"]] for t in r.get("turns", ())]
            rows.append((
                scrub(r["id"]), float(r["timestamp"]), scrub(r["version"]), scrub(r["user"]),
                scrub(r["question"]), scrub(r["answer"]), orjson.dumps(contexts).decode(),
                orjson.dumps(turns).decode(), r["thumbs"], r["escalated"], r["resolved"],
                r["latency_ms"], r["tokens_in"], r["tokens_out"], r["cost"],
            ))  # fmt: skip
            if len(rows) >= 5000:
                with con:
                    con.executemany(insert, rows)
                rows.clear()
    with con:
        con.executemany(insert, rows)
    con.close()


def ragrail_one_process(log: Path, db: Path) -> None:
    from ragrail.online.ingest import ingest
    from ragrail.online.store import LogStore
    from ragrail.project import LogsConfig

    with LogStore(db) as store:
        cpu = time.process_time()
        report = ingest([log], LogsConfig(), store, workers=1)
        cpu = time.process_time() - cpu
    print(f"{cpu} CPU-seconds: {report.added} added, {report.already} stored, {report.bad} bad")


# ---------------------------------------------------------------- measuring


def tree_rss(root: int) -> int:
    """Bytes resident in process ``root`` and all its descendants, from /proc (Linux)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    tree, grew = {root}, True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in tree} - tree
        tree |= more
        grew = bool(more)
    total = 0
    for pid in tree:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


class Measured:
    def __init__(self, cpu: float, wall: float, peak_one: float, peak_tree: float, out: str):
        self.cpu, self.wall, self.peak_one, self.peak_tree, self.out = (
            cpu, wall, peak_one, peak_tree, out,
        )  # fmt: skip


def measure(command: list[str]) -> Measured:
    """Run ``command``; its CPU seconds (its reaped children included), wall seconds, peak
    RSS of its largest process and of all its processes together (MB)."""
    t0 = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak_tree = 0
    while True:
        waited, status, usage = os.wait4(child.pid, os.WNOHANG)
        if waited:
            break
        peak_tree = max(peak_tree, tree_rss(child.pid))
        time.sleep(0.05)
    wall = time.perf_counter() - t0
    child.returncode = os.waitstatus_to_exitcode(status)
    out = child.stdout.read().decode() if child.stdout else ""
    err = child.stderr.read().decode() if child.stderr else ""
    if child.returncode != 0:
        sys.exit(f"{' '.join(command[-3:])} failed ({child.returncode}): {err.strip()}")
    return Measured(
        usage.ru_utime + usage.ru_stime,
        wall,
        usage.ru_maxrss / 1024,  # KB on Linux
        max(peak_tree / 1e6, usage.ru_maxrss / 1024),
        (out + err).strip(),
    )


def cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--child", choices=("floor", "regex", "ragrail"), help=argparse.SUPPRESS)
    parser.add_argument("paths", nargs="*", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "ragrail":
        return ragrail_one_process(*args.paths)
    if args.child:
        return floor(*args.paths, redact=args.child == "regex")
    me = [sys.executable, __file__, "--child"]
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        folder = Path(tmp)
        log = folder / "conversations.jsonl"
        t0 = time.perf_counter()
        size = write_log(log, args.lines)
        n = args.lines
        print(
            f"{cpus()} CPUs; wrote {n:,} lines ({size / 1e6:,.0f} MB, every question, answer "
            f"and passage its own) in {time.perf_counter() - t0:.1f} s"
        )

        def rate(m: Measured) -> str:
            return f"{n / m.cpu:>9,.0f} lines per CPU-second, peak {m.peak_one:,.0f} MB"

        runs = {
            "floor (orjson + executemany)": measure([*me, "floor", str(log), str(folder / "f.db")]),
            "floor + regex redaction": measure([*me, "regex", str(log), str(folder / "r.db")]),
        }
        db = folder / "one.sqlite"
        runs["ragrail, one process"] = first = measure([*me, "ragrail", str(log), str(db)])
        runs["ragrail again (all stored)"] = again = measure([*me, "ragrail", str(log), str(db)])
        for name, m in runs.items():
            print(f"{name:<30} {rate(m)}")
        print(f"first ingest: {first.out.split(': ')[1]}")
        inside = [float(m.out.split()[0]) for m in (first, again)]
        print(
            f"ingesting the same file again: {first.cpu / again.cpu:,.1f}x less CPU "
            f"({inside[0] / inside[1]:,.1f}x without Python's start-up; "
            f"{again.out.split(': ')[1]})"
        )
        (folder / "ragrail.toml").write_text("", encoding="utf-8")
        cli = [sys.executable, "-m", "ragrail", "logs", "ingest", "--config",
               str(folder / "ragrail.toml"), "--db"]  # fmt: skip
        m = measure([*cli, str(folder / "cli.sqlite"), str(log)])
        print(
            f"ragrail logs ingest ({cpus()} worker processes): {n / m.wall:,.0f} lines/s wall, "
            f"{n / m.cpu:,.0f} per CPU-second; peak RSS of all its processes together "
            f"{m.peak_tree:,.0f} MB, of the largest one {m.peak_one:,.0f} MB"
        )
        for megabytes in (50, 15):
            huge = folder / f"huge{megabytes}.jsonl"
            write_huge(huge, megabytes)
            m = measure([*cli, str(folder / f"huge{megabytes}.sqlite"), str(huge)])
            said = m.out.splitlines()[0] if m.out else ""
            print(f"a {megabytes} MB line: peak RSS {m.peak_tree:,.0f} MB ({said[:90]})")
            huge.unlink()


if __name__ == "__main__":
    main()
