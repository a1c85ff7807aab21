"""A whole session: the session file, then each subagent file as a child agent linked to the call
that started it, then the session's facts (task, header, status)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from walkback.journal.errors import ImporterError
from walkback.timeline.builder import SessionBuilder

from ..fields import mapping, string
from ..records import load_document, written_lately
from ._layout import Layout, Subagent
from ._read import FileReader, Shared
from ._vocab import ROOT_AGENT

COMPACTION_AGENT = "agent-acompact"
"""Claude Code runs a compaction as a subagent file of its own (``agent-acompact-<hex>.jsonl``)."""


def read_session(b: SessionBuilder, lay: Layout) -> Iterator[None]:
    shared = Shared(with_files={s.agent_id for s in lay.subagents})
    first: FileReader | None = None
    if lay.main is not None:
        b.agent(ROOT_AGENT)
        first = FileReader(b, lay.main, ROOT_AGENT, shared)
        yield from first.run()
        _close_agent(b, first, ROOT_AGENT)
        for agent_id, outcome in shared.outcomes.items():  # children seen only in agent_progress
            stand_in = b.session.agents.get("agent-" + agent_id)
            if stand_in is not None:
                stand_in.outcome = outcome
    for sub in lay.subagents:
        reader = FileReader(b, sub.path, sub.name, shared)
        _add_subagent(b, sub, shared, parent=ROOT_AGENT if first is not None else None)
        yield from reader.run()
        _close_agent(b, reader, sub.name)
        agent = b.session.agents[sub.name]
        agent.outcome = shared.outcomes.get(sub.agent_id) or (
            "crashed" if reader.status() == "crashed" else ""
        )
        first = first or reader
    if first is not None:
        _finish(b, first)


def read_web(b: SessionBuilder, path: Path) -> Iterator[None]:
    """The Claude Code on the web export: ``{"loglines": [record, ...]}``."""
    lines = mapping(load_document(path)).get("loglines")
    if not isinstance(lines, list):
        raise ImporterError('not a Claude Code web session: no "loglines" array', path=path)
    b.agent(ROOT_AGENT)
    reader = FileReader(b, path, ROOT_AGENT, Shared(with_files=set()), items=True)
    yield from reader.run_items(lines)
    _close_agent(b, reader, ROOT_AGENT)
    _finish(b, reader)


def _add_subagent(b: SessionBuilder, sub: Subagent, shared: Shared, *, parent: str | None) -> None:
    """The child agent of a subagent file, linked to its Task call by the result's ``agentId``,
    else by the meta file's ``toolUseId``."""
    if sub.problem:
        b.skip(sub.path.with_name(sub.path.stem + ".meta.json"), 0, sub.problem)
    call = shared.agent_call.get(sub.agent_id) or string(sub.meta.get("toolUseId"))
    spawn = shared.spawns.get(call)
    label = string(sub.meta.get("agentType")) or (spawn[1] if spawn else "")
    if not label and sub.name.startswith(COMPACTION_AGENT):
        label = "compaction"
    b.agent(
        sub.name,
        parent=parent,
        spawned_by=spawn[0] if spawn else None,
        task=string(sub.meta.get("description")),
        label=label,
    )


def _close_agent(b: SessionBuilder, reader: FileReader, name: str) -> None:
    """What the file said about its agent once read: its run (the session id) and its task."""
    agent = b.agent(name, run=string(reader.header.get("sessionId")))
    agent.task = reader.prompt or agent.task


def _finish(b: SessionBuilder, first: FileReader) -> None:
    s = b.session
    s.header = dict(first.header)
    s.task = first.prompt
    s.status = "running" if written_lately(first.path, first.last_ts) else first.status()
    b.interleave = len(s.sources) > 1
