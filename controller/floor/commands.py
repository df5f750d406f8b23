"""Signed commands from the host (docs/host-commands.md): the message, its signature, the checks
the table makes before it obeys one, and the flood bound.

A command is one JSON object on ``tc/<site>/<table>/cmd``::

    {"v": 3, "table": "pg-01", "seq": 17, "ts": 1764691200000000000, "cmd": "disable",
     "args": ["audit"], "key_id": "8c1e...", "sig": "3045..."}

``sig`` is the host's ECDSA P-256 signature (SHA-256, DER, hex) over the canonical JSON of every
other field (sorted keys, no spaces, UTF-8: :func:`controller.journal.chain.canonical`, as the
journal's signed heads). The table obeys it only when, in this order: it parses (malformed),
names this table (other-table), is signed by the commissioned key (forged), its ``seq`` is above
the last accepted one (replayed: the last is journaled, so a restart does not reopen it), its
``ts`` is within ``command_max_age_s`` of the table's clock (stale), and its command and
arguments are known (unknown). The broker's ACL (only the host publishes there) is defence in
depth, not the proof. Nothing here does I/O: :class:`CommandChecker` runs on the loop thread.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypedDict

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from controller.fields.readers import as_map
from controller.journal.chain import ChainError, canonical
from controller.journal.heads import key_id as public_key_id
from controller.program.manifest import ManifestError, parse_seed

VERSION: Final = 3
#: The largest message read (bytes): a longer one is malformed, unparsed.
MAX_BYTES: Final = 4096
#: Each command's arguments: (fewest, most) words; ``disable``'s REASON may be several words.
COMMANDS: Final[Mapping[str, tuple[int, int]]] = {
    "disable": (1, 32),
    "enable": (0, 0),
    "verify": (1, 1),
    "meters": (0, 0),
    "recall": (0, 1),
    "replay": (1, 2),
}
FIELDS: Final = ("v", "table", "seq", "ts", "cmd", "args", "key_id", "sig")
Why = Literal["malformed", "other-table", "forged", "replayed", "stale", "unknown", "flood"]
#: The accepted command's row (its ``seq`` is the replay bound) and the refusals' (counted).
ACCEPTED_KIND: Final = "host.command"
REFUSED_KIND: Final = "host.refused"


class CommandError(ValueError):
    """A command refused: ``why`` is one of :data:`Why`, ``reason`` says it to the host."""

    def __init__(self, why: Why, reason: str) -> None:
        super().__init__(reason)
        self.why: Why = why
        self.reason = reason


class Message(TypedDict):
    """A command's fields, each of its type (:func:`parse`, :func:`sign_command`)."""

    v: int
    table: str
    seq: int
    ts: int
    cmd: str
    args: list[str]
    key_id: str
    sig: str


@dataclass(frozen=True, slots=True)
class Command:
    """A command that passed every check."""

    table: str
    seq: int
    ts: int
    cmd: str
    args: tuple[str, ...]
    key_id: str


def signed_bytes(message: Mapping[str, object]) -> bytes:
    """The bytes the signature covers: the canonical JSON of every field but ``sig``."""
    return canonical({k: v for k, v in message.items() if k != "sig"})


def sign_command(
    key: ec.EllipticCurvePrivateKey,
    table: str,
    seq: int,
    cmd: str,
    args: list[str],
    *,
    ts: int | None = None,
) -> Message:
    """A signed command (the host side: ``table-controller host``)."""
    message: Message = {
        "v": VERSION,
        "table": table,
        "seq": seq,
        "ts": time.time_ns() if ts is None else ts,
        "cmd": cmd,
        "args": list(args),
        "key_id": public_key_id(key.public_key()),
        "sig": "",  # not signed: signed_bytes leaves it out
    }
    message["sig"] = key.sign(signed_bytes(message), ec.ECDSA(hashes.SHA256())).hex()
    return message


def encode(message: Mapping[str, object]) -> bytes:
    return json.dumps(dict(message), sort_keys=True, separators=(",", ":")).encode("utf-8")


_HEX = re.compile(r"[0-9a-f]{16,400}")


def parse(payload: bytes) -> Message:
    """The message's fields, each of its type; CommandError ``malformed`` otherwise."""
    if len(payload) > MAX_BYTES:
        raise CommandError("malformed", f"longer than {MAX_BYTES} bytes")
    try:
        decoded: object = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise CommandError("malformed", f"not JSON: {str(exc)[:80]}") from None
    if not isinstance(decoded, dict):
        raise CommandError("malformed", "not a JSON object")
    message = as_map(decoded, "the message")  # a JSON object's keys are strings
    missing = [f for f in FIELDS if f not in message]
    extra = sorted(set(message) - set(FIELDS))
    if missing or extra:
        said = f"lacks {', '.join(missing)}" if missing else f"has unknown {', '.join(extra)}"
        raise CommandError("malformed", said[:200])
    if message["v"] != VERSION or isinstance(message["v"], bool):
        raise CommandError("malformed", f"v must be {VERSION}")
    seq, ts = _whole(message, "seq"), _whole(message, "ts")
    table, cmd = _text(message, "table"), _text(message, "cmd")
    key_id, sig = _text(message, "key_id"), _text(message, "sig")
    args = message["args"]
    if not isinstance(args, list) or len(args) > 32:
        raise CommandError("malformed", "args must be a list of at most 32 strings")
    words = [a for a in args if isinstance(a, str) and 0 < len(a) <= 200]
    if len(words) != len(args):
        raise CommandError("malformed", "args must be non-empty strings of at most 200")
    if not _HEX.fullmatch(sig):
        raise CommandError("malformed", "sig must be hex")
    return {
        "v": VERSION,
        "table": table,
        "seq": seq,
        "ts": ts,
        "cmd": cmd,
        "args": words,
        "key_id": key_id,
        "sig": sig,
    }


#: The largest row number or count an argument may name (a journal's seq is signed 64-bit).
MAX_NUMBER: Final = 2**63 - 1


def _number(word: str) -> int | None:
    """A whole number from 1 written in ASCII digits, or None."""
    if not (word.isascii() and word.isdigit() and len(word) <= 19):
        return None
    value = int(word)
    return value if 1 <= value <= MAX_NUMBER else None


def argument_problem(cmd: str, args: Sequence[str]) -> str | None:
    """What is wrong with a known command's arguments (docs/host-commands.md "Checks", step
    6), or None: a command refused for them is not accepted, counted or obeyed."""
    if cmd == "recall" and args and _number(args[0]) is None:
        return f"recall N: N must be a whole number from 1, not {args[0][:16]!r}"
    if cmd == "replay":
        numbers = [_number(a) for a in args]
        first, last = numbers[0], numbers[-1]
        if first is None or last is None or last < first:
            return "replay FROM [TO]: row numbers are whole numbers, 1 <= FROM <= TO"
    if cmd == "verify":
        try:
            parse_seed(args[0])
        except ManifestError as exc:
            return f"verify SEED: {exc}"
    return None


def _whole(message: Mapping[str, object], name: str) -> int:
    value = message[name]
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 2**63:
        raise CommandError("malformed", f"{name} must be a positive whole number")
    return value


def _text(message: Mapping[str, object], name: str) -> str:
    value = message[name]
    if not isinstance(value, str) or not 0 < len(value) <= 400:
        raise CommandError("malformed", f"{name} must be a non-empty string")
    return value


@dataclass
class CommandChecker:
    """The table's checks (see the module docstring). ``last_seq`` is the last accepted
    command's (from the journal at start); :meth:`accepted` moves it."""

    table: str
    public_key: ec.EllipticCurvePublicKey
    max_age_s: int
    last_seq: int = 0

    @property
    def key_id(self) -> str:
        return public_key_id(self.public_key)

    def check(self, payload: bytes, now_ns: int) -> Command:
        """The command, or CommandError saying why it is refused."""
        m = parse(payload)
        if m["table"] != self.table:
            raise CommandError("other-table", f"addressed to table {m['table'][:64]!r}")
        try:
            signed = signed_bytes(m)
        except ChainError as exc:
            raise CommandError("malformed", str(exc)) from None
        try:
            self.public_key.verify(bytes.fromhex(m["sig"]), signed, ec.ECDSA(hashes.SHA256()))
        except (InvalidSignature, ValueError):
            raise CommandError(
                "forged", "the signature is not the commissioned host key's"
            ) from None
        if m["seq"] <= self.last_seq:
            raise CommandError(
                "replayed", f"seq {m['seq']} is not above the last accepted ({self.last_seq})"
            )
        age_s = abs(now_ns - m["ts"]) / 1e9
        if age_s > self.max_age_s:
            raise CommandError(
                "stale", f"its time is {age_s:.0f} s from the table's (at most {self.max_age_s})"
            )
        arity = COMMANDS.get(m["cmd"])
        if arity is None:
            raise CommandError("unknown", f"no such command {m['cmd'][:32]!r}")
        if not arity[0] <= len(m["args"]) <= arity[1]:
            raise CommandError("unknown", f"{m['cmd']} takes {arity[0]}-{arity[1]} arguments")
        problem = argument_problem(m["cmd"], m["args"])
        if problem is not None:
            raise CommandError("unknown", problem)
        return Command(m["table"], m["seq"], m["ts"], m["cmd"], tuple(m["args"]), m["key_id"])

    def accepted(self, command: Command) -> None:
        self.last_seq = command.seq


def summary(payload: bytes) -> dict[str, int | str]:
    """What a refusal's row keeps of the message: its seq, cmd and table when it parsed as
    an object (bounded), else its length."""
    try:
        m: object = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return {"bytes": len(payload)}
    if not isinstance(m, dict):
        return {"bytes": len(payload)}
    out: dict[str, int | str] = {"bytes": len(payload)}
    for k in ("seq", "cmd", "table"):
        v = m.get(k)
        if isinstance(v, int) and not isinstance(v, bool):
            out[k] = v
        elif isinstance(v, str):
            out[k] = v[:64]
    return out


def reply(
    table: str, seq: int | None, ok: bool, lines: list[str], why: str = "", *, now_ns: int
) -> bytes:
    """The table's reply on ``tc/<site>/<table>/reply``."""
    body: dict[str, object] = {
        "v": VERSION,
        "table": table,
        "seq": seq,
        "ok": ok,
        "lines": lines,
        "ts": now_ns,
    }
    if why:
        body["why"] = why
    return encode(body)
