"""Write any imported session as a v1 journal (``walkback import``).

Each event's source record becomes one v1 record of the same type, with its own fields kept and
its envelope (lsn/seq, hashes) replaced; completions point (``ref``) at the new lsn of the event
they complete. The header names the source format, file and the source file's sha256, so the
output can be traced back to exactly what it was made from.

Every agent of the session is in the one journal (docs/journal-format.md §11): each record's
envelope names its agent, the header's ``agents`` lists the tree (parent, the lsn of the record
that spawned each one), and a record of a type v1 does not define keeps its timeline ``kind``.
A single file is what keeps the import atomic (one temp file, one rename) for ``-o o.jsonl`` and
``-o DIR`` alike.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from walkback.importers.walkback_journal import TYPE_KIND
from walkback.journal.errors import ExportError
from walkback.journal.fileops import OS, atomic_file
from walkback.journal.paths import JOURNAL_NAME
from walkback.journal.record import ENVELOPE, sha256_file
from walkback.journal.writer import JournalWriter
from walkback.timeline.session import Agent, Session

from .base import Option

HEADER_OWN = frozenset(
    {"journal_id", "producer", "task", "source", "agents", "run_dir", "ops", "group_interval", "fd"}
)
"""Header fields the new journal sets itself (or that would clash with ``JournalWriter.create``)."""
APPEND_PARAMS = frozenset({"sync"})
"""Source fields named like an ``append`` parameter are kept as ``source_<name>``."""
KIND_TYPE = {"tool_call": "intent", "tool_result": "commit", "run_start": "run.start"}
MOVED = {"child_dir": "source_child_dir"}
"""Source fields that would mean something else here: a spawn's child is in this journal, not in a
folder beside it."""


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
        "status": session.status,
    }
    skipped = 1 if len(session) and session.event(0).type == "run.start" else 0
    header["agents"] = roster(session, lambda i: i + 1 - skipped)
    root = next((a for a in session.agents.values() if a.parent is None), Agent("main"))
    with (
        atomic_file(path, sweep=True) as fd,
        JournalWriter.create(
            path, task=session.task, run=root.run or None, agent=root.id, fd=os.dup(fd), **header
        ) as w,
    ):
        new_lsn: dict[int, int] = {}
        for ev in session.events():
            if ev.index == 0 and ev.type == "run.start":
                continue
            raw = session.raw(ev.index)
            if not isinstance(raw, dict):
                raw = {"value": raw}
            fields: dict[str, Any] = {
                ("source_" + k if k in APPEND_PARAMS else MOVED.get(k, k)): v
                for k, v in raw.items()
                if k not in ENVELOPE
            }
            if ev.lsn is not None:
                fields["source_lsn"] = ev.lsn
            fields["source_line"] = ev.line
            if "ts" in raw:
                fields["source_ts"] = raw["ts"]
            typ = ev.type if ev.type and ev.type != "?" else KIND_TYPE.get(ev.kind, ev.kind)
            if TYPE_KIND.get(typ, ev.kind) != ev.kind:  # a v1 type's name meaning another kind there
                typ = f"{session.format}:{typ}"
            if typ not in TYPE_KIND:  # a type v1 does not define keeps its kind (§11)
                if fields.get("kind", ev.kind) != ev.kind:
                    fields["source_kind"] = fields.pop("kind")
                if ev.kind != "other":
                    fields["kind"] = ev.kind
            ref = new_lsn.get(ev.ref) if ev.ref is not None else None
            new_lsn[ev.index] = w.append(typ, ref=ref, agent=ev.agent or None, sync=False, **fields)
    return path


def roster(session: Session, lsn: Callable[[int], int]) -> list[dict[str, Any]]:
    """The header's ``agents``: every agent, parents before their children; ``spawned_by`` is the
    new lsn (``lsn``) of the event that started it."""
    agents = session.agents

    def depth(a: Agent) -> int:
        above: list[str] = []
        while a.parent is not None and a.parent in agents and a.parent not in above:
            above.append(a.parent)
            a = agents[a.parent]
        return len(above)

    return [
        {
            "id": a.id,
            "parent": a.parent,
            "spawned_by": lsn(a.spawned_by) if a.spawned_by is not None else None,
            "run": a.run,
            "task": a.task,
            "label": a.label,
            "outcome": a.outcome,
        }
        for a in sorted(agents.values(), key=depth)
    ]


class JournalExporter:
    """``walkback import``: any session as a hash-chained v1 journal."""

    name = "journal"
    suffix = ".jsonl"
    extra = None
    options: tuple[Option, ...] = ()

    def export(self, session: Session, out: Path, **options: Any) -> Path:
        return write_journal(session, out)


EXPORTER = JournalExporter()
