"""Read what recovery needs: the header, and the records after the last checkpoint.

A checkpoint is a safe point (no intent, approval or spawn before it is open), so recovery reads
only the tail: it scans backwards from the end of the file to the last ``checkpoint`` record,
checks the links from it back to the previous durable (fsynced-type) record — the only records
whose order a crash can disturb — and verifies the chain forward from it with the reader's own
rules. The whole journal is scanned only when there is no usable checkpoint. Plain reads never
modify a journal.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from walkback.journal.chain import CONTINUED, missing_predecessor
from walkback.journal.errors import JournalDamaged
from walkback.journal.reader import Record, Scanner, ScanResult, ScanState, open_journal
from walkback.journal.record import SYNC_TYPES, line_hash

from ._cuts import Cut, recorded_cut, salvage, unrecorded_cuts
from ._dialect import Pending, kind_of, pending_approval, pending_intent

BACK_BLOCK = 1 << 16
_CHECKPOINT = re.compile(rb'"type"\s*:\s*"checkpoint"')


@dataclass
class Spawn:
    """An ``agent.spawn`` in the window: where the child's run directory is."""

    lsn: int
    child_agent: str
    child_dir: str
    child_run: str
    ended: bool = False


@dataclass
class Window:
    """The part of one journal recovery reads, folded into what is still open."""

    path: Path
    dialect: str
    header: dict[str, Any]
    scan: ScanResult
    start_lsn: int | None
    """lsn of the checkpoint the read started at; None when the whole journal was read."""
    checkpoint: dict[str, Any] | None = None
    """The last checkpoint record (its ``git`` tree is a source of pre images)."""
    base: object = None
    """The ``base`` of the first plan read (a seed journal's ``"git:<sha>"``: the commit the run
    started from, a source of pre images when no checkpoint has the file)."""
    pending: list[Pending] = field(default_factory=list)
    """Open intents, unanswered approval requests and intents lost in a torn tail, by lsn."""
    decisions: dict[tuple[int, int | None], tuple[str, str]] = field(default_factory=dict)
    """``(ref, lost_lsn)`` -> ``(finding, action)`` of the last recovery record about it."""
    spawns: list[Spawn] = field(default_factory=list)
    last_lsn: int = -1
    """Last lsn (seq) of the readable journal, torn tail excluded."""
    unrecorded: list[Cut] = field(default_factory=list)
    """Cuts of repairs killed before their ``journal.recovered`` record."""

    @property
    def next_lsn(self) -> int:
        return self.last_lsn + 1

    @property
    def committed_through(self) -> int:
        """Every intent and request at or below this lsn is settled."""
        return min((p.lsn for p in self.pending), default=self.last_lsn + 1) - 1


def lines_backward(path: Path, block: int = BACK_BLOCK) -> Iterator[tuple[int, bytes]]:
    """Yield ``(offset, line)`` of the complete lines of ``path`` from the last to the first.

    A partial last line (no newline) is skipped; ``\\r`` before ``\\n`` is dropped.
    """
    with open_journal(path) as f:
        pos = f.seek(0, 2)
        buf = b""
        trimmed = False
        while True:
            if pos > 0:
                n = min(block, pos)
                pos -= n
                f.seek(pos)
                buf = f.read(n) + buf
            if not trimmed:
                cut = buf.rfind(b"\n")
                if cut < 0:
                    if pos > 0:
                        continue
                    return
                buf = buf[: cut + 1]
                trimmed = True
            parts = buf.split(b"\n")
            parts.pop()
            head = parts.pop(0) if pos > 0 else None
            off = pos + len(buf)
            for line in reversed(parts):
                off -= len(line) + 1
                yield off, line[:-1] if line.endswith(b"\r") else line
            if head is None:
                return
            buf = head + b"\n"


def _verified(line: bytes) -> dict[str, Any] | None:
    """The record on ``line`` if it parses and (v1) hashes to its own ``h``."""
    try:
        rec = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(rec, dict) or not isinstance(rec.get("lsn"), int):
        return None
    if "v" in rec:
        stored, computed = line_hash(line)
        if stored is None or stored != computed or rec.get("h") != stored:
            return None
    return rec


def _links(prev: dict[str, Any], rec: dict[str, Any]) -> bool:
    """``rec`` directly follows ``prev``: v1, by lsn and hash; lsn dialect, by an lsn that is the
    same (a commit or checkpoint carrying it) or the next."""
    if "v" not in rec:
        return 0 <= rec["lsn"] - prev["lsn"] <= 1
    return prev["lsn"] + 1 == rec["lsn"] and prev.get("h") == rec.get("prev")


def find_checkpoint(path: Path) -> tuple[int, dict[str, Any]] | None:
    """Offset and record of the last checkpoint the tail read may start from, or None (full scan).

    Records after the last fsynced one may have been lost or reordered by a power loss, so the
    checkpoint must link back, record by record, to a record of a synced type (that one had a
    successor written, so its fsync had returned and all before it is durable).
    """
    back = lines_backward(path)
    for off, line in back:
        if not _CHECKPOINT.search(line):
            continue
        checkpoint = _verified(line)
        if checkpoint is None or checkpoint.get("type") != "checkpoint":
            continue
        cur = checkpoint
        for _, pline in back:
            prev = _verified(pline)
            if prev is None or not _links(prev, cur):
                return None
            if prev.get("type") in SYNC_TYPES:
                break
            cur = prev
        return off, checkpoint
    return None


def _scan_tail(path: Path, offset: int, first: dict[str, Any]) -> tuple[Iterator[Record], ScanResult]:
    """Verify forward from a trusted record with the reader's own rules (:mod:`journal.chain`)."""
    scanner = Scanner(path, resume=ScanState.before(path, offset, first))
    return iter(scanner), scanner.result


def line_number(path: Path, offset: int) -> int:
    """1-based line number of the line starting at ``offset`` (only computed for messages)."""
    n = 1
    with open(path, "rb") as f:
        while offset > 0:
            chunk = f.read(min(offset, 1 << 20))
            if not chunk:
                break
            n += chunk.count(b"\n")
            offset -= len(chunk)
    return n


def read_header(path: Path) -> dict[str, Any]:
    """The first record (v1: ``run.start``, checked against its own hash)."""
    with open(path, "rb") as f:
        line = f.readline().rstrip(b"\r\n").removeprefix(b"\xef\xbb\xbf")
    rec = _verified(line) if line.startswith(b'{"v"') else None
    if rec is None:
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError:
            rec = None
        if not isinstance(rec, dict) or "v" in rec:
            raise JournalDamaged(
                "the header (first record) is damaged; see `walkback check`", path=path, line=1
            )
    return rec


def read_window(path: Path) -> Window:
    """Read the tail after the last checkpoint (or everything) and fold it into what is open.

    Raises:
        JournalDamaged: the window holds corruption (bad records followed by valid ones).
    """
    found = find_checkpoint(path)
    if found is None:
        scanner = Scanner(path)
        records, res = iter(scanner), scanner.result
    else:
        records, res = _scan_tail(path, *found)
    fold = _Fold()
    for rec in records:
        fold.take(rec, res.dialect)
    if res.corrupt:
        d = res.corrupt[0]
        raise JournalDamaged(
            f"corruption at lsn {d.lsn} ({d.reason}); recovery needs an intact chain: a human must decide",
            path=path,
            line=line_number(path, d.offset),
        )
    header = res.header if found is None and res.header is not None else read_header(path)
    gone = missing_predecessor(path, header) if header.get("type") == CONTINUED else ""
    if gone:  # a full scan reports it as corruption at line 1; a tail read must not miss it
        raise JournalDamaged(f"{gone}; recovery needs the run's history: a human decides", path=path, line=1)
    win = Window(path, res.dialect, header, res, fold.start_lsn if found is not None else None)
    win.checkpoint = fold.checkpoint
    win.base = header.get("base") if header.get("type") == "plan" else fold.base
    win.decisions = fold.decisions
    win.spawns = list(fold.spawns.values())
    win.last_lsn = res.last_lsn
    lost: list[Pending] = []
    if res.torn:
        with open(path, "rb") as f:
            f.seek(res.valid_end)
            lost = salvage(f.read(), res.last_lsn + 1, res.dialect, None)
    for rlsn, rd in fold.repairs.items():
        good = rd.get("last_good_lsn")
        first = (good if isinstance(good, int) else rlsn - 1) + 1
        cut = salvage(recorded_cut(path, rd), first, res.dialect, rlsn)
        lost += [p for p in cut if (rlsn, p.lsn) not in fold.answered]
    win.unrecorded = unrecorded_cuts(path, list(fold.repairs.values()), win.start_lsn or 0)
    for c in win.unrecorded:
        lost += salvage(c.dropped, c.last_good_lsn + 1, res.dialect, None)
    win.pending = sorted([*fold.open.values(), *fold.asks.values(), *lost], key=lambda p: p.lsn)
    return win


class _Fold:
    """Folds records into the open set: an intent is open until its commit, fail, or a ``none`` decision."""

    def __init__(self) -> None:
        self.open: dict[int, Pending] = {}
        self.asks: dict[int, Pending] = {}
        self.decisions: dict[tuple[int, int | None], tuple[str, str]] = {}
        self.spawns: dict[int, Spawn] = {}
        self.repairs: dict[int, dict[str, Any]] = {}
        self.answered: set[tuple[int, int | None]] = set()
        self.checkpoint: dict[str, Any] | None = None
        self.base: object = None
        self.start_lsn: int | None = None

    def take(self, rec: Record, dialect: str) -> None:
        """Fold one record; what it closes is the reader's :attr:`Record.closes`."""
        lsn, d, closes = rec.lsn, rec.data, rec.closes
        kind = kind_of(d, dialect)
        if kind in ("commit", "fail", "result"):
            if closes is not None:
                self.open.pop(closes, None)
        elif kind == "intent":
            self.open[lsn] = pending_intent(lsn, d)
        elif kind == "approval.request":
            self.asks[lsn] = pending_approval(lsn, d)
        elif kind == "approval.decision":
            if closes is not None:
                self.asks.pop(closes, None)
        elif kind == "recovery" and isinstance(d.get("ref"), int):
            lost = d.get("lost_lsn")
            self.decisions[(d["ref"], lost if isinstance(lost, int) else None)] = (
                str(d.get("finding")),
                str(d.get("action")),
            )
            if d.get("action") == "none":
                self.open.pop(d["ref"], None)
                self.answered.add((d["ref"], lost if isinstance(lost, int) else None))
        elif kind == "journal.recovered":
            self.repairs[lsn] = d
        elif kind == "agent.spawn" and isinstance(d.get("child_dir"), str):
            self.spawns[lsn] = Spawn(
                lsn, str(d.get("child_agent") or ""), d["child_dir"], str(d.get("child_run") or "")
            )
        elif kind == "agent.end" and closes in self.spawns:
            self.spawns[closes].ended = True
        elif kind == "plan" and self.base is None:
            self.base = d.get("base")
        elif kind == "checkpoint":
            if self.checkpoint is None:
                self.start_lsn = lsn
            self.checkpoint = d
