"""``walkback import`` keeps every agent: the imported journal reads back with the source's agents
tree (parents, the event that spawned each one), each agent's events in order with their kinds and
types, and importing the import again changes none of it (docs/journal-format.md §11)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from walkback.exporters.journal import write_journal
from walkback.importers import load
from walkback.journal import read_records
from walkback.journal.writer import JournalWriter
from walkback.timeline.session import Session
from walkback.viewer.components.timeline_chart import Axis, spawn_lines

from walkback.cli import cli

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parents[2] / "shared" / "corpus"
CLAUDE = CORPUS / "claude-code" / "vscode-copilot-chat" / "b3a7bd3c-5a10-4e7b-8ff0-7fc0cd6d1093.jsonl"
INSPECT = CORPUS / "inspect" / "synthetic" / "utility_subagent_loop.json"
ROO_TASKS = HERE.parent / "importers" / "test_roo_code" / "tasks"


def agents_and_lanes(s: Session) -> tuple[dict[str, Any], dict[str, list[tuple[str, str]]]]:
    """The agents tree (parent, label, outcome, and where the spawning event sits: its number once
    the journal's own header is left out, its agent and kind) and each agent's events in order.
    A source's own ``run.start`` at index 0 is what an import's header replaces: it is left out too."""
    skip = 1 if len(s) and s.event(0).type == "run.start" else 0
    tree = {}
    for a in s.agents.values():
        spawn = s.event(a.spawned_by) if a.spawned_by is not None else None
        where = (
            (a.spawned_by - skip, spawn.agent, spawn.kind)
            if spawn is not None and a.spawned_by is not None
            else None
        )
        tree[a.id] = (a.parent, where, a.label, a.outcome, a.task)
    lanes: dict[str, list[tuple[str, str]]] = {}
    for ev in s.events():
        if ev.index >= skip:
            lanes.setdefault(ev.agent, []).append((ev.kind, ev.type))
    return tree, lanes


def assert_same_agents(source: Session, imported: Session) -> None:
    """The same tree and lanes; a source type named like a v1 type of another kind is written as
    ``<format>:<type>`` (§11)."""
    tree, lanes = agents_and_lanes(source)
    got_tree, got_lanes = agents_and_lanes(imported)
    assert got_tree == tree
    prefix = f"{source.format}:"
    assert {a: [(k, t.removeprefix(prefix)) for k, t in evs] for a, evs in got_lanes.items()} == lanes
    assert {a.id: a.events for a in imported.agents.values()} == {
        a: len(evs) + (1 if a == imported.event(0).agent else 0) for a, evs in lanes.items()
    } | {a.id: 0 for a in source.agents.values() if a.id not in lanes}, "the header is its root agent's"


def import_twice(source: Path, tmp_path: Path) -> tuple[Session, Session, Session]:
    """The source, its import to a single file, and that import's import to a run directory."""
    first = write_journal(load(source), tmp_path / "once.jsonl")
    second = write_journal(load(first), tmp_path / "twice")
    for journal in (first, second):
        records, res = read_records(journal)
        assert res.intact and res.chain == "ok"
        assert not any("child_dir" in r.data for r in records), "no child journal is looked for beside it"
    return load(source), load(first), load(second)


def codex_rollouts(folder: Path) -> Path:
    """A Codex session whose ``spawn_agent`` call started a subagent, in a rollout of its own."""
    meta = {"id": "th-1", "timestamp": "2026-01-01T10:00:00.000Z", "cwd": "/w", "cli_version": "0.50.0"}
    child_meta = {
        **meta,
        "id": "th-2",
        "timestamp": "2026-01-01T10:00:05.000Z",
        "source": {"subagent": {"thread_spawn": {"parent_thread_id": "th-1", "agent_nickname": "scout"}}},
    }
    args = orjson.dumps({"message": "look around"}).decode()
    parent = [
        ("session_meta", meta),
        (
            "response_item",
            {"type": "function_call", "name": "spawn_agent", "call_id": "s1", "arguments": args},
        ),
        ("response_item", {"type": "function_call_output", "call_id": "s1", "output": '{"agent_id":"th-2"}'}),
        ("event_msg", {"type": "agent_message", "message": "the scout is out"}),
    ]
    child = [
        ("session_meta", child_meta),
        ("event_msg", {"type": "user_message", "message": "look around"}),
        (
            "response_item",
            {"type": "function_call", "name": "shell", "call_id": "c1", "arguments": '{"command":["ls"]}'},
        ),
        ("response_item", {"type": "function_call_output", "call_id": "c1", "output": "a.txt"}),
    ]
    for name, items, minute in (("th-1", parent, 0), ("th-2", child, 1)):
        lines = [
            {"timestamp": f"2026-01-01T10:{minute:02d}:{n:02d}.000Z", "type": t, "payload": p}
            for n, (t, p) in enumerate(items)
        ]
        path = folder / f"rollout-2026-01-01T10-{minute:02d}-00-{name}.jsonl"
        path.write_bytes(b"\n".join(orjson.dumps(x) for x in lines) + b"\n")
        os.utime(path, (1_600_000_000, 1_600_000_000))
    return folder / "rollout-2026-01-01T10-00-00-th-1.jsonl"


def walkback_run(run: Path) -> Path:
    """walkback's own run: a subagent in ``agents/a1/`` with a grandchild below it."""
    top = JournalWriter.create(run, task="fan out", run="R", group_interval=0)
    spawn = top.append("agent.spawn", child_run="R:1", child_agent="a1", child_dir="agents/a1", task="sub")
    child = JournalWriter.create(
        run / "agents" / "a1", task="sub", run="R:1", agent="a1", parent={"run": "R", "lsn": spawn}
    )
    deeper = child.append(
        "agent.spawn", child_run="R:1:1", child_agent="a2", child_dir="agents/a2", task="deeper"
    )
    grand = JournalWriter.create(
        run / "agents" / "a1" / "agents" / "a2",
        task="deeper",
        run="R:1:1",
        agent="a2",
        parent={"run": "R:1", "lsn": deeper},
    )
    grand.append("message", role="assistant", text="done below")
    grand.append("run.end", status="completed")
    grand.close()
    child.append("agent.end", ref=deeper, child_agent="a2", child_run="R:1:1", outcome="completed")
    child.append("run.end", status="completed")
    child.close()
    top.append("agent.end", ref=spawn, child_agent="a1", child_run="R:1", outcome="failed")
    top.append("run.end", status="completed")
    top.close()
    return run


def roo_parent() -> Path:
    return sorted(ROO_TASKS.iterdir())[0]


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda tmp: CLAUDE, id="claude-code-4-subagents"),
        pytest.param(lambda tmp: roo_parent(), id="roo-code-new-task"),
        pytest.param(codex_rollouts, id="codex-subagent-rollout"),
        pytest.param(lambda tmp: INSPECT, id="inspect-nested-agents"),
        pytest.param(lambda tmp: walkback_run(tmp / "run"), id="walkback-child-run-dirs"),
    ],
)
def test_an_import_carries_every_agent_and_reads_back_the_same(make: Any, tmp_path: Path) -> None:
    source = make(tmp_path)
    if not source.exists():
        pytest.skip(f"{source} is not on this machine")
    original, once, twice = import_twice(source, tmp_path)
    assert len(original.agents) > 1 and any(a.spawned_by is not None for a in original.agents.values())
    assert_same_agents(original, once)
    assert_same_agents(once, twice)
    assert [once.event(i).status for i in range(len(once))] == [
        twice.event(i).status for i in range(len(twice))
    ]


def test_a_source_type_named_like_a_v1_type_keeps_its_kind_not_the_v1_meaning(tmp_path: Path) -> None:
    """A Codex rollout's developer ``message`` is ``other`` there: read back as a v1 ``message`` it
    would change kind; a Codex ``intent`` would become an intent recovery acts on."""
    rollout = codex_rollouts(tmp_path)
    lines = rollout.read_bytes().splitlines()
    odd = [
        {"timestamp": "2026-01-01T10:00:09.000Z", "type": "message", "payload": {"text": "not a turn"}},
        {"timestamp": "2026-01-01T10:00:10.000Z", "type": "intent", "payload": {"tool": "x"}},
    ]
    rollout.write_bytes(b"\n".join([*lines, *map(orjson.dumps, odd)]) + b"\n")
    original, once, twice = import_twice(rollout, tmp_path)
    assert {original.event(i).type for i in range(len(original)) if original.event(i).kind == "other"} >= {
        "message",
        "intent",
    }
    assert_same_agents(original, once)
    assert_same_agents(once, twice)
    assert {"codex:message", "codex:intent"} <= {once.event(i).type for i in range(len(once))}
    assert once.pending() == twice.pending() == [], "no source record is an intent to recover"


def test_the_walkback_run_keeps_its_outcomes_and_spawn_records(tmp_path: Path) -> None:
    _, once, _ = import_twice(walkback_run(tmp_path / "run"), tmp_path)
    assert {a: (x.parent, x.outcome) for a, x in once.agents.items()} == {
        "main": (None, ""),
        "a1": ("main", "failed"),
        "a2": ("a1", "completed"),
    }
    spawn = once.event(once.agents["a2"].spawned_by or 0)
    assert (spawn.kind, spawn.agent, spawn.status) == ("agent_spawn", "a1", "completed")


def test_the_viewer_draws_the_same_lanes_and_spawn_lines(tmp_path: Path) -> None:
    original, once, _ = import_twice(roo_parent(), tmp_path)
    axis, imported_axis = Axis(original), Axis(once)
    assert imported_axis.lanes == axis.lanes and len(axis.lanes) == 4
    lines, imported_lines = spawn_lines(original, axis), spawn_lines(once, imported_axis)
    assert lines is not None and imported_lines is not None
    assert imported_lines["x"].count(None) == lines["x"].count(None) == 3, "one segment per subtask"


def test_the_commands_read_the_import_with_its_agents(tmp_path: Path) -> None:
    source = codex_rollouts(tmp_path)
    runner = CliRunner()
    done = runner.invoke(cli, ["import", str(source), "-o", str(tmp_path / "o.jsonl")])
    assert done.exit_code == 0, done.output
    shown = orjson.loads(runner.invoke(cli, ["show", "--json", str(tmp_path / "o.jsonl")]).output)
    direct = orjson.loads(runner.invoke(cli, ["show", "--json", str(source)]).output)
    assert [(a["id"], a["parent"]) for a in shown["agents"]] == [
        (a["id"], a["parent"]) for a in direct["agents"]
    ]
    assert shown["kinds"] == direct["kinds"] | {"run_start": direct["kinds"]["run_start"] + 1}
    checked = runner.invoke(cli, ["check", str(tmp_path / "o.jsonl")])
    assert checked.exit_code == 0 and "chain ok" in checked.output


@pytest.mark.parametrize(
    ("agents", "expect"),
    [
        ([{"id": "b", "parent": "a"}, {"id": "a", "parent": "b"}], {"main": None, "b": None, "a": "b"}),
        ([{"id": "main", "parent": "a"}, {"id": "a", "parent": "main"}], {"main": None, "a": "main"}),
        (
            [7, {"id": ""}, {"id": ["x"]}, {"id": "a", "spawned_by": True, "task": 3}],
            {"main": None, "a": None},
        ),
    ],
)
def test_a_hostile_roster_still_reads_as_a_tree(
    tmp_path: Path, agents: list[Any], expect: dict[str, Any]
) -> None:
    w = JournalWriter.create(tmp_path / "j.jsonl", task="t", agents=agents)
    w.append("message", role="user", text="hi", agent="a")
    w.close()
    s = load(tmp_path / "j.jsonl")
    assert {a: x.parent for a, x in s.agents.items()} == expect
    assert all(x.spawned_by is None for x in s.agents.values()) and s.agents.get(
        "a", s.agents["main"]
    ).task in ("", "t")
