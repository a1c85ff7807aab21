"""Record encoding and hashing of journal format v1 (docs/journal-format.md, "Envelope").

A v1 line is ``BODY + ',"h":"' + sha256(BODY) + '"}' + '\\n'`` where BODY is the orjson encoding of
the record without ``h`` minus its closing brace. Verifying a line therefore needs no
re-canonicalisation: hash the bytes before the ``,"h":"`` suffix and compare.
"""

from __future__ import annotations

from typing import Any

import orjson

from .line import ABSENT as ABSENT
from .line import FORMAT_VERSION as FORMAT_VERSION
from .line import H_MARK as H_MARK
from .line import SYNC_TYPES as SYNC_TYPES
from .line import ZERO_HASH as ZERO_HASH
from .line import line_hash as line_hash
from .line import now_iso as now_iso
from .line import seal
from .line import sha256_bytes as sha256_bytes
from .line import sha256_file as sha256_file


def encode(record: dict[str, Any]) -> tuple[bytes, str]:
    """Encode ``record`` (which must not contain ``h``) as one v1 line; return ``(line, h)``."""
    return seal(orjson.dumps(record)[:-1])


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
