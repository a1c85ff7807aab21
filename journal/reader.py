"""The journal reader: stream records with their offsets, verify the chain, classify damage.

``Scanner(path)`` is an iterator of :class:`Record` (the readable records, in file order) whose
``result`` (a :class:`ScanResult`) is complete once iteration ends. Nothing is repaired here; see
:mod:`journal.repair`. The rules (docs/journal-format.md, "Reading and damage"):

* the valid prefix ends at the first line that is partial, not a JSON object, fails its own hash,
  does not chain (``prev``) or breaks the lsn sequence;
* from there to the end of file is a **torn tail** (repairable) unless a readable record in that
  region chains to a hash stored in the region or to the prefix: then the bad lines are
  **corruption** (never repaired), and the records after them are still yielded so that a
  forensic view can show them beside the gap.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from .errors import UnusableJournal
from .record import FORMAT_VERSION, ZERO_HASH, line_hash
from .writer import journal_path

BLOCK = 1 << 23
BOM = b"\xef\xbb\xbf"


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
    """Bytes of the line including its newline."""
    data: dict[str, Any]
    """The parsed record."""
    after_gap: bool = False
    """True for a record that follows corruption (shown, but its history is not trusted)."""


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
    records: int = 0
    last_lsn: int = -1
    """lsn of the last record of the valid chain (after corruption: of the last readable one)."""
    last_h: str | None = None
    valid_end: int = 0
    """Byte offset where the last readable record ends; a repair truncates here."""
    file_size: int = 0
    torn: list[Damage] = field(default_factory=list)
    """Bad lines of the torn tail, if any (repairable)."""
    corrupt: list[Damage] = field(default_factory=list)
    """Bad lines followed by valid records (never repaired)."""

    @property
    def torn_tail(self) -> dict[str, int] | None:
        if not self.torn:
            return None
        return {"offset": self.valid_end, "bytes": self.file_size - self.valid_end}

    @property
    def chain(self) -> str:
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
        parts = []
        if self.corrupt:
            d = self.corrupt[0]
            parts.append(f"corruption at line {d.line}: {d.reason}")
        if self.torn:
            parts.append(f"torn tail of {self.file_size - self.valid_end} bytes from line {self.torn[0].line}")
        return "; ".join(parts) or "intact"


def iter_lines(path: Path, start: int = 0) -> Iterator[tuple[int, int, bytes, bool]]:
    """Yield ``(offset, line_no, line, has_newline)``; the line excludes ``\\n`` and a ``\\r``.

    ``start`` (a line's first byte) begins there; line numbers then count from that line.
    """
    with open(path, "rb") as f:
        offset = f.seek(start)
        line_no = 0
        carry = b""
        first = start == 0
        while True:
            block = f.read(BLOCK)
            if first:
                first = False
                if block.startswith(BOM):
                    block = block[3:]
                    offset = 3
            if not block:
                break
            data = carry + block if carry else block
            parts = data.split(b"\n")
            carry = parts.pop()
            for raw in parts:
                line_no += 1
                n = len(raw) + 1
                yield offset, line_no, (raw[:-1] if raw.endswith(b"\r") else raw), True
                offset += n
        if carry:
            yield offset, line_no + 1, carry, False


def is_seq_result(rec: dict[str, Any]) -> bool:
    """In the seq dialect, ``{seq, result, status}`` completes the intent with the same seq."""
    return "tool" not in rec and ("result" in rec or "status" in rec)


def _detect_dialect(rec: dict[str, Any], path: Path, line: int) -> str:
    if "v" in rec:
        v = rec["v"]
        if v != FORMAT_VERSION:
            raise UnusableJournal(
                f"journal format version {v!r} is not supported (this walkback reads version "
                f"{FORMAT_VERSION}); upgrade walkback",
                path=path,
                line=line,
            )
        return "v1"
    if "seq" in rec:
        return "seq"
    if "lsn" in rec and "type" in rec:
        return "lsn"
    raise UnusableJournal(
        "not a walkback journal: the first record has neither `v`, `lsn`+`type` nor `seq`"
        " (for other agents' logs use `walkback import`)",
        path=path,
        line=line,
    )


def _parse(line: bytes) -> tuple[dict[str, Any] | None, str]:
    if not line:
        return None, "empty line"
    if line[:1] == b"\x00":
        return None, "NUL bytes"
    try:
        rec = orjson.loads(line)
    except orjson.JSONDecodeError as e:
        return None, f"not JSON ({str(e).split(':')[0]})"
    if not isinstance(rec, dict):
        return None, f"a JSON {type(rec).__name__}, not an object"
    return rec, ""


class Scanner:
    """Iterate a journal's readable records; ``result`` describes integrity when done."""

    def __init__(self, path: str | Path, *, start: int = 0) -> None:
        """``start``: byte offset of a line to begin at (a tail scan, e.g. from the last checkpoint).

        A tail scan trusts that first record by its own hash and verifies the chain forward from
        it; its line numbers count from it, and it has no header.
        """
        self.path = journal_path(path)
        self.start = start
        self.result = ScanResult(path=self.path)

    def __iter__(self) -> Iterator[Record]:
        path = self.path
        res = self.result
        try:
            res.file_size = path.stat().st_size
        except FileNotFoundError:
            raise UnusableJournal("no such file", path=path) from None
        except OSError as e:
            raise UnusableJournal(f"cannot read: {e.strerror}", path=path) from None
        lines = iter_lines(path, self.start)
        dialect = ""
        for offset, line_no, line, nl in lines:
            if not line.strip():
                continue
            rec, why = _parse(line)
            if rec is None or not nl:
                if line[:1] == b"[" and line_no == 1:
                    why = "a JSON array, not JSON lines (one object per line)"
                why = why or "partial last line (no newline)"
                raise UnusableJournal(f"not a journal: {why}", path=path, line=line_no)
            dialect = _detect_dialect(rec, path, line_no)
            res.dialect = dialect
            first = (offset, line_no, line, rec)
            break
        else:
            raise UnusableJournal("empty journal (no records)", path=path)
        if dialect == "v1":
            yield from self._scan_v1(first, lines)
        else:
            yield from self._scan_seed(first, lines)

    # -- v1: hash chain -------------------------------------------------------------------------
    def _scan_v1(
        self, first: tuple[int, int, bytes, dict[str, Any]], lines: Iterator[tuple[int, int, bytes, bool]]
    ) -> Iterator[Record]:
        res = self.result
        last_h, expect = ZERO_HASH, 0
        if self.start:
            last_h, expect = first[3].get("prev"), first[3].get("lsn")
        region: list[tuple[Damage, str | None, str | None]] = []
        region_hashes: set[str] = set()
        pending: list[Record] = []
        after_gap = False

        def check(
            offset: int, line_no: int, line: bytes, nl: bool, rec: dict[str, Any] | None
        ) -> tuple[Record | None, Damage | None, str | None, str | None]:
            stored, computed = line_hash(line)
            if not nl:
                return None, Damage(line_no, offset, "partial last line (no newline)", None), stored, computed
            if rec is None:
                rec, why = _parse(line)
                if rec is None:
                    return None, Damage(line_no, offset, why, None), stored, computed
            lsn = rec.get("lsn")
            lsn = lsn if isinstance(lsn, int) else None
            if rec.get("v") != FORMAT_VERSION:
                if isinstance(rec.get("v"), int) and rec["v"] > FORMAT_VERSION:
                    raise UnusableJournal(
                        f"record has format version {rec['v']}; this walkback reads version {FORMAT_VERSION}",
                        path=self.path,
                        line=line_no,
                    )
                return None, Damage(line_no, offset, f"bad version field {rec.get('v')!r}", lsn), stored, computed
            if stored is None or stored != computed or rec.get("h") != stored:
                return None, Damage(line_no, offset, "hash mismatch (record altered)", lsn), stored, computed
            if lsn is None:
                return None, Damage(line_no, offset, "lsn missing or not an integer", lsn), stored, computed
            return Record(lsn, offset, line_no, len(line) + (1 if nl else 0), rec), None, stored, computed

        def candidates() -> Iterator[tuple[int, int, bytes, bool, dict[str, Any] | None]]:
            o, n, ln, r = first
            yield o, n, ln, True, r
            for o, n, ln, nl in lines:
                if ln.strip():
                    yield o, n, ln, nl, None

        for offset, line_no, line, nl, parsed in candidates():
            rec, dmg, stored, computed = check(offset, line_no, line, nl, parsed)
            if rec is not None and rec.data.get("prev") == last_h and rec.lsn == expect:
                # continues the trusted chain
                if region:
                    # the chain resumed after bad lines: those were corruption, not a torn tail
                    res.corrupt.extend(d for d, _, _ in region)
                    region.clear()
                    region_hashes.clear()
                    for p in pending:
                        yield p
                    pending.clear()
                    after_gap = True
                rec.after_gap = after_gap
                last_h = rec.data["h"]
                expect = rec.lsn + 1
                self._take(rec)
                yield rec
                continue
            if rec is not None and region and (rec.data.get("prev") in region_hashes):
                # a readable record chaining into the bad region: resync the chain here
                res.corrupt.extend(d for d, _, _ in region)
                region.clear()
                region_hashes.clear()
                for p in pending:
                    yield p
                pending.clear()
                after_gap = True
                rec.after_gap = True
                last_h = rec.data["h"]
                expect = rec.lsn + 1
                self._take(rec)
                yield rec
                continue
            # a bad line: start or extend the undecided region
            if dmg is None:
                assert rec is not None
                if rec.data.get("prev") != last_h:
                    reason = f"does not chain: prev is not the hash of lsn {expect - 1}"
                else:
                    reason = f"lsn {rec.lsn} where {expect} was expected"
                dmg = Damage(line_no, offset, reason, rec.lsn)
                pending.append(Record(rec.lsn, rec.offset, rec.line, rec.length, rec.data, True))
            if dmg.lsn is None:
                dmg.lsn = expect
            region.append((dmg, stored, computed))
            for hh in (stored, computed):
                if hh:
                    region_hashes.add(hh)
        if region:
            res.torn.extend(d for d, _, _ in region)

    def _take(self, rec: Record) -> None:
        res = self.result
        if res.records == 0 and rec.data.get("type") == "run.start":
            res.header = rec.data
        res.records += 1
        res.last_lsn = rec.lsn
        res.last_h = rec.data.get("h")
        res.valid_end = rec.offset + rec.length

    # -- seed dialects: no hashes, sequence checks only ------------------------------------------
    def _scan_seed(
        self, first: tuple[int, int, bytes, dict[str, Any]], lines: Iterator[tuple[int, int, bytes, bool]]
    ) -> Iterator[Record]:
        res = self.result
        key = "seq" if res.dialect == "seq" else "lsn"
        o, n, ln, r = first
        res.header = None if self.start else r
        bad: list[Damage] = []
        last_intent = -1
        closed: set[int] = set()
        prev_lsn: int | None = None
        todo: list[tuple[int, int, bytes, bool, dict[str, Any] | None]] = [(o, n, ln, True, r)]

        def stream() -> Iterator[tuple[int, int, bytes, bool, dict[str, Any] | None]]:
            yield from todo
            for o2, n2, l2, nl2 in lines:
                if l2.strip():
                    yield o2, n2, l2, nl2, None

        for offset, line_no, line, nl, parsed in stream():
            rec = parsed
            why = ""
            if rec is None:
                rec, why = _parse(line)
            if rec is not None and not nl:
                why = "partial last line (no newline)"
            num = rec.get(key) if rec is not None else None
            if rec is not None and not why and not isinstance(num, int):
                why = f"`{key}` missing or not an integer"
            if not why and rec is not None and isinstance(num, int):
                why = self._seed_order(key, rec, num, prev_lsn, last_intent, closed)
            if why or rec is None or not isinstance(num, int):
                bad.append(Damage(line_no, offset, why, num if isinstance(num, int) else None))
                continue
            if bad:
                # readable records after bad lines: the bad lines were corruption
                res.corrupt.extend(bad)
                bad = []
            if key == "lsn":
                prev_lsn = num
            elif is_seq_result(rec):
                closed.add(num)
            else:
                last_intent = num
            record = Record(num, offset, line_no, len(line) + 1, rec, bool(res.corrupt))
            res.records += 1
            res.last_lsn = max(res.last_lsn, num)
            res.valid_end = offset + record.length
            yield record
        res.torn.extend(bad)

    @staticmethod
    def _seed_order(
        key: str, rec: dict[str, Any], num: int, prev_lsn: int | None, last_intent: int, closed: set[int]
    ) -> str:
        if key == "lsn":
            if prev_lsn is not None and num != prev_lsn + 1:
                return "duplicate lsn" if num <= prev_lsn else f"lsn {num} where {prev_lsn + 1} was expected"
            return ""
        if is_seq_result(rec):
            if num in closed:
                return f"seq {num} completed twice"
            if num > last_intent:
                return f"result for seq {num} before its intent"
            return ""
        if last_intent >= 0 and num != last_intent + 1:
            return "duplicate seq" if num <= last_intent else f"seq {num} where {last_intent + 1} was expected"
        return ""


def scan(path: str | Path) -> ScanResult:
    """Scan a whole journal for integrity, discarding the records."""
    s = Scanner(path)
    for _ in s:
        pass
    return s.result


def read_records(path: str | Path) -> tuple[list[Record], ScanResult]:
    """Read every readable record into memory (for small journals: recovery, tests)."""
    s = Scanner(path)
    records = list(s)
    return records, s.result


def read_at(path: str | Path, offset: int, length: int) -> dict[str, Any]:
    """Parse the one record at ``offset`` (the lazy raw access the timeline uses)."""
    with open(path, "rb") as f:
        f.seek(offset)
        line = f.read(length)
    rec = orjson.loads(line)
    assert isinstance(rec, dict)
    return rec
