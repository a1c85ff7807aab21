"""Reading one journal file into the builder: the hot loop, then its segments and subagents.

A run directory brings its subagents along: every ``agent.spawn`` names the child's run
directory (relative, inside the parent's), whose journal is read into the same session. A rotated
journal's archived segments are read first, sharing one lsn index.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

from walkback.journal.blobs import BlobStore
from walkback.journal.reader import Scanner
from walkback.journal.segments import archived
from walkback.timeline.builder import SessionBuilder
from walkback.timeline.sources import JsonLines

from . import _facts
from ._reading import Followed, Reading, Refs, add_agent, placeholders


def read_journal(
    b: SessionBuilder,
    jpath: Path,
    *,
    parent: str | None,
    spawned_by: int | None,
    stores: list[BlobStore],
    segment_of: Refs | None = None,
    resume: Followed | None = None,
) -> Iterator[None]:
    """Read one journal (then its subagents'), yielding whenever a chunk is due; with ``resume``,
    only what was appended to it since that read (and the subagents spawned meanwhile)."""
    segments = archived(jpath) if segment_of is None and resume is None else []
    shared = segment_of
    for seg in segments:
        shared = shared or Refs(b.count, dense=True)
        yield from read_journal(
            b, seg.path, parent=parent, spawned_by=spawned_by, stores=stores, segment_of=shared
        )
    session = b.session
    src = resume.src if resume is not None else b.source(JsonLines(jpath))
    r = Reading(b, jpath, src, parent, spawned_by, shared, resume)
    if resume is None:
        stores.append(BlobStore(jpath.parent / "blobs"))
        scanner = Scanner(jpath)
    else:
        scanner = Scanner(jpath, resume=resume.state)
    yield from r.records(scanner.result, scanner.fields())
    res = scanner.result
    damage = res.corrupt
    if r.n == 0:  # every line damaged: keep the agent visible
        r.agent_id = "main" if parent is None else f"agent-{r.src}"
        add_agent(b, {}, r.agent_id, parent, spawned_by)
    if placeholders(b, jpath, r.src, damage, r.shown_damage, math.inf, r.agent_id) > r.shown_damage or (
        placeholders(b, jpath, r.src, res.torn, 0, math.inf, r.agent_id, status="torn")
    ):
        r.refs.seal()  # a next segment's records no longer follow on by arithmetic
    integ = session.integrity
    if resume is not None:  # the result is cumulative: this file's damage is listed again from it
        integ.skipped = [x for x in integ.skipped if x["file"] != str(jpath)]
        integ.corrupt = [x for x in integ.corrupt if x["file"] != str(jpath)]
    integ.skipped.extend(
        {"file": str(jpath), "line": dmg.line, "reason": dmg.reason} for dmg in res.corrupt + res.torn
    )
    b.flush()  # the facts below read the table
    if parent is None:
        _facts.finish_main(session, jpath, res, r.ended, archived_segment=segment_of is not None)
    children = r.children
    waiting = [(p, k) for p, k in children if not p.is_file()]
    if segment_of is None:  # a live file (an archived segment never grows)
        session.follow[jpath] = Followed(
            jpath,
            r.src,
            parent,
            spawned_by,
            stores,
            r.refs,
            r.agent_id,
            r.agent_aid,
            r.n,
            len(damage),
            scanner.state,
            bool(res.torn),
            waiting,
            r.ended,
        )
    for child_path, spawn_index in children:
        if child_path.is_file() and all(s.path != child_path for s in session.sources):
            yield from read_journal(b, child_path, parent=r.agent_id, spawned_by=spawn_index, stores=stores)
    for name, outcome in r.outcomes.items():
        if name in session.agents:
            session.agents[name].outcome = outcome
    if parent is None and segment_of is None and resume is None:
        _facts.roster(b, session.header, r.refs)
