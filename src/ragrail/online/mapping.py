"""One production-log row (a parsed JSON object, or a CSV record) to a redacted
:class:`~ragrail.online.record.Conversation`, by the ``[logs]`` field mapping.

A row that cannot be read raises :class:`BadField`, naming the field and why, never the
value: the value may be the very personal data that must not reach a terminal or a CI log.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from ragrail.online.record import Context, Conversation, Turn
from ragrail.online.redact import make_redactor, user_key
from ragrail.online.store import MAX_AT, MIN_AT, encode_context, encode_turns
from ragrail.project import LogsConfig

MISSING: Any = object()
UNVERSIONED = "unknown"  # the version of a row that logs none

_UP = frozenset({"up", "+1", "1", "true", "yes", "thumbs_up", "👍"})
_DOWN = frozenset({"down", "-1", "false", "no", "thumbs_down", "👎"})
_NO_VOTE = frozenset({"", "0", "none", "null"})
_TRUE = frozenset({"true", "1", "yes", "y", "t"})
_FALSE = frozenset({"false", "0", "no", "n", "f"})


class BadField(ValueError):
    """A row that cannot be stored: ``field`` (its dotted path or column) and why."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


def _split(path: str) -> tuple[str, ...]:
    return tuple(path.split("."))


def find(data: Any, path: tuple[str, ...]) -> Any:
    """The value at a dotted path (``("a", "0", "b")``), or :data:`MISSING`."""
    for key in path:
        if isinstance(data, dict):
            data = data.get(key, MISSING)
            if data is MISSING:
                return MISSING
        elif isinstance(data, list) and key.isdigit() and int(key) < len(data):
            data = data[int(key)]
        else:
            return MISSING
    return data


def _number(value: Any, name: str) -> float:
    """A finite number from a JSON number or a numeric string (CSV cells are strings)."""
    if isinstance(value, bool):
        raise BadField(name, "expected a number, got true/false")
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise BadField(name, "expected a number") from None
    elif isinstance(value, int):
        try:
            value = float(value)
        except OverflowError:
            raise BadField(name, "number too large") from None
    elif not isinstance(value, float):
        raise BadField(name, f"expected a number, got {_kind(value)}")
    if not math.isfinite(value):
        raise BadField(name, "not a finite number")
    return value


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false"}.get(
        type(value), "null" if value is None else "a number"
    )


def timestamp(value: Any, unit: str, name: str) -> float:
    """Seconds since 1970 (UTC) from a number (in ``unit``: "s" or "ms") or an ISO 8601
    string; a string without an offset is UTC. Either way the time must be a UTC date
    (years 1 to 9999): every reader of the log database turns it into one."""
    text = value.strip() if isinstance(value, str) else ""
    if text[:1].isdigit() and ("-" in text[1:] or ":" in text or "T" in text):
        try:
            when = datetime.fromisoformat(text)
            if when.tzinfo is None:
                when = when.replace(tzinfo=UTC)
            at = when.timestamp()
        except (ValueError, OverflowError):
            raise BadField(name, "not an ISO 8601 date-time") from None
    else:
        at = _number(value, name)
        if unit == "ms":
            at /= 1000.0
    # an ISO time too: 0001-01-01T00:00:00+01:00 parses, yet is in year 0 in UTC
    if not in_date_range(at):
        raise BadField(name, "out of range for a date (years 1 to 9999 in UTC)")
    return at


def in_date_range(at: float) -> bool:
    """Whether seconds since 1970 are a UTC date ragrail can write (years 1 to 9999)."""
    return MIN_AT <= at <= MAX_AT


def thumbs(value: Any, name: str) -> int | None:
    """+1 (up), -1 (down) or None (no vote) from the many ways apps log a vote."""
    if value is None or value is MISSING:
        return None
    if isinstance(value, bool):
        return 1 if value else -1
    if isinstance(value, (int, float)):
        if value in (1, -1, 0):
            return int(value) or None
    elif isinstance(value, str):
        word = value.strip().lower()
        if word in _UP:
            return 1
        if word in _DOWN:
            return -1
        if word in _NO_VOTE:
            return None
    raise BadField(name, "expected up/down, +1/-1/0, true/false or null")


def flag(value: Any, name: str) -> bool | None:
    """A yes/no outcome (escalated, resolved): JSON true/false, 0/1, or a CSV word."""
    if value is None or value is MISSING:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
        if not word:
            return None
    raise BadField(name, "expected true/false (or 1/0, yes/no) or null")


# Latency (ms) and cost (USD) above this are bad rows: no real one comes near, and the
# signals' sums of squares of such figures would overflow a float.
MAX_FIGURE = 1e30


def _optional_number(value: Any, name: str, integer: bool = False) -> Any:
    kind = type(value)
    if (kind is float and not integer and 0 <= value <= MAX_FIGURE) or (
        kind is int and 0 <= value < 2**63
    ):
        return value
    if value is None or value is MISSING or value == "":
        return None
    number = _number(value, name)
    if number < 0:
        raise BadField(name, "must not be negative")
    if integer:
        if number != int(number):
            raise BadField(name, "expected a whole number")
        if number >= 2**63:  # SQLite's largest integer
            raise BadField(name, "number too large")
        return int(number)
    if number > MAX_FIGURE:
        raise BadField(name, f"number too large (above {MAX_FIGURE:.0e})")
    return number


def _text(value: Any, name: str, required: bool = True, number: bool = False) -> str | None:
    """A string field; ``number``: a JSON integer is taken as its digits (ids often are)."""
    if isinstance(value, str):
        return value
    if value is MISSING or value is None:
        if required:
            raise BadField(name, "missing")
        return None
    if number and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise BadField(name, f"expected text, got {_kind(value)}")


CONTEXT_MEMO_SIZE = 20_000  # redacted passages remembered (a few MB): emptied when full

_FIELDS = (
    "id", "timestamp", "version", "user", "question", "answer", "contexts", "thumbs",
    "escalated", "resolved", "latency_ms", "tokens_in", "tokens_out", "cost", "turns",
)  # fmt: skip


# Fields a row may leave out: one the project names that no row has is most likely a typo
# (``thumbs = "feedback.vot"``), warned about after the ingest (see RowMapper.unseen)
_OPTIONAL = (
    "version", "user", "contexts", "thumbs", "escalated", "resolved", "latency_ms",
    "tokens_in", "tokens_out", "cost", "turns",
)  # fmt: skip
_INNER_OPTIONAL = ("context_id", "context_source", "context_text", "turn_timestamp")


class RowMapper:
    """Maps rows by one ``[logs]`` config. ``columns=True``: each field is a CSV column
    name (not split at dots) and contexts/turns cells hold JSON text."""

    def __init__(self, config: LogsConfig, columns: bool = False) -> None:
        self.config = config
        self.columns = columns
        self.redact = make_redactor(config.redact, region=config.region, ip=config.redact_ip)
        self.paths = {
            n: (getattr(config, n),) if columns else _split(getattr(config, n)) for n in _FIELDS
        }
        self.inner = {
            n: _split(getattr(config, n))
            for n in (
                "context_id",
                "context_source",
                "context_text",
                "turn_question",
                "turn_timestamp",
            )
        }

        # the optional fields the project names that no row read so far has; checked only
        # while some are left, so it costs nothing once each has been seen
        named = config.model_fields_set
        self.unseen = {n for n in (*_OPTIONAL, *_INNER_OPTIONAL) if n in named}
        self._unseen_top = [(i, n) for i, n in enumerate(_FIELDS) if n in self.unseen]

        # the keys an error message may print: those the config names (any other key of a
        # row is content, and may be personal data)
        self.names = frozenset(
            part for n in (*_FIELDS, *self.inner) for part in _split(getattr(config, n))
        )

        # the context keys when each is one key (no dots): then a passage seen before is
        # found in the memo by its raw values
        inner = [self.inner[n] for n in ("context_id", "context_source", "context_text")]
        self.simple_contexts = (
            tuple(p[0] for p in inner) if all(len(p) == 1 for p in inner) else None
        )
        self.context_memo: dict[tuple[Any, ...], tuple[Context, str]] = {}

        # (top-level key, or None and the dotted path) per field, in _FIELDS order
        self.lookups = [
            (self.paths[n][0], ()) if len(self.paths[n]) == 1 else (None, self.paths[n])
            for n in _FIELDS
        ]

    def get(self, row: Any, name: str) -> Any:
        path = self.paths[name]
        if len(path) == 1:
            return row.get(path[0], MISSING)
        return find(row, path)

    def values(self, row: dict[str, Any]) -> list[Any]:
        """Every mapped field's value (or MISSING), in _FIELDS order, in one pass."""
        get = row.get
        return [get(k, MISSING) if k is not None else find(row, p) for k, p in self.lookups]

    def redact_id(self, raw: str) -> str:
        """A conversation id as stored: as written when it holds no personal data, else a
        hash of it (``[id 3f2a…]``, 16 hex digits of its SHA-256). Never the redacted text:
        ids 4810000 and 4810001 would both read ``[phone]``, one row for a thousand."""
        redacted = self.redact(raw)
        if redacted == raw:
            return raw
        return f"[id {user_key(raw)}]"

    def conversation(self, row: Any) -> Conversation:
        """The conversation in ``row``, redacted; BadField when it cannot be read."""
        fields, _ = self._fields(row)
        return Conversation(*fields)

    def stored_row(self, row: Any) -> tuple[object, ...]:
        """What :meth:`conversation` gives, as the database row ``store.to_row`` makes of it,
        without building the conversation (ingest's workers: a third less work a line)."""
        f, contexts_json = self._fields(row)
        turns = f[7]
        return (
            f[0], f[1], f[2], f[5], f[3], f[4], contexts_json,
            encode_turns(turns) if turns else "[]",
            f[8], None if f[9] is None else int(f[9]), None if f[10] is None else int(f[10]),
            f[11], f[12], f[13], f[14], "",
        )  # fmt: skip

    def _fields(self, row: Any) -> tuple[tuple[Any, ...], str]:
        """The conversation's fields, in :class:`Conversation`'s order, and its contexts as
        stored (compact JSON)."""
        if not isinstance(row, dict):
            raise BadField("-", f"expected a JSON object, got {_kind(row)}")
        cfg, redact = self.config, self.redact
        (
            cid, at_value, version, user, question, answer, contexts, vote, escalated,
            resolved, latency, tokens_in, tokens_out, cost, turns,
        ) = values = self.values(row)  # fmt: skip
        if self._unseen_top:
            self._saw(values)
        cid = _text(cid, cfg.id, number=True)
        if not cid:
            raise BadField(cfg.id, "empty")
        if at_value is MISSING or at_value is None or at_value == "":
            raise BadField(cfg.timestamp, "missing")
        at = timestamp(at_value, cfg.timestamp_unit, cfg.timestamp)
        question = _text(question, cfg.question)
        if not question or not question.strip():
            raise BadField(cfg.question, "empty")
        answer = _text(answer, cfg.answer)
        # "v1 " from a CSV cell is v1: versions differing by spaces would look alike
        version = (_text(version, cfg.version, required=False, number=True) or "").strip()
        version = version or UNVERSIONED
        user = _text(user, cfg.user, required=False, number=True)
        pairs = self._contexts(contexts)
        contexts_json = "[" + ",".join([f for _, f in pairs]) + "]"
        return (
            self.redact_id(cid),
            at,
            redact(version),
            redact(question),
            redact(answer),  # type: ignore[arg-type]
            user_key(user) if user else None,
            tuple([c for c, _ in pairs]),
            self._turns(turns),
            thumbs(vote, cfg.thumbs),
            flag(escalated, cfg.escalated),
            flag(resolved, cfg.resolved),
            _optional_number(latency, cfg.latency_ms),
            _optional_number(tokens_in, cfg.tokens_in, integer=True),
            _optional_number(tokens_out, cfg.tokens_out, integer=True),
            _optional_number(cost, cfg.cost),
        ), contexts_json

    def _saw(self, values: list[Any]) -> None:
        seen = [(i, n) for i, n in self._unseen_top if values[i] is not MISSING]
        for item in seen:
            self._unseen_top.remove(item)
            self.unseen.discard(item[1])

    def _saw_inner(self, item: dict[str, Any], names: tuple[str, ...]) -> None:
        for name in names:
            if name in self.unseen and find(item, self.inner[name]) is not MISSING:
                self.unseen.discard(name)

    def _cell_json(self, value: Any, name: str) -> Any:
        """A CSV cell holding JSON text (contexts, turns) parsed; JSON rows pass through."""
        if not self.columns or not isinstance(value, str):
            return value
        if not value.strip():
            return None
        from ragrail.errors import InputError
        from ragrail.jsonio import parse_json

        try:
            return parse_json(value, name, keys=self.names)
        except InputError as exc:
            raise BadField(name, exc.message) from None

    def _contexts(self, value: Any) -> list[tuple[Context, str]]:
        """Each context with its stored JSON (``["id","source","text"]``)."""
        name = self.config.contexts
        value = self._cell_json(value, name)
        if value is MISSING or value is None:
            return []
        if not isinstance(value, list):
            raise BadField(name, f"expected a list, got {_kind(value)}")
        cid, csrc, ctext = (
            self.inner["context_id"],
            self.inner["context_source"],
            self.inner["context_text"],
        )
        redact, memo, simple = self.redact, self.context_memo, self.simple_contexts
        out = []
        for i, item in enumerate(value):
            key = None
            if simple and type(item) is dict:
                # A log repeats its corpus's passages: one seen before (the same id, source
                # and text, all text) is the same redacted Context, found in one look-up.
                ident, source, text = (item.get(simple[0]), item.get(simple[1]), item.get(simple[2]))  # fmt: skip
                if (
                    type(ident) is str and ident and type(text) is str
                    and (source is None or type(source) is str)
                ):  # fmt: skip
                    key = (ident, source, text)
                    found = memo.get(key)
                    if found is not None:
                        out.append(found)
                        continue
            at = f"{name}.{i}"
            if isinstance(item, str):  # a bare passage
                bare = Context(str(i), "", redact(item))
                out.append((bare, encode_context(bare)))
                continue
            if not isinstance(item, dict):
                raise BadField(at, f"expected an object or text, got {_kind(item)}")
            if self.unseen:
                self._saw_inner(item, ("context_id", "context_source", "context_text"))
            text = _text(find(item, ctext), f"{at}.{self.config.context_text}", required=False)
            ident = _text(
                find(item, cid), f"{at}.{self.config.context_id}", required=False, number=True
            )
            source = _text(find(item, csrc), f"{at}.{self.config.context_source}", required=False)
            if source is None:
                source = ident.split("#")[0] if ident else ""
            context = Context(
                redact(ident) if ident else str(i), redact(source), redact(text or "")
            )
            pair = (context, encode_context(context))
            if key is not None:
                if len(memo) >= CONTEXT_MEMO_SIZE:
                    memo.clear()
                memo[key] = pair
            out.append(pair)
        return out

    def _turns(self, value: Any) -> tuple[Turn, ...]:
        name = self.config.turns
        value = self._cell_json(value, name)
        if value is MISSING or value is None:
            return ()
        if not isinstance(value, list):
            raise BadField(name, f"expected a list, got {_kind(value)}")
        tq, tt = self.inner["turn_question"], self.inner["turn_timestamp"]
        out = []
        for i, item in enumerate(value):
            at = f"{name}.{i}"
            if isinstance(item, str):
                out.append(Turn(self.redact(item)))
                continue
            if not isinstance(item, dict):
                raise BadField(at, f"expected an object or text, got {_kind(item)}")
            if "turn_timestamp" in self.unseen:
                self._saw_inner(item, ("turn_timestamp",))
            question = _text(find(item, tq), f"{at}.{self.config.turn_question}")
            when = find(item, tt)
            at_s = (
                None
                if when is MISSING or when is None or when == ""
                else timestamp(
                    when, self.config.timestamp_unit, f"{at}.{self.config.turn_timestamp}"
                )
            )
            out.append(Turn(self.redact(question), at_s))  # type: ignore[arg-type]
        return tuple(out)
