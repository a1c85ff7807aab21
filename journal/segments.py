"""Journal segments: at a checkpoint the live journal is archived and continued in a new file.

Layout (docs/journal-format.md §1, §9): ``<run-dir>/journal.jsonl`` is the live file;
``<run-dir>/segments/<first_lsn:012d>-<last_lsn:012d>.jsonl`` are the archived ones (never
deleted). A live file after a rotation starts with a ``journal.continued`` record: the next lsn,
``prev`` = the archived last record's ``h`` (one chain across the files), the header's fields
again, and ``segment`` {path, first_lsn, last_lsn, last_h} naming the archive it follows.

Rotation keeps ``journal.jsonl`` in place at every instant, so a reader or recovery that reads only
the live file never finds it missing, even mid-rotation:

1. hard-link the live file as its segment name, fsync ``segments/`` (``rotate.after_link``);
2. write ``journal.jsonl.next`` (the ``journal.continued`` line) and fsync it (``rotate.after_next``);
3. rename it over ``journal.jsonl`` (``rotate.after_rename``), fsync the run directory
   (``rotate.after_dir_fsync``).

The rename is the commit point. Before it, the segment is a second name of the live file (the same
inode); :func:`finish_rotation` (run by ``JournalWriter.open`` under the run lock) rolls forward when
``.next`` is complete and continues the live file's last record, and otherwise removes ``.next``
and the extra name: the journal is then exactly what it was before the rotation began.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import failpoints
from .chain import CONTINUED
from .chain import SEGMENTS_DIR as SEGMENTS_DIR
from .fileops import OS, FileOps
from .paths import JOURNAL_NAME, journal_path
from .record import FORMAT_VERSION, encode, intact, now_iso
from .scanresult import Record, ScanResult

if TYPE_CHECKING:
    from .writer import JournalWriter

NEXT_SUFFIX = ".next"
DEFAULT_ROTATE_BYTES = 4 << 20
ROTATE_ENV = "WALKBACK_ROTATE_BYTES"
_NAME = re.compile(r"(\d{12})-(\d{12})\.jsonl")
_ENVELOPE = frozenset({"v", "lsn", "ts", "run", "agent", "type", "ref", "prev", "h", "segment"})


@dataclass(frozen=True)
class Segment:
    """An archived segment as its file name describes it."""

    path: Path
    first_lsn: int
    last_lsn: int


def segment_name(first_lsn: int, last_lsn: int) -> str:
    return f"{first_lsn:012d}-{last_lsn:012d}.jsonl"


def rotate_threshold() -> int:
    """Live-file size that triggers a rotation at a checkpoint: ``WALKBACK_ROTATE_BYTES`` (0: never)."""
    value = os.environ.get(ROTATE_ENV, "")
    return int(value) if value.isdigit() else DEFAULT_ROTATE_BYTES


def list_segments(run_dir: Path) -> list[Segment]:
    """The files of ``run_dir/segments/`` named like segments, in lsn order."""
    try:
        names = os.listdir(run_dir / SEGMENTS_DIR)
    except (FileNotFoundError, NotADirectoryError):
        return []
    out = []
    for name in names:
        if m := _NAME.fullmatch(name):
            out.append(Segment(run_dir / SEGMENTS_DIR / name, int(m.group(1)), int(m.group(2))))
    return sorted(out, key=lambda s: (s.first_lsn, s.last_lsn))


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def archived(live: Path) -> list[Segment]:
    """The archived segments before the live journal ``live`` (none for a file not so named).

    A segment that is still another name of the live file (a rotation interrupted before its
    rename) is not archived yet and is left out.
    """
    if live.name != JOURNAL_NAME:
        return []
    return [s for s in list_segments(live.parent) if not _same(s.path, live)]


# -- rotating -------------------------------------------------------------------------------------
def archive(w: JournalWriter) -> tuple[Path, dict[str, Any], str]:
    """Steps 1-3 of a rotation for writer ``w`` (synced, at a checkpoint); returns the segment's
    path, the ``journal.continued`` record and its hash. The writer reopens the live file."""
    live, ops = w.path, w._ops
    run_dir = live.parent
    seg_dir = run_dir / SEGMENTS_DIR
    seg = seg_dir / segment_name(w.first_lsn, w.next_lsn - 1)
    ops.mkdir(seg_dir)
    if not _same(seg, live):
        ops.link(live, seg)
    ops.fsync_dir(seg_dir)
    failpoints.failpoint("rotate.after_link")
    rec: dict[str, Any] = {
        "v": FORMAT_VERSION,
        "lsn": w.next_lsn,
        "ts": now_iso(),
        "run": w.run,
        "agent": w.agent,
        "type": CONTINUED,
        **{k: v for k, v in w.header.items() if k not in _ENVELOPE},
        "segment": {
            "path": f"{SEGMENTS_DIR}/{seg.name}",
            "first_lsn": w.first_lsn,
            "last_lsn": w.next_lsn - 1,
            "last_h": w.last_h,
        },
        "prev": w.last_h,
    }
    line, h = encode(rec)
    nxt = live.with_name(live.name + NEXT_SUFFIX)
    fd = ops.open_new(nxt)
    try:
        ops.write(fd, line)
        ops.fsync(fd)
    finally:
        ops.close(fd)
    failpoints.failpoint("rotate.after_next")
    ops.replace(nxt, live)
    failpoints.failpoint("rotate.after_rename")
    ops.fsync_dir(run_dir)
    failpoints.failpoint("rotate.after_dir_fsync")
    rec["h"] = h
    return seg, rec, h


def finish_rotation(live: Path, *, ops: FileOps = OS) -> str:
    """Complete or undo a rotation a crash interrupted; ``done``, ``forward``, ``back`` or ``none``.

    The caller holds the run lock. Roll forward only when ``.next`` holds one intact
    ``journal.continued`` record that continues the live file's last record (a recovery that
    appended to the live file in between makes it stale: then roll back).
    """
    nxt = live.with_name(live.name + NEXT_SUFFIX)
    pending = [s for s in list_segments(live.parent) if _same(s.path, live)]
    if not pending and not nxt.exists():
        return "none"
    if pending and nxt.exists() and _continues(nxt, live, pending[-1]):
        ops.replace(nxt, live)
        ops.fsync_dir(live.parent)
        return "forward"
    if nxt.exists():
        ops.unlink(nxt)
    for s in pending:
        ops.unlink(s.path)
    ops.fsync_dir(live.parent)
    if pending:
        ops.fsync_dir(live.parent / SEGMENTS_DIR)
    return "back"


def _continues(nxt: Path, live: Path, seg: Segment) -> bool:
    data = nxt.read_bytes()
    last = _last_line(live)
    if not data.endswith(b"\n") or data.count(b"\n") != 1 or last is None:
        return False
    cont, last_rec = intact(data[:-1]), intact(last)
    if cont is None or last_rec is None or cont.get("type") != CONTINUED:
        return False
    link = cont.get("segment") or {}
    return (
        cont.get("prev") == last_rec.get("h")
        and cont.get("lsn") == last_rec.get("lsn", -2) + 1
        and link.get("last_lsn") == seg.last_lsn == last_rec.get("lsn")
    )


def _last_line(path: Path, block: int = 1 << 16) -> bytes | None:
    """The last complete line of ``path`` without its line end (None if there is none)."""
    with open(path, "rb") as f:
        end = f.seek(0, 2)
        buf = b""
        pos = end
        while pos > 0:
            n = min(block, pos)
            pos -= n
            f.seek(pos)
            buf = f.read(n) + buf
            cut = buf.rfind(b"\n")
            if cut < 0:
                continue
            start = buf.rfind(b"\n", 0, cut)
            if start >= 0 or pos == 0:
                return buf[start + 1 : cut].removesuffix(b"\r")
    return None


# -- reading the whole run ------------------------------------------------------------------------
@dataclass
class Link:
    """A broken link between two files of a run (or a segment misnamed): where, and why."""

    path: Path
    line: int
    reason: str
    lsn: int | None = None


@dataclass
class RunScan:
    """Integrity of a run's archived segments, the live file, and the links between them."""

    files: list[ScanResult] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)

    @property
    def intact(self) -> bool:
        return not self.links and all(f.intact for f in self.files)

    @property
    def records(self) -> int:
        return sum(f.records for f in self.files)

    @property
    def live(self) -> ScanResult:
        return self.files[-1]

    @property
    def dialect(self) -> str:
        return self.live.dialect

    def damage_summary(self) -> str:
        """Where the first damage is, naming its file."""
        for f in self.files:
            if not f.intact:
                return f"{f.path}: {f.damage_summary()}"
        if self.links:
            first = self.links[0]
            return f"{first.path}:{first.line}: {first.reason}"
        return "intact"


OnRecord = Callable[[Path, Record], None]


def scan_run(path: Path, *, on_record: OnRecord | None = None) -> RunScan:
    """Scan every archived segment of a run, then its live file, and check the links.

    ``on_record`` receives each readable record with the file it is in (records are not built
    when it is None). Raises what :class:`~journal.reader.Scanner` raises for an unusable file.
    """
    from .reader import Scanner

    live = journal_path(path)
    segs = archived(live)
    out = RunScan()
    prev: tuple[Segment, ScanResult] | None = None
    journal_id: Any = None
    for seg in [*segs, None]:
        file = seg.path if seg is not None else live
        scanner = Scanner(file, emit=on_record is not None)
        for rec in scanner:
            if on_record is not None:
                on_record(file, rec)
        res = scanner.result
        out.files.append(res)
        header = res.header or {}
        journal_id = journal_id or header.get("journal_id")
        out.links.extend(_link_problems(file, seg, res, prev, journal_id))
        if seg is not None:
            prev = (seg, res)
    return out


def _link_problems(
    file: Path,
    seg: Segment | None,
    res: ScanResult,
    prev: tuple[Segment, ScanResult] | None,
    journal_id: Any,
) -> list[Link]:
    """What is wrong with ``file``'s place in the run (its damage inside is in ``res``)."""
    out: list[Link] = []
    header = res.header
    if header is None or res.dialect != "v1":
        return out  # damage at line 1 is already in res; seed dialects do not rotate
    first = res.first_lsn
    if seg is not None and (seg.first_lsn, seg.last_lsn) != (first, res.last_lsn) and res.intact:
        out.append(
            Link(
                file,
                1,
                f"named for lsn {seg.first_lsn}..{seg.last_lsn} but holds "
                f"lsn {first}..{res.last_lsn} (renamed or reordered)",
                first,
            )
        )
    if header.get("journal_id") != journal_id:
        out.append(Link(file, 1, "journal_id differs from the run's (a file from another journal)", first))
    if prev is None:
        if first != 0:
            out.append(Link(file, 1, f"starts at lsn {first}: the segments before it are missing", first))
        return out
    pseg, pres = prev
    if header.get("type") != CONTINUED:
        out.append(Link(file, 1, "follows a segment but does not start with journal.continued", first))
        return out
    link = header.get("segment") or {}
    if first != pres.last_lsn + 1:
        missing = f"lsn {pres.last_lsn + 1}..{first - 1} missing" if first > pres.last_lsn + 1 else "overlap"
        out.append(
            Link(
                file,
                1,
                f"starts at lsn {first} after {pseg.path.name} ends at lsn "
                f"{pres.last_lsn} ({missing}: a segment is missing or out of order)",
                first,
            )
        )
    elif header.get("prev") != pres.last_h or link.get("last_h") != pres.last_h:
        out.append(
            Link(
                file,
                1,
                f"does not chain: prev is not the hash of lsn {pres.last_lsn} "
                f"(last record of {pseg.path.name})",
                first,
            )
        )
    if link.get("path") != f"{SEGMENTS_DIR}/{pseg.path.name}":
        out.append(Link(file, 1, f"names segment {link.get('path')!r}, not {pseg.path.name}", first))
    return out


def read_run(path: Path) -> tuple[list[Record], RunScan]:
    """Every readable record of a run, archived segments first (for small runs: the agent's state)."""
    records: list[Record] = []
    scan = scan_run(path, on_record=lambda _f, rec: records.append(rec))
    return records, scan
