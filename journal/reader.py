"""The journal reader: stream records with their offsets, verify the chain, classify damage.

``Scanner(path)`` is an iterator of :class:`Record` (the readable records, in file order) whose
``result`` (a :class:`ScanResult`) is complete once iteration ends. Nothing is repaired here; see
:mod:`journal.repair`. The rules are in :mod:`journal.chain` (docs/journal-format.md §5).

The dialect is decided from the first :data:`LOOKAHEAD` non-blank lines, never from one line: v1
as soon as one of them is a v1 record whose own hash verifies, else the dialect most of the
recognisable ones have (the first of them on a tie). So one stray line in front of a journal is
damage at line 1, and a damaged header is corruption at line 1 rather than "not a journal". Input
with no recognisable line at all is :class:`UnusableJournal` (empty, binary, a JSON array, another
tool's log), named by the first line's problem.

A finished scan's :attr:`Scanner.state` is where its verified part ends, with the checker's state
there; ``Scanner(path, resume=state)`` reads only what was appended since (a live follower pays for
the new bytes, not for the journal).
"""

from __future__ import annotations

import itertools
import os
import stat
from collections import Counter
from collections.abc import Generator, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from . import hashcheck
from .chain import Blocks, Hashes, SeedChain, V1Chain, recognise
from .errors import JournalChanged, JournalError, UnusableJournal
from .paths import journal_path
from .record import line_hash
from .scanresult import Damage, Fields, Record, ScanResult, is_seq_result, parse_line

__all__ = [
    "Damage",
    "Fields",
    "Record",
    "ScanResult",
    "ScanState",
    "Scanner",
    "is_seq_result",
    "open_journal",
    "read_at",
    "read_records",
    "scan",
]

BLOCK = 1 << 23
BOM = b"\xef\xbb\xbf"
LOOKAHEAD = 64
"""Non-blank lines read to decide the dialect (and, with none recognisable, that the input is unusable)."""
ANCHOR = 4096
"""Bytes before a saved scan's end that a resume checks are still the same."""
_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
}


def open_journal(path: Path) -> BinaryIO:
    """Open a file for reading without ever blocking on it: anything but a regular file is refused.

    ``stat`` first, so that a FIFO or a device is not even opened; then the file is opened with
    ``O_NONBLOCK`` (a FIFO swapped in meanwhile does not hang the open) and checked again.

    Raises:
        UnusableJournal: no such file, not readable, or not a regular file.
    """
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISREG(mode):
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                os.close(fd)
    except FileNotFoundError:
        raise UnusableJournal("no such file", path=path) from None
    except OSError as e:
        raise UnusableJournal(f"cannot read: {e.strerror}", path=path) from None
    if not stat.S_ISREG(mode):
        kind = _KINDS.get(stat.S_IFMT(mode), "a special file")
        raise UnusableJournal(f"not a regular file ({kind}); journals are regular files", path=path)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def _lines(f: BinaryIO, block: bytes) -> Iterator[tuple[list[bytes], bool]]:
    """The lines of ``block`` and of the rest of ``f``, a block at a time (the checkers' input)."""
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


@dataclass(frozen=True)
class ScanState:
    """Where a scan's verified part ends and the checker's state there: what a resume starts from.

    Get one from a finished :class:`Scanner` (``scanner.state``); pass it as ``Scanner(path,
    resume=state)`` to read only the records after ``offset``. A state can be resumed from any
    number of times (each resume works on its own copy). A torn tail the scan ended on is not part
    of it: a resume reads those bytes again (a live writer's half-written line, complete by then).
    """

    path: Path
    offset: int
    """Byte offset where the last record on the chain ends (``ScanResult.valid_end``)."""
    line: int
    """Line number of that record."""
    result: ScanResult
    """The scan's result as of ``offset`` (no torn tail)."""
    chain: V1Chain | SeedChain
    """The checker's state at ``offset``, bound to ``result``."""
    anchor: bytes = b""
    """The file's bytes just before ``offset``, which a resume checks are unchanged."""
    file_id: tuple[int, int] | None = None
    """``(st_dev, st_ino)`` of the file scanned (a rotation replaces the live file)."""

    @property
    def dialect(self) -> str:
        return self.result.dialect

    @classmethod
    def before(cls, path: Path, offset: int, first: dict[str, Any]) -> ScanState:
        """The state just before a trusted record ``first`` at ``offset`` (recovery reads from a
        checkpoint this way): v1 chains on from its ``prev`` and ``lsn``; a seed dialect starts its
        sequence at it. Line numbers then count from ``offset``."""
        res = ScanResult(path=path, dialect="v1" if "v" in first else "lsn")
        chain: V1Chain | SeedChain
        if res.dialect == "v1":
            chain = V1Chain(res)
            chain.last_h, chain.expect = first["prev"], first["lsn"]
        else:
            chain = SeedChain(res)
        return cls(path, offset, 0, res, chain)

    def _resume(self) -> tuple[ScanResult, V1Chain | SeedChain]:
        res = replace(self.result, torn=[], corrupt=list(self.result.corrupt))
        return res, self.chain.resumed(res)


class Scanner:
    """Iterate a journal's readable records; ``result`` describes integrity when done."""

    def __init__(
        self,
        path: str | Path,
        *,
        emit: bool = True,
        resume: ScanState | None = None,
    ) -> None:
        self.path = journal_path(path)
        self.emit = emit
        """False: check only; intact records are not built (what ``scan`` needs)."""
        self.resume = resume
        self._chain: V1Chain | SeedChain | None = None
        self._state: ScanState | None = None
        if resume is not None:
            self.result, self._chain = resume._resume()
        else:
            self.result = ScanResult(path=self.path)

    @property
    def state(self) -> ScanState:
        """Where this scan's verified part ends (available once iteration has finished).

        Raises:
            JournalError: the scan has not run to the end.
        """
        if self._state is None:
            raise JournalError("the scan has not finished; iterate it to the end first", path=self.path)
        return self._state

    def __iter__(self) -> Iterator[Record]:
        for fields in self.fields():
            yield Record(*fields)

    def fields(self) -> Generator[Fields, None, None]:
        """The records as plain tuples of their fields, for a hot loop (see :data:`Fields`)."""
        path = self.path
        with open_journal(path) as f:
            st = os.fstat(f.fileno())
            self.result.file_size = st.st_size
            if self.resume is not None:
                assert self._chain is not None
                chain = self._chain
                offset, line_no = self._check_resume(f, st), self.resume.line
                f.seek(offset)
                rest: Blocks = _lines(f, f.read(BLOCK))
            else:
                first = f.read(BLOCK)
                start = 3 if first.startswith(BOM) else 0
                chain, held, offset, line_no, rest = self._detect(start, _lines(f, first[start:]))
                for o, n, raw, nl, hashes in held:
                    for released in chain.feed(o, n, raw, nl, hashes):
                        yield released.fields()
            self._chain = chain
            if isinstance(chain, SeedChain):
                yield from chain.run(rest, offset, line_no)
            else:
                worker = hashcheck.start(path, offset, st.st_size)
                try:
                    yield from chain.run(rest, offset, line_no, emit=self.emit, worker=worker)
                finally:
                    if worker is not None:
                        worker.close()
            self._state = self._snapshot(f, st)

    def _check_resume(self, f: BinaryIO, st: os.stat_result) -> int:
        """The resume offset, once the file is known to still be the one the state describes."""
        state = self.resume
        assert state is not None
        if state.file_id is not None and (st.st_dev, st.st_ino) != state.file_id:
            raise JournalChanged(
                "the file was replaced since the saved scan (rotated or rewritten): read it from the start",
                path=self.path,
            )
        if st.st_size < state.offset:
            raise JournalChanged(
                f"the file is shorter ({st.st_size} bytes) than the saved scan ({state.offset}): read it "
                "from the start",
                path=self.path,
            )
        n = len(state.anchor)
        if n and os.pread(f.fileno(), n, state.offset - n) != state.anchor:
            raise JournalChanged(
                "the bytes before the saved offset changed: read it from the start", path=self.path
            )
        return state.offset

    def _snapshot(self, f: BinaryIO, st: os.stat_result) -> ScanState:
        res = self.result
        assert self._chain is not None
        end = res.valid_end
        n = min(end, ANCHOR)
        anchor = os.pread(f.fileno(), n, end - n) if n else b""
        snap = replace(res, torn=[], corrupt=list(res.corrupt))
        return ScanState(
            self.path, end, res.valid_line, snap, self._chain.resumed(snap), anchor, (st.st_dev, st.st_ino)
        )

    def _detect(
        self, offset: int, blocks: Iterator[tuple[list[bytes], bool]]
    ) -> tuple[V1Chain | SeedChain, list[tuple[int, int, bytes, bool, Hashes | None]], int, int, Blocks]:
        """Read lines until the dialect is decided; return the checker, the lines read (with the
        hashes computed for v1-looking ones) and the rest."""
        path = self.path
        held: list[tuple[int, int, bytes, bool, Hashes | None]] = []
        first_why: tuple[int, str] | None = None
        votes: Counter[str] = Counter()
        """Recognisable lines per dialect, in the order the dialects first appear."""
        decided: str | None = None
        line_no = 0
        tail: list[tuple[list[bytes], bool]] = []
        for lines, nl in blocks:
            for k, raw in enumerate(lines):
                line_no += 1
                size = len(raw) + 1 if nl else len(raw)
                line = raw[:-1] if nl and raw[-1:] == b"\r" else raw
                if not line.strip():
                    offset += size
                    continue
                if first_why is None and not votes and _json_array(line):
                    raise UnusableJournal(
                        "not a walkback journal: a JSON array, not JSON lines (one object per line)",
                        path=path,
                        line=line_no,
                    )
                offset += size
                dialect, why = self._recognise(line, nl, line_no)
                hashes = line_hash(line) if dialect == "v1" else None
                held.append((offset - size, line_no, raw, nl, hashes))
                if hashes is not None and hashes[0] is not None and hashes[0] == hashes[1]:
                    decided = "v1"
                elif dialect:
                    votes[dialect] += 1
                elif first_why is None:
                    first_why = (line_no, why)
                if decided or len(held) >= LOOKAHEAD:
                    tail = [(lines[k + 1 :], nl)]
                    break
            else:
                continue
            break
        if decided is None and votes:
            decided = max(votes, key=votes.__getitem__)  # the first of the most frequent
        if decided is None:
            if first_why is None:
                raise UnusableJournal("empty journal (no records)", path=path, line=1)
            raise UnusableJournal(f"not a walkback journal: {first_why[1]}", path=path, line=first_why[0])
        self.result.dialect = decided
        chain = V1Chain(self.result) if decided == "v1" else SeedChain(self.result)
        return chain, held, offset, line_no, itertools.chain(tail, blocks)

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
