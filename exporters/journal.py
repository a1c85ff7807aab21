"""Write any imported session as a v1 journal (``walkback import``).

Each event's source record becomes one v1 record of the same type, with its own fields kept and
its envelope (lsn/seq, hashes) replaced; completions point (``ref``) at the new lsn of the event
they complete. The header names the source format, file and the source file's sha256, so the
output can be traced back to exactly what it was made from.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from walkback.journal.errors import ExportError
from walkback.journal.fileops import OS, atomic_file
from walkback.journal.paths import JOURNAL_NAME
from walkback.journal.record import ENVELOPE, sha256_file
from walkback.journal.writer import JournalWriter
from walkback.timeline.session import Session

from .base import Option

HEADER_OWN = frozenset({"journal_id", "producer", "task", "source", "run_dir", "ops", "group_interval", "fd"})
"""Header fields the new journal sets itself (or that would clash with ``JournalWriter.create``)."""
APPEND_PARAMS = frozenset({"sync"})
"""Source fields named like an ``append`` parameter are kept as ``source_<name>``."""
KIND_TYPE = {"tool_call": "intent", "tool_result": "commit", "run_start": "run.start"}


def write_journal(session: Session, out: str | Path) -> Path:
    """Write ``session`` to ``out`` (a run directory, or a ``.jsonl`` path) and return the journal path.

    The journal appears complete or not at all (:func:`~walkback.journal.fileops.atomic_file`): a
    kill or a full disk mid-way leaves no file that reads as an intact shorter journal, and a run
    again starts afresh (removing the killed run's temp file). An existing file, even empty, or a
    symbolic link at the output is refused, never written through.

    Raises:
        ExportError: the output exists already, or is a symbolic link.
    """
    target = Path(out)
    if target.is_symlink():
        raise ExportError("the output is a symbolic link (never written through)", path=target)
    path = target if target.suffix == ".jsonl" else target / JOURNAL_NAME
    if os.path.lexists(path):
        raise ExportError("journal already exists: an import makes a new file, never reuses one", path=path)
    OS.mkdir(path.parent)
    header: dict[str, Any] = {}
    if session.header.get("type") == "run.start":  # a seed dialect's first record is not a header
        header = {k: v for k, v in session.header.items() if k not in ENVELOPE and k not in HEADER_OWN}
    files = session.files()
    header["source"] = {
        "format": session.format,
        "files": [{"path": str(p.resolve()), "sha256": sha256_file(p)} for p in files],
    }
    with (
        atomic_file(path, sweep=True) as fd,
        JournalWriter.create(path, task=session.task, fd=os.dup(fd), **header) as w,
    ):
        new_lsn: dict[int, int] = {}
        for ev in session.events():
            if ev.index == 0 and ev.type == "run.start":
                continue
            raw = session.raw(ev.index)
            if not isinstance(raw, dict):
                raw = {"value": raw}
            fields: dict[str, Any] = {
                ("source_" + k if k in APPEND_PARAMS else k): v for k, v in raw.items() if k not in ENVELOPE
            }
            if ev.lsn is not None:
                fields["source_lsn"] = ev.lsn
            fields["source_line"] = ev.line
            if "ts" in raw:
                fields["source_ts"] = raw["ts"]
            typ = ev.type if ev.type and ev.type != "?" else KIND_TYPE.get(ev.kind, ev.kind)
            ref = new_lsn.get(ev.ref) if ev.ref is not None else None
            new_lsn[ev.index] = w.append(typ, ref=ref, agent=ev.agent or None, sync=False, **fields)
    return path


class JournalExporter:
    """``walkback import``: any session as a hash-chained v1 journal."""

    name = "journal"
    suffix = ".jsonl"
    extra = None
    options: tuple[Option, ...] = ()

    def export(self, session: Session, out: Path, **options: Any) -> Path:
        return write_journal(session, out)


EXPORTER = JournalExporter()
