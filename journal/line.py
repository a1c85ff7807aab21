"""The v1 line without a JSON library: sealing a record's body, content hashes, timestamps.

What a short-lived process that appends a record or two needs (a hook of a running agent, whose
whole run must cost about one interpreter start): no orjson here, whose import alone costs more
than half of a bare ``python -c pass``. :mod:`journal.record` re-exports these names.
"""

from __future__ import annotations

import hashlib
import os
import time

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


_second: list[object] = [None, ""]
"""The last whole second formatted, and its text: strftime costs more than the rest of an append."""


def now_iso() -> str:
    """RFC 3339 UTC timestamp with microseconds (informational only; lsn orders records)."""
    sec, us = divmod(time.time_ns() // 1000, 1_000_000)
    if _second[0] != sec:
        _second[0], _second[1] = sec, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec))
    return f"{_second[1]}.{us:06d}Z"


def seal(body: bytes) -> tuple[bytes, str]:
    """The v1 line of a record whose JSON text without its closing brace is ``body``, and its ``h``."""
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


def sha256_bytes(data: bytes) -> str:
    """Content hash in the journal's notation: ``sha256:<hex>``."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def sha256_file(path: str | os.PathLike[str]) -> str:
    """``sha256:<hex>`` of a file's content, or :data:`ABSENT` if it does not exist."""
    try:
        with open(path, "rb") as f:
            return "sha256:" + hashlib.file_digest(f, "sha256").hexdigest()
    except FileNotFoundError:
        return ABSENT
