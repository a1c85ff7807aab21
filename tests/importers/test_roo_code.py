"""Roo Code task folders: read as ``roo-code`` (Cline's stay ``cline``), and a ``newTask`` call's
subtask — the sibling task folder whose first message is the call's content — is the caller's
subagent, in the tree, the viewer's lanes and the exports, its ``subtask_result`` closing the call.
The folders are built from Roo Code's source by ``test_roo_code/make_fixtures.py``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from fuzz import check
from walkback.importers import detect, load
from walkback.timeline.details import ApprovalDecision, RunEnd, ToolCall, ToolResult
from walkback.viewer.components.timeline_chart import Axis, spawn_lines

from walkback.cli import cli

HERE = Path(__file__).parent
TASKS = HERE / "test_roo_code" / "tasks"
PARENT, CHILD, GRANDCHILD, SECOND, OTHER, EARLIER = sorted(p.name for p in TASKS.iterdir())
CLINE_TASK = HERE / "test_cline" / "1733145600000"
ROO_TASK = HERE / "test_cline" / "roo-8d2e41f0-crashed"


def agent(name: str) -> str:
    return f"task-{name}"


def calls(s: object, tool: str) -> list[int]:
    return [i for i in range(len(s)) if s.event(i).kind == "tool_call" and s.event(i).tool == tool]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        (TASKS / PARENT, "roo-code"),
        (TASKS / PARENT / "ui_messages.json", "roo-code"),
        (TASKS / CHILD / "api_conversation_history.json", "roo-code"),
        (ROO_TASK, "roo-code"),
        (CLINE_TASK, "cline"),
        (CLINE_TASK / "ui_messages.json", "cline"),
    ],
    ids=["parent", "ui file", "api file", "crashed roo task", "cline task", "cline ui file"],
)
def test_roo_tasks_read_as_roo_code_and_clines_as_cline(path: Path, fmt: str) -> None:
    assert detect(path).name == fmt
    assert load(path).format == fmt


def test_a_cline_shaped_task_in_roos_storage_folder_is_roo_code(tmp_path: Path) -> None:
    moved = tmp_path / "rooveterinaryinc.roo-cline" / "tasks" / CLINE_TASK.name
    shutil.copytree(CLINE_TASK, moved)
    assert detect(moved).name == "roo-code" and detect(CLINE_TASK).name == "cline"


def test_each_new_task_call_has_its_subtask_as_a_subagent() -> None:
    s = load(TASKS / PARENT)
    assert list(s.agents) == ["main", agent(CHILD), agent(SECOND), agent(GRANDCHILD)]
    assert agent(OTHER) not in s.agents and agent(EARLIER) not in s.agents  # not started by a call
    child, second, grandchild = s.agents[agent(CHILD)], s.agents[agent(SECOND)], s.agents[agent(GRANDCHILD)]
    assert (child.parent, second.parent, grandchild.parent) == ("main", "main", agent(CHILD))
    for sub in (child, second, grandchild):
        call = s.event(sub.spawned_by or 0)
        assert call.kind == "tool_call" and call.tool == "new_task" and call.agent == sub.parent
        detail = s.detail(sub.spawned_by or 0)
        assert isinstance(detail, ToolCall) and sub.task == detail.arguments["content"]
    assert (child.label, grandchild.label, child.run) == ("💻 Code", "🪲 Debug", CHILD)
    assert (child.outcome, grandchild.outcome) == ("completed", "completed")
    written = [i for i in calls(s, "write_to_file") if s.event(i).agent == agent(CHILD)]
    assert [s.event(i).target for i in written] == ["greet.py"]


def test_subtask_result_closes_the_call_and_a_subtask_still_running_leaves_it_open() -> None:
    s = load(TASKS / PARENT)
    first, last = [i for i in calls(s, "new_task") if s.event(i).agent == "main"]
    (result,) = [i for i in range(len(s)) if s.event(i).ref == first and s.event(i).kind == "tool_result"]
    assert s.event(first).status == "ok" and s.event(result).type == "say:subtask_result"
    out = s.detail(result)
    assert isinstance(out, ToolResult) and out.ok and out.output.startswith("Created greet.py")
    decision = next(
        i for i in range(len(s)) if s.event(i).kind == "approval_decision" and s.event(i).agent == "main"
    )
    assert isinstance(s.detail(decision), ApprovalDecision)
    assert s.pending() == [last] and s.status == "crashed"  # killed while the docs subtask ran
    ends = [s.detail(i) for i in range(len(s)) if s.event(i).kind == "run_end"]
    assert (
        all(isinstance(e, RunEnd) and "handed its result back" in e.reason for e in ends) and len(ends) == 2
    )


def test_the_viewer_lanes_and_spawn_lines_show_every_subtask() -> None:
    s = load(TASKS / PARENT)
    axis = Axis(s)
    assert axis.lanes == ["main", agent(CHILD), agent(SECOND), agent(GRANDCHILD)]
    lines = spawn_lines(s, axis)
    assert lines is not None and lines["x"].count(None) == 3  # one segment per subtask


def test_the_exports_carry_the_subtasks(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "roo.otlp.json"
    done = runner.invoke(cli, ["export", "otlp", str(TASKS / PARENT), "-o", str(out)])
    assert done.exit_code == 0, done.output
    spans = [
        sp
        for rs in orjson.loads(out.read_bytes())["resourceSpans"]
        for ss in rs["scopeSpans"]
        for sp in ss["spans"]
    ]
    by_id = {sp["spanId"]: sp for sp in spans}
    agents = [sp for sp in spans if sp["name"].startswith("invoke_agent")]
    assert len(agents) == 4 and sum(1 for sp in agents if sp.get("parentSpanId") in by_id) == 3
    csv = tmp_path / "roo.csv"
    assert runner.invoke(cli, ["export", "csv", str(TASKS / PARENT), "-o", str(csv)]).exit_code == 0
    rows = csv.read_text().splitlines()
    assert any(f",{agent(GRANDCHILD)},{agent(CHILD)}," in r for r in rows)
    shown = orjson.loads(runner.invoke(cli, ["show", "--json", str(TASKS / PARENT)]).output)
    assert shown["format"] == "roo-code" and [a["parent"] for a in shown["agents"]] == [
        None, "main", "main", agent(CHILD),
    ]  # fmt: skip


def test_our_own_orphans_a_call_without_its_folder_and_a_subtask_that_never_reported(tmp_path: Path) -> None:
    """Our own case: the subtask folders are gone but one, which never handed its result back."""
    tasks = tmp_path / "tasks"
    for name in (PARENT, SECOND):
        shutil.copytree(TASKS / name, tasks / name)
    s = load(tasks / PARENT)
    first, last = [i for i in calls(s, "new_task") if s.event(i).agent == "main"]
    assert list(s.agents) == ["main", agent(SECOND)] and s.agents[agent(SECOND)].spawned_by == last
    assert s.event(first).status == "ok"  # its subtask_result says so, folder or not
    assert s.pending() == [last]
    shown = CliRunner().invoke(cli, ["show", str(tasks / PARENT)])
    assert shown.exit_code == 0 and "  format      roo-code" in shown.output


def test_mutated_roo_tasks_never_raise_a_traceback() -> None:
    assert check(TASKS / CHILD, 150) == []


def test_a_subtask_given_a_long_task_is_found_past_the_first_64_kib(tmp_path: Path) -> None:
    """Our own case: the newTask content is 100 KB (a pasted spec), longer than a head."""
    spec = "Implement the spec below.\n" + "- requirement\n" * 8000
    tasks = tmp_path / "tasks"
    parent, child = tasks / "p", tasks / "c"
    for folder in (parent, child):
        folder.mkdir(parents=True)
    call = {"tool": "newTask", "mode": "code", "content": spec}
    (parent / "ui_messages.json").write_text(json.dumps([
        {"ts": 1000, "type": "say", "say": "text", "text": "delegate it"},
        {"ts": 2000, "type": "ask", "ask": "tool", "text": json.dumps(call), "isAnswered": True},
    ]))  # fmt: skip
    (child / "ui_messages.json").write_text(
        json.dumps([{"ts": 2500, "type": "say", "say": "text", "text": spec}])
    )
    s = load(parent)
    assert list(s.agents) == ["main", "task-c"] and s.agents["task-c"].parent == "main"
