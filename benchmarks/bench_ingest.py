"""Ingest of a production log, measured honestly (issue 25): lines per CPU-second of
ragrail's ingest beside two floors measured in the same run, peak memory, what a huge
line costs, and how much cheaper ingesting the same file again is.

The log is written into a temporary folder (deterministic, seed 25) the way production
writes one: a support bot's questions, answers and passages in English, German, French,
Spanish and Japanese, each filled with its own values (no repeats for a cache to hit)
and with the digits people write: dates and times in several formats, prices with
their currencies, order, invoice, ticket and tracking numbers, versions, quantities;
three passages a line with their own ids and sources, the outcome fields, a follow-up
turn in one of four, and personal data in one of twenty lines (an e-mail address, a
phone number in one of several countries' formats, a card number, an IBAN). Each measurement runs in a child process, whose CPU
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
_PRODUCTS = (
    "Pro plan", "Team plan", "starter kit", "wireless earbuds", "standing desk", "router",
    "espresso machine", "yoga mat", "backpack", "smart watch", "air purifier", "monitor arm",
    "gift card", "annual subscription", "phone case", "running shoes", "desk lamp", "keyboard",
)  # fmt: skip
_TOPICS = (
    "refund", "return", "invoice", "delivery", "shipping", "warranty", "password reset",
    "two-factor login", "billing address", "plan upgrade", "cancellation", "exchange",
    "data export", "API limit", "promo code", "payment failure", "account deletion",
)  # fmt: skip
_CARRIERS = ("UPS", "FedEx", "DHL", "USPS", "Royal Mail", "DPD", "GLS", "PostNL", "La Poste")
_CITIES = ("Berlin", "Austin", "Lyon", "Madrid", "Osaka", "Toronto", "Leeds", "Porto", "Milan")
_FILLER = (
    "thanks", "please", "again", "today", "still", "already", "quickly", "just", "maybe",
    "really", "now", "also", "yesterday", "honestly", "asap", "somehow", "twice", "finally",
)  # fmt: skip
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")  # fmt: skip


def _date(rng: random.Random) -> str:
    y, m, d = rng.choice((2023, 2024, 2025)), rng.randint(1, 12), rng.randint(1, 28)
    return rng.choice((
        f"{y}-{m:02d}-{d:02d}", f"{m:02d}/{d:02d}/{y}", f"{d:02d}.{m:02d}.{y}",
        f"{_MONTHS[m - 1]} {d}, {y}", f"{d} {_MONTHS[m - 1][:3]} {y}", f"{d}/{m}/{y}",
        f"{y}-{m:02d}-{d:02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:"
        f"{rng.randint(0, 59):02d}Z",
    ))  # fmt: skip


def _time(rng: random.Random) -> str:
    h, m = rng.randint(0, 23), rng.randint(0, 59)
    return rng.choice((f"{h:02d}:{m:02d}", f"{h % 12 + 1}:{m:02d} {rng.choice('ap')}m",
                       f"{h % 12 + 1}pm", f"{h:02d}:{m:02d}:{rng.randint(0, 59):02d}"))  # fmt: skip


def _price(rng: random.Random) -> str:
    units, cents = rng.choice((rng.randint(1, 99), rng.randint(100, 2999))), rng.randint(0, 99)
    return rng.choice((
        f"${units:,}.{cents:02d}", f"€{units:,}.{cents:02d}", f"{units},{cents:02d} €",
        f"£{units}", f"USD {units}", f"{units:,}.{cents:02d} EUR", f"¥{units * 100:,}",
        f"CHF {units}.{cents:02d}", f"${units}",
    ))  # fmt: skip


def _order(rng: random.Random) -> str:
    return rng.choice((
        f"#{rng.randint(100_000, 9_999_999)}", f"ORD-{rng.randint(2023, 2025)}-{rng.randint(0, 999_999):06d}",
        f"{rng.randint(100, 999)}-{rng.randint(1_000_000, 9_999_999)}-{rng.randint(1_000_000, 9_999_999)}",
        f"{rng.randint(10_000_000, 99_999_999)}", f"A{rng.randint(10_000, 99_999)}",
    ))  # fmt: skip


def _reference(rng: random.Random) -> str:
    return rng.choice((
        f"invoice INV-{rng.randint(2023, 2025)}-{rng.randint(1, 99_999):05d}",
        f"ticket #{rng.randint(10_000, 999_999)}", f"case {rng.randint(1_000_000, 9_999_999)}",
        f"tracking number 1Z{rng.randint(100, 999)}AA{rng.randint(10**9, 10**10 - 1)}",
        f"RMA {rng.randint(100_000, 999_999)}", f"error code E{rng.randint(1000, 9999)}",
        f"HTTP {rng.choice((400, 401, 403, 404, 429, 500, 502, 503))}",
    ))  # fmt: skip


def _version(rng: random.Random) -> str:
    a, b, c = rng.randint(1, 17), rng.randint(0, 20), rng.randint(0, 40)
    return rng.choice((f"v{a}.{b}.{c}", f"{a}.{b}.{c}", f"iOS {a}.{b}", f"Android {a}",
                       f"build {rng.randint(1000, 9999)}", f"version {a}.{b}"))  # fmt: skip


def _quantity(rng: random.Random) -> str:
    return rng.choice((
        f"{rng.randint(1, 12)} items", f"{rng.randint(2, 500)} GB", f"{rng.randint(1, 90)} days",
        f"{rng.randint(1, 20) * 1000:,} API calls", f"{rng.randint(1, 50)} seats",
        f"{rng.randint(5, 95)}%", f"{rng.randint(1, 48)} hours", f"{rng.randint(2, 30)} kg",
        f"{rng.randint(1, 10)} licences", f"{rng.randint(100, 4000)} ms",
    ))  # fmt: skip


def _days(rng: random.Random) -> str:
    return rng.choice((f"{rng.randint(2, 30)} days", f"{rng.randint(1, 10)} business days",
                       f"{rng.randint(1, 72)} hours", f"{rng.randint(1, 6)} weeks"))  # fmt: skip


_SLOTS = {"date": _date, "time": _time, "price": _price, "order": _order,
          "ref": _reference, "version": _version, "qty": _quantity, "days": _days}  # fmt: skip
_QUESTIONS = (
    "Where is my order {order}? I placed it on {date} and paid {price}.",
    "I was charged {price} twice on {date} for the {product}, can I get a refund?",
    "My {product} stopped working after the update to {version}, what now?",
    "Can I return the {product} I got on {date}? It is {days} past the window.",
    "How do I download {ref} for my accounting?",
    "The app says {ref} when I try to pay {price} for the {product}.",
    "Is the {product} still {price} or did the price change on {date}?",
    "Why does my delivery from {carrier} say it arrives {date} at {time}?",
    "Can I change the billing address on order {order} before {time} today?",
    "¿Dónde está mi pedido {order}? Lo pagué el {date} ({price}).",
    "Wo ist meine Bestellung {order} vom {date}? Ich habe {price} bezahlt.",
    "Ma commande {order} du {date} n'est pas arrivée, elle coûtait {price}.",
    "注文 {order} はいつ届きますか？{date} に {price} 支払いました。",
    "How many {qty} are included in the {product} and does it cost {price}?",
)
_ANSWERS = (
    "Your order {order} was shipped with {carrier} on {date} and should arrive within {days}.",
    "I can see a charge of {price} on {date}; the refund for {ref} will reach you in {days}.",
    "The {product} costs {price} per month and includes {qty}; the offer ends on {date}.",
    "Please update to {version} (released {date}) and restart the {product}; {ref} is fixed there.",
    "You can return the {product} within {days} of delivery; we refund {price} once it arrives.",
    "Our team answers between {time} and {time}; your {ref} is open since {date}.",
    "Your {topic} request for order {order} was approved on {date} at {time}.",
    "Ihre Bestellung {order} wurde am {date} versandt; die Rückerstattung von {price} folgt.",
    "Votre remboursement de {price} pour la commande {order} sera effectué sous {days}.",
    "ご注文 {order} は {date} に発送されました。金額は {price} です。",
)
_PASSAGES = (
    "Refunds for the {product} are issued within {days} to the original payment method; "
    "orders over {price} ship free.",
    "Since {version} (released {date}), {topic} requests are handled in the app under "
    "Settings; most complete in {days}.",
    "{carrier} delivers to {city} in {days}; parcels shipped after {time} leave the next day.",
    "The {product} comes with a warranty of {days}; the extended plan costs {price} per year.",
    "Invoices are available as PDF for {days}; {ref} means the payment provider declined the card.",
    "Prices changed on {date}: the {product} is now {price} (was {price}), taxes included.",
    "Our support hours are {time} to {time}, Monday to Friday; average reply time is {days}.",
    "Plans: Starter {price}/month with {qty}; Pro {price}/month with {qty} and priority support.",
)
_PII = (
    "my email is {first}.{last}{n}@example.com",
    "call me on +44 20 7946 {n:04d}", "my number is (415) 555-{n:04d}",
    "Handy: 0176 {n:04d}{n:04d}", "mi teléfono es 612 34{n:04d}",
    "card 4111 1111 1111 1111 was charged twice", "IBAN DE89 3704 0044 0532 0130 00",
    "reach me at {first}_{n}@mail.example.org", "tel:+33 6 12 34 {n:04d}",
)  # fmt: skip
_NAMES = ("ana", "bob", "chen", "dara", "emil", "fatima", "goran", "hana", "ivan", "jo")
_LETTERS = string.ascii_lowercase


def _fill(rng: random.Random, template: str, n: int) -> str:
    first, last = rng.choice(_NAMES), rng.choice(_NAMES)
    values = {name: make(rng) for name, make in _SLOTS.items()}
    text = template.format(
        product=rng.choice(_PRODUCTS),
        topic=rng.choice(_TOPICS),
        carrier=rng.choice(_CARRIERS),
        city=rng.choice(_CITIES),
        first=first,
        last=last,
        n=n,
        **values,
    )
    # a second slot of one kind gets its own value: "{price} (was {price})"
    for name, make in _SLOTS.items():
        while values[name] in text and text.count(values[name]) > 1:
            text = text.replace(values[name], make(rng), 1)
            break
    return text


def _text(rng: random.Random, templates: tuple[str, ...], k: int, n: int) -> str:
    parts = [_fill(rng, rng.choice(templates), n) for _ in range(k)]
    if rng.random() < 0.5:
        parts.append(" ".join(rng.choices(_FILLER, k=rng.randint(1, 4))).capitalize() + ".")
    return " ".join(parts)


def row(rng: random.Random, i: int, start: int = 1_704_067_200) -> dict[str, object]:
    """Conversation ``i``: all its text its own, with the digits people write (dates,
    times, prices, order and ticket numbers, versions, quantities)."""
    question = _text(rng, _QUESTIONS, 1, i)
    answer = _text(rng, _ANSWERS, rng.randint(2, 3), i)
    if rng.random() < 0.05:  # personal data, in the question or (quoted back) the answer
        pii = _fill(rng, rng.choice(_PII), i % 10_000)
        if rng.random() < 0.7:
            question += " " + pii
        else:
            answer += f" You wrote: {pii}."
    contexts = []
    for k in range(3):
        topic = rng.choice(_TOPICS).replace(" ", "-")
        doc = f"kb/{topic}/{rng.choice(_CITIES).lower()}-{rng.randrange(1000)}.md"
        text = _text(rng, _PASSAGES, 2, i)
        contexts.append(
            {"id": f"{doc}#{k}", "source": f"https://help.example.com/{doc}", "text": text}
        )
    out: dict[str, object] = {
        "id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),  # as apps log them
        "timestamp": start + i * 2,
        "version": "v2" if i % 2 else "v1",
        "user": f"user{rng.randrange(50_000)}@example.com",
        "question": question,
        "answer": answer,
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
        out["turns"] = [{"question": _text(rng, _QUESTIONS, 1, i), "timestamp": start + i * 2 + 60}]
    return out


def _words(rng: random.Random, n: int) -> str:
    return " ".join("".join(rng.choices(_LETTERS, k=rng.randint(2, 9))) for _ in range(n))


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
            f"and passage its own, digits as people write them) in {time.perf_counter() - t0:.1f} s"
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
