"""The integrity rules of docs/journal-format.md §5 as two line-by-line checkers.

:class:`V1Chain` checks the hash chain of format v1; :class:`SeedChain` checks the sequence rules
of the two seed dialects. Both take lines in file order and keep:

* the trusted prefix, which ends at the first bad line F;
* an undecided *region* of bad lines after F. When a later readable record continues the
  prefix, or links to a line of the region (v1: its ``prev`` is a hash stored in or computed from
  a bad line; seed: its number follows a bad line's), the region was **corruption**: it is
  reported, and the records after it are yielded, flagged ``after_gap``. A region still open at
  the end of the file is a **torn tail** (repairable).

``V1Chain.run`` has a fast path for the common case (an intact line right after the prefix), which
is what makes a million-record read cost little more than parsing it; every other line goes
through ``feed``, which applies all the rules.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from itertools import repeat
from pathlib import Path
from typing import Any

import orjson

from .errors import UnusableJournal
from .hashcheck import HashWorker
from .record import FORMAT_VERSION, H_MARK, ZERO_HASH, line_hash
from .scanresult import (
    Damage,
    Fields,
    Record,
    ScanResult,
    as_lsn,
    brief,
    closes_by_ref,
    is_seq_result,
    parse_line,
    partial_reason,
)

Hashes = tuple[str | None, str | None]
"""A line's stored and computed hashes (:func:`journal.record.line_hash`)."""
Blocks = Iterable[tuple[list[bytes], bool]]
"""Lists of lines without their ``\\n``; the flag is False only for a final line with no newline."""

CONTINUED = "journal.continued"
"""The first record of a live journal after a rotation (:mod:`journal.segments`)."""
SEGMENTS_DIR = "segments"
"""Where a run's archived segments live, in its run directory."""
HEADER_TYPES = frozenset({"run.start", CONTINUED})

SUFFIX_LEN = len(H_MARK) + 64 + 2
"""Bytes from the start of ``,"h":"`` to the end of a v1 line: the mark, 64 hex digits, ``"}``."""


def _strip_cr(raw: bytes) -> bytes:
    return raw[:-1] if raw[-1:] == b"\r" else raw


class V1Chain:
    """Hash-chain checker for format v1."""

    def __init__(self, result: ScanResult) -> None:
        self.res = result
        self.last_h = ZERO_HASH
        self.expect = 0
        self.region: list[Damage] = []
        self.region_hashes: set[str] = set()
        """Every hash stored in or computed from a line of the open region (a later record may link
        to it)."""
        self.bad_hashes: set[str] = set()
        """The same for the regions already found to be corruption."""
        self.pending: list[Record] = []
        """Readable records inside the open region, yielded if it turns out to be corruption."""
        self.after_gap = False

    def resumed(self, result: ScanResult) -> V1Chain:
        """A checker for ``result`` in this one's state at its verified end (the open region, which
        a resumed scan reads again, left out)."""
        chain = V1Chain(result)
        chain.last_h, chain.expect, chain.after_gap = self.last_h, self.expect, self.after_gap
        chain.bad_hashes = set(self.bad_hashes)
        return chain

    # -- the fast path --------------------------------------------------------------------------
    def run(
        self,
        blocks: Blocks,
        offset: int,
        line_no: int,
        *,
        emit: bool = True,
        worker: HashWorker | None = None,
    ) -> Iterator[Fields]:
        """Check every line of ``blocks``, starting at ``offset`` / after line ``line_no``.

        With ``emit=False`` records on the fast path are checked but not built (``scan``).
        ``worker`` vouches for line hashes computed on another core (:mod:`journal.hashcheck`).
        """
        loads = orjson.loads
        decode_error = orjson.JSONDecodeError
        sha = hashlib.sha256
        mark = H_MARK
        suffix = SUFFIX_LEN + 1
        res = self.res
        last_h, expect, after_gap = self.last_h, self.expect, self.after_gap
        records, end, vline = res.records, res.valid_end, res.valid_line
        clean = not self.region
        for lines, nl in blocks:
            clean = clean and nl
            tags = worker.tags(len(lines)) if worker is not None and nl else repeat(0)
            for line, tag in zip(lines, tags, strict=False):
                line_no += 1
                size = len(line) + 1
                if clean:
                    i = size - suffix
                    try:
                        rec = loads(line)
                        h = rec["h"]
                        if (
                            rec["prev"] == last_h
                            and rec["lsn"] == expect
                            and rec["v"] == FORMAT_VERSION
                            and (
                                (tag and tag == 0x8000 | (size & 0x7FFF))
                                or (i > 0 and line.startswith(mark, i) and h == sha(line[:i]).hexdigest())
                            )
                        ):
                            if not records and rec.get("type") == "run.start" and expect == 0:
                                res.header = rec
                            records += 1
                            last_h = h
                            expect += 1
                            end, vline = offset + size, line_no
                            if emit:
                                yield (expect - 1, offset, line_no, size, rec, after_gap, closes_by_ref(rec))
                            offset += size
                            continue
                    except (decode_error, KeyError, TypeError):
                        pass
                self.last_h, self.expect = last_h, expect
                res.records, res.valid_end, res.valid_line = records, end, vline
                for released in self.feed(offset, line_no, line, nl):
                    yield released.fields()
                last_h, expect, after_gap = self.last_h, self.expect, self.after_gap
                records, end, vline = res.records, res.valid_end, res.valid_line
                clean = nl and not self.region
                offset += size if nl else len(line)
        self.last_h, self.expect = last_h, expect
        res.records, res.valid_end, res.valid_line = records, end, vline
        self.finish()

    def finish(self) -> None:
        """Record the final state: an open region is a torn tail."""
        res = self.res
        res.last_h = self.last_h if res.records else None
        res.last_lsn = self.expect - 1 if res.records else -1
        res.torn.extend(self.region)
        self.region = []

    # -- every rule -----------------------------------------------------------------------------
    def feed(
        self, offset: int, line_no: int, raw: bytes, nl: bool, hashes: Hashes | None = None
    ) -> list[Record]:
        """Check one line and return the records it releases (itself and/or held ones).

        ``hashes``: the line's ``(stored, computed)`` hashes when the caller already has them."""
        line = _strip_cr(raw) if nl else raw
        if not line.strip():
            return []
        size = len(raw) + 1 if nl else len(raw)
        rec, dmg, hashes = self._check(offset, line_no, line, size, nl, hashes or line_hash(line))
        out: list[Record] = []
        if rec is not None and self.res.records == 0 and not self.region and self.expect == 0:
            self._start(rec)
        if rec is not None:
            prev = rec.data.get("prev")
            if prev == self.last_h and rec.lsn == self.expect:
                if self.region:
                    self._resolve(out)
                rec.after_gap = self.after_gap
                self._take(rec, out)
                return out
            if prev in self.region_hashes or prev in self.bad_hashes:
                self._resolve(out)
                rec.after_gap = True
                self._take(rec, out)
                return out
            if prev != self.last_h:
                reason = "does not chain: prev is not the hash of lsn " + str(self.expect - 1)
            else:
                reason = f"lsn {rec.lsn} where {self.expect} was expected"
            dmg = Damage(line_no, offset, reason, rec.lsn)
            rec.after_gap = True
            self.pending.append(rec)
        assert dmg is not None
        if dmg.lsn is None:
            dmg.lsn = self.expect
        self.region.append(dmg)
        self.region_hashes.update(h for h in hashes if h)
        return out

    def _start(self, rec: Record) -> None:
        """A file that starts with an intact ``journal.continued`` record (a rotated run's live file,
        docs/journal-format.md §1) chains from it: its own hash is trusted as the chain's start.
        Whether it links to the archived segment before it is ``walkback check``'s business on the
        run directory (:mod:`journal.segments`)."""
        if rec.data.get("type") == CONTINUED and isinstance(rec.data.get("prev"), str):
            self.last_h, self.expect = rec.data["prev"], rec.lsn
            self.res.first_lsn = rec.lsn
            why = missing_predecessor(self.res.path, rec.data)
            if why:
                self.res.corrupt.append(Damage(rec.line, rec.offset, why, rec.lsn))

    def _check(
        self, offset: int, line_no: int, line: bytes, size: int, nl: bool, hashes: Hashes
    ) -> tuple[Record | None, Damage | None, Hashes]:
        stored, computed = hashes
        if not nl:
            return None, Damage(line_no, offset, partial_reason(line)), hashes
        rec, why = parse_line(line)
        if rec is None:
            return None, Damage(line_no, offset, why), hashes
        lsn = as_lsn(rec.get("lsn"))
        if stored is None:
            return None, Damage(line_no, offset, "no hash at the end of the line (`h` missing)", lsn), hashes
        if stored != computed or rec.get("h") != stored:
            return None, Damage(line_no, offset, "hash mismatch (record altered)", lsn), hashes
        v = rec.get("v")
        if type(v) is not int:
            return None, Damage(line_no, offset, f"bad version field {brief(v)}", lsn), hashes
        if v != FORMAT_VERSION:
            raise UnusableJournal(
                f"format version {v} is not supported (this walkback reads version {FORMAT_VERSION}); "
                "upgrade walkback to read this journal",
                path=self.res.path,
                line=line_no,
            )
        if lsn is None:
            return None, Damage(line_no, offset, "lsn missing or not a non-negative integer"), hashes
        return Record(lsn, offset, line_no, size, rec, closes=closes_by_ref(rec)), None, hashes

    def _resolve(self, out: list[Record]) -> None:
        """The open region was corruption: report it and release the records held in it."""
        self.res.corrupt.extend(self.region)
        self.region = []
        self.bad_hashes |= self.region_hashes
        self.region_hashes = set()
        out.extend(self.pending)
        self.pending = []
        self.after_gap = True

    def _take(self, rec: Record, out: list[Record]) -> None:
        res = self.res
        if res.records == 0 and rec.lsn == res.first_lsn and rec.data.get("type") in HEADER_TYPES:
            res.header = rec.data
        res.records += 1
        self.last_h = rec.data["h"]
        self.expect = rec.lsn + 1
        res.valid_end, res.valid_line = rec.offset + rec.length, rec.line
        out.append(rec)


class SeedChain:
    """Sequence checker for the seed dialects (no hashes), docs/journal-format.md §6.

    Records that open something (plans, intents, everything but a record that closes one) take new
    numbers, +1 each. lsn dialect: a ``commit`` or ``fail`` closes the open intent its ``ref`` or
    ``intent`` names, or, without either, the one whose lsn it carries (the seed's
    ``{"lsn":22,"type":"intent"}`` then ``{"lsn":22,"type":"commit"}``); with a reference it may
    instead take a new lsn. A ``checkpoint`` may carry the lsn it covers (the last one). seq
    dialect: a result ``{seq, result, status}`` carries the seq of the intent it completes. Closing
    what was never opened, or closing twice, is damage. What each record closes is
    :attr:`Record.closes`: this class is the one place that rule lives for the seed dialects.
    """

    def __init__(self, result: ScanResult) -> None:
        self.res = result
        self.key = "seq" if result.dialect == "seq" else "lsn"
        self.first: int | None = None
        self.last: int | None = None
        """The last new number on the trusted sequence."""
        self.intents: set[int] = set()
        """lsn dialect: the lsns of the intents on the trusted sequence (what a commit may close)."""
        self.closed: set[int] = set()
        self.region: list[Damage] = []
        self.region_nums: set[int] = set()
        """Numbers of readable records inside the open region (a later record may follow them)."""
        self.bad_nums: set[int] = set()
        """The same for the regions already found to be corruption."""
        self.pending: list[Record] = []
        self.after_gap = False

    def resumed(self, result: ScanResult) -> SeedChain:
        """A checker for ``result`` in this one's state at its verified end (open region left out)."""
        chain = SeedChain(result)
        chain.first, chain.last, chain.after_gap = self.first, self.last, self.after_gap
        chain.intents, chain.closed, chain.bad_nums = set(self.intents), set(self.closed), set(self.bad_nums)
        return chain

    def run(self, blocks: Blocks, offset: int, line_no: int) -> Iterator[Fields]:
        for lines, nl in blocks:
            for line in lines:
                line_no += 1
                for released in self.feed(offset, line_no, line, nl):
                    yield released.fields()
                offset += len(line) + 1 if nl else len(line)
        self.finish()

    def finish(self) -> None:
        self.res.torn.extend(self.region)
        self.region = []

    def feed(
        self, offset: int, line_no: int, raw: bytes, nl: bool, hashes: Hashes | None = None
    ) -> list[Record]:
        """Check one line and return the records it releases (``hashes`` are not used here)."""
        line = _strip_cr(raw) if nl else raw
        if not line.strip():
            return []
        size = len(raw) + 1 if nl else len(raw)
        key = self.key
        rec: dict[str, Any] | None = None
        num: int | None = None
        if not nl:
            why = partial_reason(line)
        else:
            rec, why = parse_line(line)
            if rec is not None and ("v" in rec or "h" in rec or "prev" in rec):
                rec, why = None, "a v1 record (`v`, `prev`, `h`) in a seed-dialect journal"
            elif rec is not None:
                num = as_lsn(rec.get(key))
                if num is None:
                    why = f"`{key}` missing or not a non-negative integer"
        out: list[Record] = []
        if rec is None or num is None:
            self.region.append(Damage(line_no, offset, why, self._expected()))
            return out
        why, closes, new, ends = self._order(num, rec)
        record = Record(num, offset, line_no, size, rec, self.after_gap, closes)
        linked = (ends and closes is not None and self._is_bad(closes)) or (new and self._is_bad(num - 1))
        if not why or linked:
            if self.region:
                self.res.corrupt.extend(self.region)
                self.region = []
                self.bad_nums |= self.region_nums
                self.region_nums = set()
                out.extend(self.pending)
                self.pending = []
                self.after_gap = True
            record.after_gap = self.after_gap
            self._take(record, new, ends)
            out.append(record)
            return out
        record.after_gap = True
        self.pending.append(record)
        self.region_nums.add(num)
        self.region.append(Damage(line_no, offset, why, num))
        return out

    def _is_bad(self, num: int) -> bool:
        """``num`` is that of a readable record in a bad region (a later record may follow it)."""
        return num in self.region_nums or num in self.bad_nums

    def _expected(self) -> int | None:
        return None if self.last is None else self.last + 1

    def _order(self, num: int, rec: dict[str, Any]) -> tuple[str, int | None, bool, bool]:
        """``(why not, closes, new, ends)`` for ``rec`` numbered ``num``: why it cannot come next on
        the trusted sequence ('' if it can), the number it closes, whether it takes a new number,
        and whether what it closes is an intent (a commit, fail or result ends it)."""
        if self.key == "seq":
            if is_seq_result(rec):
                unopened = f"result for seq {num} before its intent"
                return self._close(num, unopened, twice="completed"), num, False, True
            return self._follow(num), closes_by_ref(rec), True, False
        typ = rec.get("type")
        if typ in ("commit", "fail"):
            has_ref = "ref" in rec or "intent" in rec
            target = as_lsn(rec.get("ref", rec.get("intent"))) if has_ref else num
            if target is None:
                return f"{typ} names no intent (`ref`/`intent` is not an lsn)", None, True, False
            new = has_ref and num != target
            why = self._close(target, f"{typ} for lsn {target}, which no intent opened")
            return why or (self._follow(num) if new else ""), target, new, True
        if typ == "checkpoint" and self.last is not None and num == self.last:
            return "", None, False, False  # it carries the lsn it covers
        return self._follow(num), closes_by_ref(rec), True, False

    def _close(self, target: int, unopened: str, *, twice: str = "closed") -> str:
        """Why the intent numbered ``target`` cannot be closed now ('' if it can)."""
        if target in self.closed:
            return f"{self.key} {target} {twice} twice"
        if self.key == "seq":
            ok = self.first is not None and self.last is not None and self.first <= target <= self.last
        else:
            ok = target in self.intents
        return "" if ok else unopened

    def _follow(self, num: int) -> str:
        """Why ``num`` cannot be the next new number ('' if it can)."""
        word = self.key
        if self.last is None or num == self.last + 1:
            return ""
        if num <= self.last:
            return f"duplicate {word} {num} (after {word} {self.last})"
        missing = f"{self.last + 1}" if num == self.last + 2 else f"{self.last + 1}..{num - 1}"
        return f"{word} {num} where {self.last + 1} was expected ({word} {missing} missing)"

    def _take(self, record: Record, new: bool, ends: bool) -> None:
        res = self.res
        num = record.lsn
        if res.records == 0:
            res.header = record.data
        res.records += 1
        res.last_lsn = max(res.last_lsn, num)
        res.valid_end, res.valid_line = record.offset + record.length, record.line
        if ends and record.closes is not None:
            self.closed.add(record.closes)
        if new:
            if self.first is None:
                self.first = num
            self.last = num if self.last is None else max(self.last, num)
            if self.key == "lsn" and record.data.get("type") == "intent":
                self.intents.add(num)


def missing_predecessor(path: Path, rec: dict[str, Any]) -> str:
    """Why the archived segment a ``journal.continued`` record of file ``path`` follows is not
    there ('' when it is): without it the run's history before that record is lost, which is damage
    (docs/journal-format.md §9)."""
    seg = rec.get("segment")
    name = seg.get("path") if isinstance(seg, dict) else None
    prefix = SEGMENTS_DIR + "/"
    if not isinstance(name, str) or not name.startswith(prefix) or "/" in name[len(prefix) :] or ".." in name:
        return "journal.continued does not name the segment it follows (`segment.path`)"
    run_dir = path.parent.parent if path.parent.name == SEGMENTS_DIR else path.parent
    if (run_dir / name).is_file():
        return ""
    assert isinstance(seg, dict)
    lost = f"lsn {seg.get('first_lsn')}..{seg.get('last_lsn')}"
    return f"journal.continued follows {name}, which is missing ({lost} are lost)"


def recognise(path: Path, rec: dict[str, Any], line: bytes, line_no: int) -> str | None:
    """Dialect of a first readable line: ``v1``, ``seq``, ``lsn`` or None if not recognisable.

    A line that looks like v1 (has ``v``, ``h`` or ``prev``) but another version is refused when
    its own hash is intact (a newer writer made it); with a broken hash it is just damage.
    """
    if "v" in rec or "h" in rec or "prev" in rec:
        v = rec.get("v")
        if type(v) is int and v == FORMAT_VERSION:
            return "v1"
        stored, computed = line_hash(line)
        if v is not None and stored is not None and stored == computed:
            raise UnusableJournal(
                f"format version {brief(v)} is not supported (this walkback reads version "
                f"{FORMAT_VERSION}); upgrade walkback to read this journal",
                path=path,
                line=line_no,
            )
        return None
    if as_lsn(rec.get("seq")) is not None:
        return "seq"
    if as_lsn(rec.get("lsn")) is not None and isinstance(rec.get("type"), str):
        return "lsn"
    return None
