"""What a torn tail holds, and what a repair cut off: intents that never started.

An intent in a torn tail was never fsynced, so (the write-ahead rule) its effect never started.
After a repair the cut bytes live only in the ``.broken`` copy its ``journal.recovered`` record
names; recovery reads them back from there until it has journaled a ``never_started`` decision for
each. A repair killed between its truncate and its record leaves a copy no record names (an
*unrecorded cut*): recovery finds it, and with ``--apply`` records it, so no lost intent goes
unreported.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from walkback.journal.reader import scan

from ._dialect import Pending, kind_of, pending_intent

_FIELD = {
    name: re.compile(rb'"' + name.encode() + rb'"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)')
    for name in ("lsn", "seq", "type", "tool", "target", "file", "path", "step")
}
PROBE = 4096
"""Bytes before a cut compared between a copy and the journal to tell the copy is this journal's."""


@dataclass(frozen=True)
class Cut:
    """Bytes a repair cut off, kept in a ``.broken`` copy that no ``journal.recovered`` names yet."""

    copy: str
    """File name of the copy (a sibling of the journal)."""
    last_good_lsn: int
    dropped: bytes
    lines: tuple[int, ...]
    """Line numbers of the cut lines in the copy."""

    @property
    def dropped_sha256(self) -> str:
        return "sha256:" + hashlib.sha256(self.dropped).hexdigest()


def _copy_path(path: Path, name: object) -> Path | None:
    """A ``.broken`` sibling named by a record; never a path from the journal."""
    if (
        not isinstance(name, str)
        or "/" in name
        or "\\" in name
        or not name.startswith(path.name + ".broken-")
    ):
        return None
    return path.parent / name


def recorded_cut(path: Path, rd: dict[str, Any]) -> bytes:
    """The bytes a recorded repair cut off, from the copy its ``journal.recovered`` names."""
    copy, cut = _copy_path(path, rd.get("broken_copy")), rd.get("truncated_bytes")
    if copy is None or not isinstance(cut, int) or cut <= 0:
        return b""
    try:
        with open(copy, "rb") as f:
            size = f.seek(0, 2)
            f.seek(max(0, size - cut))
            return f.read()
    except OSError:
        return b""


def unrecorded_cuts(path: Path, repairs: list[dict[str, Any]], since_lsn: int) -> list[Cut]:
    """Copies left by repairs that were killed before their record (cuts after ``since_lsn``)."""
    named = {rd.get("broken_copy") for rd in repairs}
    known = {(rd.get("last_good_lsn"), rd.get("dropped_sha256")) for rd in repairs}
    pattern = re.compile(re.escape(path.name) + r"\.broken-(\d+)-\d+")
    out: list[Cut] = []
    for copy in sorted(path.parent.iterdir()):
        m = pattern.fullmatch(copy.name)
        if not m or copy.name in named or int(m.group(1)) < since_lsn or not copy.is_file():
            continue
        res = scan(copy)  # rare: only a copy no record names is read again
        end = res.valid_end
        if not res.torn or not _same_history(path, copy, end):
            continue
        with open(copy, "rb") as f:
            f.seek(end)
            cut = Cut(copy.name, res.last_lsn, f.read(), tuple(d.line for d in res.torn))
        if (cut.last_good_lsn, cut.dropped_sha256) not in known:
            out.append(cut)
            known.add((cut.last_good_lsn, cut.dropped_sha256))
    return out


def _same_history(path: Path, copy: Path, end: int) -> bool:
    """The copy and the journal hold the same bytes just before the cut."""
    start = max(0, end - PROBE)
    with open(path, "rb") as a, open(copy, "rb") as b:
        a.seek(start)
        b.seek(start)
        mine = a.read(end - start)
        return len(mine) == end - start and mine == b.read(end - start)


def salvage(data: bytes, first_lsn: int, dialect: str, ref: int | None) -> list[Pending]:
    """Intents in torn or cut bytes. A line may be whole (a lost ordering) or cut mid-way."""
    out: list[Pending] = []
    for i, raw in enumerate(p for p in data.replace(b"\x00", b"").split(b"\n") if p.strip()):
        rec: dict[str, Any] | None = None
        try:
            parsed = orjson.loads(raw)
            rec = parsed if isinstance(parsed, dict) else None
        except orjson.JSONDecodeError:
            rec = _fields(raw)
        if rec is None or kind_of(rec, dialect) != "intent":
            continue
        num = rec.get("seq" if dialect == "seq" else "lsn")
        lsn = num if isinstance(num, int) else first_lsn + i
        p = pending_intent(lsn, rec)
        out.append(Pending(kind="lost", lsn=lsn, tool=p.tool, target=p.target, step=p.step, ref=ref))
    return out


def _fields(raw: bytes) -> dict[str, Any] | None:
    """The top-level fields still readable in a partial JSON line."""
    rec: dict[str, Any] = {}
    for name, rx in _FIELD.items():
        m = rx.search(raw)
        if m:
            try:
                rec[name] = orjson.loads(m.group(1))
            except orjson.JSONDecodeError:
                continue
    return rec or None
