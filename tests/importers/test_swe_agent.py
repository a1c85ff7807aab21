"""The SWE-agent importer: every corpus trajectory with its counts pinned, one test per mapping
rule on minimal .traj (0.x, 1.x), the commands, the fuzz (mini-swe-agent: test_mini_swe_agent.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from fuzz import check
from walkback.importers import detect, load, scores
from walkback.journal import scan
from walkback.timeline.details import Message, ModelResult, RunEnd, ToolCall, ToolResult, text_hash
from walkback.timeline.views import file_calls, file_change, files_summary

from walkback.cli import cli

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "swe-agent"
FILES = sorted(p for p in CORPUS.rglob("*") if p.is_file() and "mini-swe-agent" not in p.parts)
EXPECTED = {
    "marshmallow-1867.function_calling_replace.traj": (
        {"run_start": 1, "message": 13, "model_result": 1, "tool_call": 12, "tool_result": 11, "run_end": 1},
        ["src/marshmallow/fields.py"],
    ),
    "swe-agent__test-repo-i1.traj": (
        {"run_start": 1, "message": 8, "model_result": 1, "tool_call": 6, "tool_result": 5, "run_end": 1},
        ["tests/missing_colon.py"],
    ),
}
"""Per corpus file: events by kind and the files the submission changes (one agent, no approvals,
completed). Tool calls = one per step or command, plus one per submitted file."""


def test_the_swe_agent_corpus_is_there() -> None:
    assert sorted(str(p.relative_to(CORPUS)) for p in FILES) == sorted(EXPECTED)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_every_corpus_trajectory_loads_with_its_counts(path: Path) -> None:
    kinds, changed = EXPECTED[str(path.relative_to(CORPUS))]
    s = load(path)
    assert s.format == "swe-agent" and dict(s.kinds()) == kinds
    assert [f["path"] for f in files_summary(s)] == changed
    assert len(s.agents) == 1 and s.status == "completed" and not s.pending()
    for i in range(len(s)):
        s.detail(i)
        s.where(i)


def test_the_1x_trajectory_merges_history_and_steps() -> None:
    s = load(CORPUS / "marshmallow-1867.function_calling_replace.traj")
    assert s.task.startswith("We're currently solving the following issue")
    call, result = s.detail(4), s.detail(5)
    assert isinstance(call, ToolCall) and call.name == "create" and call.command == "create reproduce.py"
    assert call.call_id == "call_cyI71DYnRdoLHWwtZgIaW2wr"
    assert s.where(4).endswith("#/trajectory/0") and s.where(5).endswith("#/history/3")
    assert isinstance(result, ToolResult) and result.call_id == "call_cyI71DYnRdoLHWwtZgIaW2wr"
    (fc,) = (file_change(s, int(i)) for i in file_calls(s))
    assert fc is not None and fc.tool == "submit" and fc.patch and "round to nearest int" in fc.patch
    stats = next(s.detail(i) for i in range(len(s)) if s.event(i).kind == "model_result")
    assert isinstance(stats, ModelResult) and stats.model == "gpt-4o" and stats.cost == 0


def test_the_0x_trajectory_has_its_cost_and_the_last_step_its_own_result() -> None:
    s = load(CORPUS / "swe-agent__test-repo-i1.traj")
    stats = next(s.detail(i) for i in range(len(s)) if s.event(i).kind == "model_result")
    assert isinstance(stats, ModelResult) and stats.cost == 0.53839 and stats.usage.input_tokens == 52861
    assert s.event(2).type == "demo" and s.where(18).endswith("#/trajectory/4")


# -- .traj mapping rules --------------------------------------------------------------------------
def traj(tmp_path: Path, doc: dict[str, Any], name: str = "x.traj") -> Path:
    path = tmp_path / name
    path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    return path


def step(action: str, observation: str, thought: str = "") -> dict[str, Any]:
    return {
        "action": action,
        "observation": observation,
        "thought": thought,
        "response": thought,
        "state": "{}",
    }


def kinds(s: Any) -> list[str]:
    return [s.event(i).kind for i in range(len(s))]


DIFF = (
    "diff --git a/new.py b/new.py\nnew file mode 100644\nindex 0000000..1111111\n"
    "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+a = 1\n+b = 2\n"
    "diff --git a/old.py b/old.py\ndeleted file mode 100644\n--- a/old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
    "diff --git a/src/m.py b/src/m.py\n--- a/src/m.py\n+++ b/src/m.py\n@@ -1 +1 @@\n-p\n+q\n"
)


def test_history_and_steps_merge_in_conversation_order(tmp_path: Path) -> None:
    history = [
        {"role": "system", "content": "you are"},
        {"role": "user", "content": "demo", "is_demo": True},
        {"role": "user", "content": "fix the bug"},
        {"role": "assistant", "content": "look first", "thought": "look", "action": "ls\n"},
        {"role": "user", "content": "a b"},
        {"role": "assistant", "content": "done", "thought": "done", "action": "submit\n"},
    ]
    info = {"exit_status": "submitted", "submission": DIFF, "model_stats": {"instance_cost": 0.5}}
    steps = [step("ls\n", "a b"), step("submit\n", DIFF)]
    doc = {"environment": "swe_main", "trajectory": steps, "history": history, "info": info}
    s = load(traj(tmp_path, doc))
    assert kinds(s) == [
        "run_start", "message", "message", "message", "message", "tool_call", "tool_result", "message",
        "tool_call", "tool_result", "model_result", "tool_call", "tool_call", "tool_call", "run_end",
    ]  # fmt: skip
    assert s.task == "fix the bug" and s.event(2).type == "demo"
    assert [(s.event(i).tool, s.event(i).ref) for i in (5, 6, 8, 9)] == [
        ("bash", None),
        ("", 5),
        ("submit", None),
        ("", 8),
    ]
    assert s.where(6).endswith("#/history/4") and s.where(9).endswith("#/trajectory/1")
    end = s.detail(14)
    assert isinstance(end, RunEnd) and end.status == "completed" and s.status == "completed"


def test_the_submission_is_one_file_change_per_file(tmp_path: Path) -> None:
    s = load(
        traj(
            tmp_path,
            {"trajectory": [], "history": [], "info": {"exit_status": "submitted", "submission": DIFF}},
        )
    )
    created, deleted, updated = (file_change(s, int(i)) for i in file_calls(s))
    assert created and (created.path, created.pre, created.post, created.edit.operation) == (
        "new.py", "absent", text_hash("a = 1\nb = 2\n"), "create",
    )  # fmt: skip
    assert deleted and (deleted.path, deleted.post, deleted.edit.operation) == ("old.py", "absent", "delete")
    assert (
        updated
        and updated.path == "src/m.py"
        and updated.patch
        and updated.patch.startswith("diff --git a/src/m.py")
    )
    assert updated.pre is None and updated.post is None  # the text around the diff is unknown
    assert [s.table.sub[i] for i in file_calls(s)] == [0, 1, 2]
    assert all(s.event(int(i)).status == "ok" for i in file_calls(s))


def test_steps_the_history_does_not_show_bring_their_own_thought_and_result(tmp_path: Path) -> None:
    history = [{"role": "assistant", "content": "hm", "action": "something else"}]
    doc = {"trajectory": [step("pytest", "1 passed", "run the tests")], "history": history}
    s = load(traj(tmp_path, doc))
    assert kinds(s) == ["message", "message", "tool_call", "tool_result"]
    thought, result = s.detail(1), s.detail(3)
    assert isinstance(thought, Message) and thought.text == "run the tests"
    assert isinstance(result, ToolResult) and result.output == "1 passed"
    assert [s.table.sub[i] for i in (1, 2, 3)] == [
        0,
        1,
        2,
    ] and s.status == "crashed"  # no info: it never ended


@pytest.mark.parametrize(
    ("exit_status", "status"),
    [("submitted (exit_cost)", "completed"), ("exit_context", "failed"), ("exit_forfeit", "cancelled")],
)
def test_the_exit_status_is_how_the_run_ended(tmp_path: Path, exit_status: str, status: str) -> None:
    s = load(traj(tmp_path, {"trajectory": [], "history": [], "info": {"exit_status": exit_status}}))
    assert s.status == status and kinds(s) == ["run_end"]


def test_damage_and_documents_that_are_not_trajectories(tmp_path: Path) -> None:
    s = load(traj(tmp_path, {"trajectory": [], "history": ["not a message"]}))
    assert kinds(s) == ["integrity"]
    path = traj(tmp_path, {"environment": "x", "trajectory": 3}, name="bad.traj")
    result = CliRunner().invoke(cli, ["show", str(path)])
    assert (
        result.exit_code == 2
        and "no trajectory or history array" in result.output
        and "Traceback" not in result.output
    )


def test_detection_leaves_other_json_documents_alone(tmp_path: Path) -> None:
    others = {
        "gemini.json": {"sessionId": "s", "projectHash": "p", "messages": []},
        "config.json": {"trajectory": "a string", "info": 1},
        "list.json": [{"id": 0, "timestamp": "t", "source": "user", "action": "message"}],
    }
    for name, doc in others.items():
        assert dict((n, v) for v, n in scores(traj(tmp_path, doc, name)))["swe-agent"] == 0, name  # type: ignore[arg-type]
    assert (
        detect(traj(tmp_path, {"environment": "e", "trajectory": [step("ls", "")]}, "run.json")).name
        == "swe-agent"
    )


# -- the commands on real files -------------------------------------------------------------------
@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_show_json_and_import_work_on_every_trajectory(path: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    shown = runner.invoke(cli, ["show", "--json", str(path)])
    assert shown.exit_code == 0, shown.output
    data = orjson.loads(shown.output)
    assert data["format"] == "swe-agent"
    assert data["events"] == sum(EXPECTED[str(path.relative_to(CORPUS))][0].values())
    done = runner.invoke(cli, ["import", str(path), "-o", str(tmp_path / "run")])
    assert done.exit_code == 0, done.output
    res = scan(tmp_path / "run" / "journal.jsonl")
    assert res.intact and res.header is not None and res.header["source"]["format"] == "swe-agent"


# -- mutation fuzz --------------------------------------------------------------------------------
@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_mutated_trajectories_never_raise_a_traceback(path: Path) -> None:
    assert check(path, 300) == []


@pytest.mark.soak
def test_ten_thousand_mutated_trajectories_never_raise_a_traceback() -> None:
    assert check(CORPUS / "swe-agent__test-repo-i1.traj", 10_000) == []
