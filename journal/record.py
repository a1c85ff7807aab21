"""Record encoding and hashing of journal format v1 (docs/journal-format.md, "Envelope").

A v1 line is ``BODY + ',"h":"' + sha256(BODY) + '"}' + '\\n'`` where BODY is the orjson encoding of
the record without ``h`` minus its closing brace. Verifying a line therefore needs no
re-canonicalisation: hash the bytes before the ``,"h":"`` suffix and compare.
"""

from __future__ import annotations

import hashlib
import time
from datetime import UTC, datetime
from typing import Any

import orjson

FORMAT_VERSION = 1
ZERO_HASH = "0" * 64
H_MARK = b',"h":"'
ABSENT = "absent"
"""The pre/post value of a file that does not exist."""

SYNC_TYPES = frozenset(
    {
        "run.start",
        "intent",
        "agent.spawn",
        "approval.decision",
        "recovery",
        "checkpoint",
        "run.end",
        "journal.recovered",
    }
)
"""Types fsynced before ``append`` returns: each precedes a side effect or closes a run."""


_second: list[Any] = [None, ""]
"""The last whole second formatted, and its text: strftime costs more than the rest of an append."""


def now_iso() -> str:
    """RFC 3339 UTC timestamp with microseconds (informational only; lsn orders records)."""
    sec, us = divmod(time.time_ns() // 1000, 1_000_000)
    if _second[0] != sec:
        _second[0], _second[1] = sec, datetime.fromtimestamp(sec, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{_second[1]}.{us:06d}Z"


def encode(record: dict[str, Any]) -> tuple[bytes, str]:
    """Encode ``record`` (which must not contain ``h``) as one v1 line; return ``(line, h)``."""
    body = orjson.dumps(record)[:-1]
    h = hashlib.sha256(body).hexdigest()
    return body + H_MARK + h.encode() + b'"}\n', h


def line_hash(line: bytes) -> tuple[str | None, str | None]:
    """Return ``(stored_h, computed_h)`` of a line without its newline; ``None`` where absent.

    ``computed_h`` is the hash of the body as written, so a record whose ``h`` field alone was
    damaged can still be recognised as the record a later ``prev`` points at.
    """
    i = line.rfind(H_MARK)
    if i < 0:
        return None, None
    stored = line[i + 6 : i + 70]
    computed = hashlib.sha256(line[:i]).hexdigest()
    if len(stored) != 64 or line[i + 70 :] != b'"}':
        return None, computed
    try:
        return stored.decode("ascii"), computed
    except UnicodeDecodeError:
        return None, computed


def intact(line: bytes) -> dict[str, Any] | None:
    """A line (without its newline) whose own hash verifies, parsed, if it is an object with an
    integer ``lsn``; else None. What a reader that starts in the middle of a file looks for."""
    stored, computed = line_hash(line)
    if stored is None or stored != computed:
        return None
    try:
        rec = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return rec if isinstance(rec, dict) and type(rec.get("lsn")) is int else None


def sha256_bytes(data: bytes) -> str:
    """Content hash in the journal's notation: ``sha256:<hex>``."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def sha256_file(path: str | Any) -> str:
    """``sha256:<hex>`` of a file's content, or :data:`ABSENT` if it does not exist."""
    try:
        with open(path, "rb") as f:
            return "sha256:" + hashlib.file_digest(f, "sha256").hexdigest()
    except FileNotFoundError:
        return ABSENT


ENVELOPE = frozenset({"v", "lsn", "seq", "ts", "run", "agent", "type", "ref", "intent", "prev", "h"})
"""The envelope fields of every dialect; the rest of a record is its own (docs/journal-format.md §2)."""


def target_of(rec: dict[str, Any]) -> str:
    """What an intent acts on, wherever its dialect put it: ``target``, ``file`` or ``path``, else
    an argument naming a file or URL, else the command it runs. The one definition: the importer,
    the viewer and recovery name the same target for one intent."""
    for key in ("target", "file", "path"):
        v = rec.get(key)
        if isinstance(v, str):
            return v
    args = rec.get("args")
    if isinstance(args, dict):
        for key in ("path", "file", "target", "url"):
            v = args.get(key)
            if isinstance(v, str):
                return v
        cmd = args.get("cmd")
        if isinstance(cmd, list):
            return " ".join(str(c) for c in cmd)
    return ""


FILE_TOOLS = frozenset({"write_file", "replace_symbol", "ensure_line", "delete_file"})
"""The reference journal's end-state file tools: applying one twice equals applying it once."""


def changes_file(rec: dict[str, Any]) -> bool:
    """Whether an intent changes the file it targets (its effect, its tool, or its hashes say so)."""
    return (
        rec.get("effect") == "fs"
        or (isinstance(rec.get("tool"), str) and rec["tool"] in FILE_TOOLS)
        or isinstance(rec.get("pre"), str)
        or isinstance(rec.get("post"), str)
        or isinstance(rec.get("patch"), str)
    )
