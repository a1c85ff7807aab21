"""What a scan yields and reports: :class:`Record`, :class:`Damage` and :class:`ScanResult`.

Also the small line-level helpers shared by the reader and the chain checkers, so that a damaged
line is described the same way whichever dialect it was found in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

MAX_LSN = (1 << 63) - 1


@dataclass(slots=True)
class Record:
    """One readable record and where it sits in the file."""

    lsn: int
    """lsn (v1, lsn dialect) or seq (seq dialect)."""
    offset: int
    """Byte offset of the line's first byte."""
    line: int
    """1-based line number."""
    length: int
    """Bytes of the line as stored, including its line end (``\\n`` or ``\\r\\n``)."""
    data: dict[str, Any]
    """The parsed record."""
    after_gap: bool = False
    """True for a record that follows corruption (shown, but its history is not trusted)."""
    closes: int | None = None
    """The lsn (seq) of the earlier record this one completes, by the dialect's rules
    (docs/journal-format.md §4, §6): a ``commit``/``fail`` (seq dialect: a result) closes its
    intent, an ``approval.decision`` its request, an ``agent.end`` its spawn; None for every other
    record (a ``recovery`` record's ``ref`` names the intent it is about without closing it)."""

    def fields(self) -> Fields:
        return (self.lsn, self.offset, self.line, self.length, self.data, self.after_gap, self.closes)


Fields = tuple[int, int, int, int, dict[str, Any], bool, int | None]
"""A :class:`Record`'s fields in their order, as a plain tuple (:meth:`.reader.Scanner.fields`): a
hot loop unpacks it in one step, and the chain's fast path builds no Record per line (which costs
about a tenth of an import)."""


@dataclass(slots=True)
class Damage:
    """One bad line: where it is and why it failed."""

    line: int
    offset: int
    reason: str
    lsn: int | None = None
    """The lsn the line claims (if it parses) or the lsn expected at that position."""


@dataclass
class ScanResult:
    """What a full scan found. ``intact`` is the one bit ``walkback check`` exits on."""

    path: Path
    dialect: str = "v1"
    """``v1`` (hash-chained), ``lsn`` (seed dialect without hashes) or ``seq`` (seed pairs)."""
    header: dict[str, Any] | None = None
    """v1: the ``run.start`` record, or the ``journal.continued`` record that starts a live file
    after a rotation (it repeats the header's fields); None if damaged. Seed dialects: the first
    record."""
    first_lsn: int = 0
    """lsn of the file's first record: 0, or that of its ``journal.continued`` record."""
    records: int = 0
    """Records on the trusted chain (records shown beside a gap are not counted)."""
    last_lsn: int = -1
    """lsn of the last record on the chain (seed dialects: the highest number read); -1 if none."""
    last_h: str | None = None
    valid_end: int = 0
    """Byte offset where the last readable record ends; a repair truncates here."""
    valid_line: int = 0
    """Line number of the record that ends at ``valid_end`` (0 before the first)."""
    file_size: int = 0
    torn: list[Damage] = field(default_factory=list)
    """Bad lines of the torn tail, if any (repairable)."""
    corrupt: list[Damage] = field(default_factory=list)
    """Bad lines followed by valid records (never repaired)."""

    @property
    def torn_tail(self) -> dict[str, int] | None:
        """``{offset, bytes}`` of the repairable tail, or None."""
        if not self.torn:
            return None
        return {"offset": self.valid_end, "bytes": self.file_size - self.valid_end}

    @property
    def chain(self) -> str:
        """``ok`` / ``broken`` for v1; ``absent`` for the seed dialects, which have no hashes."""
        if self.dialect != "v1":
            return "absent"
        return "broken" if self.corrupt else "ok"

    @property
    def first_bad_lsn(self) -> int | None:
        bad = self.corrupt or self.torn
        return bad[0].lsn if bad else None

    @property
    def intact(self) -> bool:
        return not self.torn and not self.corrupt

    def damage_summary(self) -> str:
        """One phrase for error messages: where the damage starts and what kind it is."""
        parts = []
        if self.corrupt:
            d = self.corrupt[0]
            parts.append(f"corruption at line {d.line}: {d.reason}")
        if self.torn:
            cut = self.file_size - self.valid_end
            parts.append(f"torn tail of {cut} bytes from line {self.torn[0].line}")
        return "; ".join(parts) or "intact"


def as_lsn(value: Any) -> int | None:
    """``value`` if it is a usable lsn/seq (a non-negative int that fits 64 bits, not a bool)."""
    if type(value) is int and 0 <= value <= MAX_LSN:
        return value
    return None


def brief(value: Any, limit: int = 40) -> str:
    """A short, escaped rendering of an untrusted value for a one-line message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


NUL_REASON = "NUL bytes (space reserved but never written)"


def partial_reason(line: bytes) -> str:
    """Why a last line without its newline is not a record."""
    return NUL_REASON if line[:1] == b"\x00" and not line.strip(b"\x00") else "partial last line (no newline)"


def parse_line(line: bytes) -> tuple[dict[str, Any] | None, str]:
    """Parse one line as a JSON object; on failure return ``(None, why)`` in a few words."""
    if line[:1] == b"\x00" and not line.strip(b"\x00"):
        return None, NUL_REASON
    try:
        rec = orjson.loads(line)
    except orjson.JSONDecodeError as e:
        msg = str(e)
        if "UTF-8" in msg:
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as u:
                return None, f"not UTF-8 text (byte 0x{line[u.start]:02x} at byte {u.start})"
        head, _, where = msg.partition(": line ")
        pos = where.rpartition("(char ")[2].rstrip(")")
        at = f" at byte {pos}" if pos.isdigit() else ""
        if b"\x00" in line:
            return None, f"binary data, not JSON ({head}{at})"
        return None, f"not JSON ({head}{at})"
    if not isinstance(rec, dict):
        kind = "array" if isinstance(rec, list) else type(rec).__name__
        return None, f"a JSON {kind}, not an object"
    return rec, ""


CLOSING_TYPES = frozenset({"commit", "fail", "approval.decision", "agent.end"})
"""Types whose record completes an earlier one (the one its ``ref`` names, in v1)."""


def closes_by_ref(rec: dict[str, Any]) -> int | None:
    """v1 (and a typed seed record): the ``ref`` of a record whose type completes another."""
    if rec.get("type") in CLOSING_TYPES:
        return as_lsn(rec.get("ref"))
    return None


def is_seq_result(rec: dict[str, Any]) -> bool:
    """In the seq dialect, ``{seq, result, status}`` completes the intent with the same seq."""
    return "tool" not in rec and ("result" in rec or "status" in rec)
