"""The mini-swe-agent importer: the corpus's 2.x trajectory and a 1.x one built from mini's own
source (``test_mini_swe_agent/make_fixtures.py`` says where its shape comes from), each with its
counts pinned; the mapping rules of both generations on trajectories of our own; detection apart
from SWE-agent's ``.traj``; what ``show`` says; the fuzz."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from fuzz import check
from walkback.importers import detect, load, scores
from walkback.timeline.details import Message, ModelResult, RunEnd, ToolCall, ToolResult
from walkback.timeline.views import files_summary

from walkback.cli import cli

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "swe-agent"
V2 = CORPUS / "mini-swe-agent" / "astropy__astropy-12907.traj.json"
V1 = Path(__file__).parent / "test_mini_swe_agent" / "calc__calc-1.traj.json"
DIFF = (
    "diff --git a/new.py b/new.py\nnew file mode 100644\nindex 0000000..1111111\n"
    "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+a = 1\n+b = 2\n"
    "diff --git a/old.py b/old.py\ndeleted file mode 100644\n--- a/old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
    "diff --git a/src/m.py b/src/m.py\n--- a/src/m.py\n+++ b/src/m.py\n@@ -1 +1 @@\n-p\n+q\n"
)


def kinds(s: Any) -> list[str]:
    return [s.event(i).kind for i in range(len(s))]


def of_kind(s: Any, kind: str) -> list[int]:
    return [i for i in range(len(s)) if s.event(i).kind == kind]


# -- the two real shapes ---------------------------------------------------------------------------
def test_the_1x_trajectory_runs_each_bash_block_and_the_next_user_message_is_its_result() -> None:
    s = load(V1)
    assert s.format == "mini-swe-agent" and s.status == "completed" and not s.pending()
    assert s.kinds() == {"message": 32, "model_result": 30, "tool_call": 30, "tool_result": 28, "run_end": 1}
    calls = [i for i in of_kind(s, "tool_call") if s.event(i).tool == "bash"]
    results = of_kind(s, "tool_result")
    assert len(calls) == 28 and [s.event(r).ref for r in results] == calls  # 29 steps, one format error
    first, last = s.detail(calls[0]), s.detail(calls[-1])
    assert isinstance(first, ToolCall) and first.command == "ls -la" and s.event(calls[0]).target == "ls -la"
    assert isinstance(last, ToolCall) and last.command.startswith(
        "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
    )
    failed = [s.event(c).target for c in calls if s.event(c).status == "failed"]
    assert failed == [
        "python -m pytest --version",
        "python -m pytest -q",
        "python -m pytest -q --looponfail",  # timed out: no return code, not the submission
        "python -m pyflakes calc/ops.py",
    ]
    codes = [d.exit_code for d in (s.detail(r) for r in results) if isinstance(d, ToolResult)]
    assert codes[:3] == [0, 0, 0] and codes[6] == 1 and codes[-1] is None
    assert s.event(calls[13]).target.startswith("sed -i")  # the 14th step wrote two blocks: nothing ran
    texts = [d.text for d in (s.detail(i) for i in of_kind(s, "message")) if isinstance(d, Message)]
    assert sum(t.startswith("Please always provide EXACTLY ONE action") for t in texts) == 1
    assert [f["path"] for f in files_summary(s)] == ["calc/ops.py", "tests/test_ops.py"]
    totals = s.detail(of_kind(s, "model_result")[-1])
    assert (
        isinstance(totals, ModelResult) and totals.cost == 0.0213 and totals.text.startswith("29 API calls")
    )
    assert totals.model == "gpt-4.1-mini"
    end = s.detail(of_kind(s, "run_end")[0])
    assert isinstance(end, RunEnd) and (end.status, end.reason) == ("completed", "Submitted")


def test_the_2x_trajectory_counts_each_response_with_its_cost() -> None:
    s = load(V2)
    assert s.format == "mini-swe-agent" and s.status == "completed" and not s.pending()
    assert s.kinds() == {"message": 29, "model_result": 65, "tool_call": 65, "tool_result": 64, "run_end": 1}
    assert [f["path"] for f in files_summary(s)] == ["astropy/modeling/separable.py"]
    *responses, totals = (s.detail(i) for i in of_kind(s, "model_result"))
    costs = sum(r.cost or 0 for r in responses if isinstance(r, ModelResult))
    assert isinstance(totals, ModelResult) and totals.cost is not None
    assert abs(costs - totals.cost) < 1e-6 and totals.text.startswith("64 API calls")
    assert s.agents["main"].run == "astropy__astropy-12907"


@pytest.mark.parametrize("path", [V1, V2], ids=["1.x", "2.x"])
def test_show_says_the_exit_status_cost_api_calls_and_files(path: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    shown = runner.invoke(cli, ["show", str(path)])
    assert shown.exit_code == 0, shown.output
    want = {
        V1: ("29 API calls", "cost $0.0213", "2 changed: calc/ops.py, tests/test_ops.py"),
        V2: ("64 API calls", "cost $0.0428", "1 changed: astropy/modeling/separable.py"),
    }[path]
    assert "  format      mini-swe-agent\n" in shown.output and "completed (Submitted)" in shown.output
    assert all(w in shown.output for w in want), shown.output
    data = orjson.loads(runner.invoke(cli, ["show", "--json", str(path)]).output)
    assert data["format"] == "mini-swe-agent" and data["status"] == "completed"
    done = runner.invoke(cli, ["import", str(path), "-o", str(tmp_path / "run")])
    assert done.exit_code == 0, done.output


@pytest.mark.parametrize("path", [V1, V2], ids=["1.x", "2.x"])
def test_a_mini_trajectory_is_not_swe_agents_and_a_traj_is_not_minis(path: Path, tmp_path: Path) -> None:
    ranked = dict((n, v) for v, n in scores(path))
    assert detect(path).name == "mini-swe-agent" and ranked["swe-agent"] == 0
    traj = CORPUS / "swe-agent__test-repo-i1.traj"
    assert detect(traj).name == "swe-agent" and dict((n, v) for v, n in scores(traj))["mini-swe-agent"] == 0


# -- mapping rules on trajectories of our own -----------------------------------------------------
def mini(
    tmp_path: Path, messages: list[dict[str, Any]], info: dict[str, Any] | None = None, fmt: str = "1.1"
) -> Path:
    doc = {
        "info": info or {},
        "messages": messages,
        "trajectory_format": "mini-swe-agent-" + fmt if fmt else "mini-swe-agent-1",
        "instance_id": "i-1",
    }
    path = tmp_path / "i-1.traj.json"
    path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    return path


def response(cost: float = 0.01) -> dict[str, Any]:
    usage = {"prompt_tokens": 50, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 20}}
    choices = [{"finish_reason": "tool_calls"}]
    return {
        "response": {"id": "r", "model": "m", "usage": usage, "choices": choices},
        "cost": cost,
        "timestamp": 1780680349.44,
    }


def test_1x_limits_a_crash_and_the_fence_some_configs_use(tmp_path: Path) -> None:
    """Our own 1.x run: a ``mswea_bash_command`` block, a command that ran out of the step limit
    (the limit's empty user message answers nothing), and one left without a result."""
    messages = [
        {"role": "system", "content": "you are"},
        {"role": "user", "content": "\n<pr_description>\n  Fix  it\n"},
        {"role": "assistant", "content": "THOUGHT: look\n\n```mswea_bash_command\nls src\n```"},
        {"role": "user", "content": "<returncode>2</returncode>\n<output>\nls: src: No such file\n</output>"},
        {"role": "assistant", "content": "no command here"},
        {
            "role": "user",
            "content": "Please always provide EXACTLY ONE action in triple backticks, found 0 actions.",
        },
        {"role": "user", "content": ""},
    ]
    s = load(mini(tmp_path, messages, {"exit_status": "LimitsExceeded", "submission": ""}, fmt=""))
    assert kinds(s) == [
        "message", "message", "message", "tool_call", "tool_result",
        "message", "message", "message", "run_end",
    ]  # fmt: skip
    assert (s.event(3).target, s.event(3).status, s.event(4).ref) == ("ls src", "failed", 3)
    out = s.detail(4)
    assert isinstance(out, ToolResult) and out.exit_code == 2 and "No such file" in out.output
    assert s.status == "failed" and s.task.startswith("<pr_description>")
    shown = CliRunner().invoke(cli, ["show", str(tmp_path / "i-1.traj.json")])
    assert "failed (LimitsExceeded)" in shown.output and "  task        Fix  it\n" in shown.output
    crashed = messages[:3]  # killed while the command ran: no observation, no info
    doc = tmp_path / "c" / "i-1.traj.json"
    doc.parent.mkdir()
    doc.write_bytes(orjson.dumps({"messages": crashed, "trajectory_format": "mini-swe-agent-1"}))
    c = load(doc)
    assert c.status == "crashed" and [c.event(i).target for i in c.pending()] == ["ls src"]


def test_2x_tool_calls_results_usage_and_the_exit(tmp_path: Path) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
    messages = [
        {"role": "system", "content": "you are"},
        {"role": "user", "content": "fix it"},
        {"role": "assistant", "content": "look", "tool_calls": [call], "extra": response()},
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": "<returncode>2</returncode>",
            "extra": {"returncode": 2},
        },
        {
            "role": "assistant",
            "content": "",
            "extra": {**response(0.02), "actions": [{"command": "echo done"}]},
        },
        {"role": "exit", "content": DIFF, "extra": {"exit_status": "Submitted", "submission": DIFF}},
    ]
    s = load(mini(tmp_path, messages, {"exit_status": "Submitted", "submission": DIFF}))
    assert kinds(s) == [
        "message", "message", "message", "model_result", "tool_call", "tool_result",
        "model_result", "tool_call", "tool_result", "run_end", "tool_call", "tool_call", "tool_call",
    ]  # fmt: skip
    assert s.task == "fix it" and s.status == "completed" and not s.pending()
    assert (s.event(4).status, s.event(5).ref, s.event(7).target, s.event(8).ref) == (
        "failed",
        4,
        "echo done",
        7,
    )
    used, called, out = s.detail(3), s.detail(4), s.detail(5)
    assert isinstance(used, ModelResult)
    assert (used.usage.input_tokens, used.cost, used.model) == (30, 0.01, "m")
    assert isinstance(called, ToolCall) and (called.call_id, called.command) == ("c1", "ls")
    assert isinstance(out, ToolResult) and out.exit_code == 2 and s.event(2).ts is not None


def test_2x_text_mode_results_follow_their_commands_in_order(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": "```bash\nls\n```", "extra": {"actions": [{"command": "ls"}]}},
        {"role": "user", "content": "<returncode>0</returncode>", "extra": {"returncode": 0}},
    ]
    s = load(mini(tmp_path, messages))
    assert kinds(s) == ["message", "message", "tool_call", "tool_result", "run_end"] and s.event(3).ref == 2
    assert s.status == "unknown"  # neither an exit message nor an exit status


# -- mutation fuzz --------------------------------------------------------------------------------
@pytest.mark.parametrize("path", [V1, V2], ids=["1.x", "2.x"])
def test_mutated_trajectories_never_raise_a_traceback(path: Path) -> None:
    assert check(path, 200) == []
