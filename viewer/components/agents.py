"""The agent tree: parent and subagents with their spawn step, outcome and event counts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from nicegui import events, ui
from walkback.timeline.query import columns
from walkback.timeline.session import Session


def agent_nodes(session: Session) -> list[dict[str, Any]]:
    """Tree nodes (``id``, ``label``, ``children``) for ``ui.tree``; labels are plain text."""
    c = columns(session)
    counts = np.bincount(c.agent, minlength=len(session.table.pool.values)) if c.n else np.zeros(1, np.int64)
    nodes: dict[str, dict[str, Any]] = {}
    for a in session.agents.values():
        code = session.table.pool.find(a.id)
        n = int(counts[code]) if code is not None and code < len(counts) else 0
        parts = [a.id, f"{n:,} events"]
        if a.spawned_by is not None:
            parts.append(f"spawned at step {a.spawned_by + 1}")
        if a.outcome:
            parts.append(a.outcome)
        elif a.parent is not None:
            parts.append("no end recorded")
        nodes[a.id] = {"id": a.id, "label": " · ".join(parts), "children": []}
    roots: list[dict[str, Any]] = []
    for a in session.agents.values():
        parent = nodes.get(a.parent) if a.parent else None
        (parent["children"] if parent is not None else roots).append(nodes[a.id])
    return roots


def agent_tree(session: Session, on_pick: Callable[[int], None]) -> ui.tree:
    """Selecting an agent goes to its spawn step (or its first step for the root)."""

    def pick(e: events.ValueChangeEventArguments[Any]) -> None:
        agent = session.agents.get(str(e.value)) if e.value is not None else None
        if agent is None:
            return
        if agent.spawned_by is not None:
            on_pick(agent.spawned_by)
            return
        code = session.table.pool.find(agent.id)
        first = np.flatnonzero(columns(session).agent == code)[:1]
        if len(first):
            on_pick(int(first[0]))

    tree = ui.tree(agent_nodes(session), node_key="id", label_key="label", on_select=pick)
    tree.expand()
    return tree.classes("w-full").mark("agent-tree")
