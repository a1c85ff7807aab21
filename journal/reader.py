"""The journal reader: stream records with their offsets, verify the chain, classify damage.

``Scanner(path)`` is an iterator of :class:`Record` (the readable records, in file order) whose
``result`` (a :class:`ScanResult`) is complete once iteration ends. Nothing is repaired here; see
:mod:`journal.repair`. The rules are in :mod:`journal.chain` (docs/journal-format.md §5).

The dialect is decided by the first recognisable line among the first :data:`LOOKAHEAD` non-blank
ones, so a damaged header is reported as corruption at line 1 rather than as "not a journal".
Input with no recognisable line at all is :class:`UnusableJournal` (empty, binary, a JSON array,
another tool's log), named by the first line's problem.
"""

from __future__ import annotations

import itertools
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from . import hashcheck
from .chain import Blocks, SeedChain, V1Chain, recognise
from .errors import JournalError, UnusableJournal
from .scanresult import Damage, Record, ScanResult, is_seq_result, parse_line
from .writer import journal_path

__all__ = ["Damage", "Record", "ScanResult", "Scanner", "is_seq_result", "read_at", "read_records", "scan"]

BLOCK = 1 << 23
BOM = b"\xef\xbb\xbf"
LOOKAHEAD = 64
"""Non-blank lines read to find the first recognisable record before declaring the input unusable."""


def _blocks(f: BinaryIO) -> tuple[int, Iterator[tuple[list[bytes], bool]]]:
    """The offset of the first line (3 after a BOM) and the file's lines, a block at a time."""
    first = f.read(BLOCK)
    start = 3 if first.startswith(BOM) else 0

    def gen(block: bytes) -> Iterator[tuple[list[bytes], bool]]:
        carry: list[bytes] = []
        while block:
            parts = block.split(b"\n")
            if len(parts) == 1:
                carry.append(block)  # a long line: join once, at its end
            else:
                if carry:
                    carry.append(parts[0])
                    parts[0] = b"".join(carry)
                    carry = []
                tail = parts.pop()
                if tail:
                    carry.append(tail)
                yield parts, True
            block = f.read(BLOCK)
        if carry:
            yield [b"".join(carry)], False

    return start, gen(first[start:])


def _json_array(line: bytes) -> bool:
    """True when a first line is a JSON array, or the opening of a pretty-printed one.

    A line that merely starts with ``[`` but does not parse may be a damaged header (``{`` and
    ``[`` are one bit apart): then the reader looks further before giving up.
    """
    text = line.strip()
    if text == b"[":
        return True
    if text[:1] != b"[":
        return False
    try:
        return isinstance(orjson.loads(text), list)
    except orjson.JSONDecodeError:
        return False


class Scanner:
    """Iterate a journal's readable records; ``result`` describes integrity when done."""

    def __init__(self, path: str | Path, *, emit: bool = True) -> None:
        self.path = journal_path(path)
        self.result = ScanResult(path=self.path)
        self.emit = emit
        """False: check only; intact records are not built (what ``scan`` needs)."""

    def __iter__(self) -> Iterator[Record]:
        path = self.path
        try:
            f = open(path, "rb")  # noqa: SIM115 - closed by the with below, across yields
        except FileNotFoundError:
            raise UnusableJournal("no such file", path=path) from None
        except OSError as e:
            raise UnusableJournal(f"cannot read: {e.strerror}", path=path) from None
        with f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise UnusableJournal("not a regular file", path=path)
            self.result.file_size = st.st_size
            start, blocks = _blocks(f)
            chain, held, offset, line_no, rest = self._detect(start, blocks)
            for o, n, raw, nl in held:
                yield from chain.feed(o, n, raw, nl)
            if isinstance(chain, SeedChain):
                yield from chain.run(rest, offset, line_no)
                return
            worker = hashcheck.start(path, offset, st.st_size)
            try:
                yield from chain.run(rest, offset, line_no, emit=self.emit, worker=worker)
            finally:
                if worker is not None:
                    worker.close()

    def _detect(
        self, offset: int, blocks: Iterator[tuple[list[bytes], bool]]
    ) -> tuple[V1Chain | SeedChain, list[tuple[int, int, bytes, bool]], int, int, Blocks]:
        """Read up to the first recognisable line; return the checker, the lines read and the rest."""
        path = self.path
        held: list[tuple[int, int, bytes, bool]] = []
        first_why: tuple[int, str] | None = None
        line_no = 0
        for lines, nl in blocks:
            for k, raw in enumerate(lines):
                line_no += 1
                size = len(raw) + 1 if nl else len(raw)
                line = raw[:-1] if nl and raw[-1:] == b"\r" else raw
                if not line.strip():
                    offset += size
                    continue
                if first_why is None and _json_array(line):
                    raise UnusableJournal(
                        "not a walkback journal: a JSON array, not JSON lines (one object per line)",
                        path=path,
                        line=line_no,
                    )
                held.append((offset, line_no, raw, nl))
                offset += size
                dialect, why = self._recognise(line, nl, line_no)
                if dialect:
                    self.result.dialect = dialect
                    chain = V1Chain(self.result) if dialect == "v1" else SeedChain(self.result)
                    rest = itertools.chain([(lines[k + 1 :], nl)], blocks)
                    return chain, held, offset, line_no, rest
                if first_why is None:
                    first_why = (line_no, why)
                if len(held) >= LOOKAHEAD:
                    break
            else:
                continue
            break
        if first_why is None:
            raise UnusableJournal("empty journal (no records)", path=path, line=1)
        raise UnusableJournal(f"not a walkback journal: {first_why[1]}", path=path, line=first_why[0])

    def _recognise(self, line: bytes, nl: bool, line_no: int) -> tuple[str | None, str]:
        rec, why = parse_line(line)
        if rec is None:
            return None, why
        dialect = recognise(self.path, rec, line, line_no)
        if dialect is None:
            return None, (
                "a JSON object without `v`, `lsn`+`type` or `seq`"
                " (other agents' logs: use `walkback import` or `walkback show`)"
            )
        if not nl:
            return None, "the only record has no newline at its end (partial write)"
        return dialect, ""


def scan(path: str | Path) -> ScanResult:
    """Scan a whole journal for integrity, discarding the records."""
    s = Scanner(path, emit=False)
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
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            line = f.read(length)
    except OSError as e:
        raise JournalError(f"cannot read the record at byte {offset}: {e.strerror}", path=path) from None
    rec, why = parse_line(line)
    if rec is None:
        raise JournalError(f"the record at byte {offset} changed since it was read: {why}", path=path)
    return rec
