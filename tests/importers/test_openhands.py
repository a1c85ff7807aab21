"""The OpenHands importer: every corpus trajectory and conversation with its counts pinned, one
test per mapping rule on minimal V0 trajectories and V1 conversations, the commands, the fuzz."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from fuzz import check
from walkback.importers import detect, load, scores
from walkback.journal import scan
from walkback.timeline.details import (
    AgentEnd,
    AgentSpawn,
    ApprovalRequest,
    Compaction,
    Message,
    ModelResult,
    Other,
    RunStart,
    ToolCall,
    ToolResult,
    text_hash,
)
from walkback.timeline.kinds import INFERRED
from walkback.timeline.views import approvals, file_calls, file_change, files_summary

from walkback.cli import cli

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "openhands"
CONVERSATION = CORPUS / "v1-sdk-conversation-cd945624"
FILES = sorted(p for p in CORPUS.rglob("*") if p.is_file())
V1_KINDS = {"run_start": 1, "message": 4, "model_result": 3, "tool_call": 2, "tool_result": 2}
EXPECTED = {
    "v0-trajectories/basic.json": (
        {"message": 2, "model_result": 2, "tool_call": 1, "tool_result": 1, "run_end": 1},
        1,
    ),
    "v0-trajectories/basic_interactions.json": ({"message": 5, "model_result": 1, "run_end": 1}, 0),
    "v0-trajectories/wrong_initial_state.json": (
        {"message": 4, "model_result": 4, "tool_call": 3, "tool_result": 3, "run_end": 1},
        0,
    ),
    **{str(p.relative_to(CORPUS)): (V1_KINDS, 0) for p in FILES if p.is_relative_to(CONVERSATION)},
}
"""Per corpus file: events by kind and file-changing calls (one agent, no approvals, completed). An
event file or base_state.json loads its whole conversation."""


def test_the_openhands_corpus_is_there() -> None:
    assert sorted(str(p.relative_to(CORPUS)) for p in FILES) == sorted(EXPECTED)
    assert len([p for p in FILES if p.is_relative_to(CONVERSATION)]) == 9


@pytest.mark.parametrize("path", [*FILES, CONVERSATION], ids=lambda p: str(p.relative_to(CORPUS)))
def test_every_corpus_session_loads_with_its_counts(path: Path) -> None:
    kinds, changes = EXPECTED.get(str(path.relative_to(CORPUS)), (V1_KINDS, 0))
    s = load(path)
    assert s.format == "openhands" and dict(s.kinds()) == kinds and len(file_calls(s)) == changes
    assert len(s.agents) == 1 and s.status == "completed" and not s.pending() and not approvals(s)
    for i in range(len(s)):
        s.detail(i)
        s.where(i)


def test_the_v0_edit_is_a_created_file_with_its_hash_and_diff() -> None:
    s = load(CORPUS / "v0-trajectories" / "basic.json")
    (fc,) = (file_change(s, int(i)) for i in file_calls(s))
    assert fc is not None and fc.path == "/workspace/game_2048.py" and fc.pre == "absent"
    assert (
        fc.post == text_hash(fc.edit.post_text)
        and fc.edit.post_text
        and fc.edit.post_text.startswith("import random")
    )
    assert fc.patch and fc.patch.startswith("--- /workspace/game_2048.py")
    first, repeat = s.detail(1), s.detail(5)
    assert (
        isinstance(first, ModelResult)
        and first.usage.output_tokens == 1135
        and first.usage.cache_write_tokens == 3482
    )
    assert isinstance(repeat, ModelResult) and repeat.response_id != first.response_id


def test_the_v1_conversation_reads_usage_from_base_state() -> None:
    s = load(CONVERSATION)
    start = s.detail(0)
    assert (
        isinstance(start, RunStart)
        and start.model == "openai/gpt-4o-mini"
        and start.settings["tools"] == ["terminal"]
    )
    assert (
        start.workspace == "/workspace/project/software-agent-sdk"
        and start.settings["confirmation_policy"] == "NeverConfirm"
    )
    usage = [i for i in range(len(s)) if s.event(i).kind == "model_result"]
    assert [s.where(i).rsplit("/", 1)[-1] for i in usage] == ["0", "1", "2"]
    assert all("base_state.json#/stats/usage_to_metrics/agent/token_usages/" in s.where(i) for i in usage)
    second = s.detail(usage[1])
    assert isinstance(second, ModelResult) and (
        second.usage.input_tokens,
        second.usage.cache_read_tokens,
    ) == (157, 3712)
    run = s.detail(5)
    assert isinstance(run, ToolResult) and run.exit_code == 0 and s.event(5).ref == 4


# -- V0 mapping rules -----------------------------------------------------------------------------
def meta(cid: str, rid: str = "", *, usage: dict[str, Any] | None = None) -> dict[str, Any]:
    response = {
        "id": rid,
        "model": "m",
        "choices": [{"finish_reason": "tool_calls", "message": {"content": "x"}}],
    }
    if usage is not None:
        response["usage"] = usage
    return {"function_name": "execute_bash", "tool_call_id": cid, "model_response": response}


def action(eid: int, act: str, source: str = "agent", **fields: Any) -> dict[str, Any]:
    return {
        "id": eid,
        "timestamp": "2025-01-27T22:45:00.000000",
        "source": source,
        "message": "",
        "action": act,
        **fields,
    }


def observation(eid: int, obs: str, cause: int | None, content: str = "", **fields: Any) -> dict[str, Any]:
    rec = {
        "id": eid,
        "timestamp": "2025-01-27T22:45:01.000000",
        "source": "agent",
        "observation": obs,
        "content": content,
    }
    return {**rec, **({"cause": cause} if cause is not None else {}), **fields}


def trajectory(tmp_path: Path, *events: Any, name: str = "traj.json") -> Path:
    path = tmp_path / name
    path.write_bytes(orjson.dumps(list(events), option=orjson.OPT_INDENT_2))
    return path


def kinds(s: Any) -> list[str]:
    return [s.event(i).kind for i in range(len(s))]


USAGE = {"prompt_tokens": 100, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 60}}


def test_v0_commands_pair_by_cause_with_their_exit_codes_and_usage_once(tmp_path: Path) -> None:
    s = load(
        trajectory(
            tmp_path,
            action(0, "message", "user", args={"content": "run the tests"}),
            action(
                1,
                "run",
                args={"command": "pytest", "thought": "let me run them"},
                tool_call_metadata=meta("c", "r", usage=USAGE),
            ),
            observation(
                2,
                "run",
                1,
                "1 failed",
                extras={"metadata": {"exit_code": 1}},
                tool_call_metadata=meta("c", "r", usage=USAGE),
            ),
            action(3, "run", args={"command": "ls"}, tool_call_metadata=meta("d", "r2", usage=USAGE)),
            observation(4, "run", 3, "a b", extras={"metadata": {"exit_code": 0}}),
        )
    )
    assert kinds(s) == [
        "message",
        "model_result",
        "message",
        "tool_call",
        "tool_result",
        "model_result",
        "tool_call",
        "tool_result",
    ]
    assert s.task == "run the tests" and s.where(3).endswith("traj.json#/1")
    assert (s.event(3).target, s.event(3).status, s.event(6).status, s.event(4).ref) == (
        "pytest",
        "failed",
        "ok",
        3,
    )
    call, out, used, thought = s.detail(3), s.detail(4), s.detail(1), s.detail(2)
    assert (
        isinstance(call, ToolCall)
        and call.command == "pytest"
        and call.call_id == "c"
        and call.name == "execute_bash"
    )
    assert isinstance(out, ToolResult) and out.exit_code == 1 and not out.ok
    assert isinstance(used, ModelResult) and (used.usage.input_tokens, used.usage.cache_read_tokens) == (
        40,
        60,
    )
    assert isinstance(thought, Message) and thought.text == "let me run them"


def test_v0_str_replace_edit_hashes_the_file_before_and_after(tmp_path: Path) -> None:
    args = {"command": "str_replace", "path": "/workspace/a.py", "old_str": "1", "new_str": "2"}
    extras = {
        "path": "/workspace/a.py",
        "prev_exist": True,
        "old_content": "a = 1\n",
        "new_content": "a = 2\n",
    }
    diff = "--- /workspace/a.py\n+++ /workspace/a.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n"
    s = load(
        trajectory(tmp_path, action(0, "edit", args=args), observation(1, "edit", 0, diff, extras=extras))
    )
    (fc,) = (file_change(s, int(i)) for i in file_calls(s))
    assert fc is not None and (fc.pre, fc.post) == (text_hash("a = 1\n"), text_hash("a = 2\n"))
    assert (fc.edit.old_string, fc.edit.new_string, fc.patch, fc.edit.operation) == ("1", "2", diff, "update")
    viewed = load(trajectory(tmp_path, action(0, "edit", args={**args, "command": "view"}), name="v.json"))
    assert not len(file_calls(viewed))


def test_v0_confirmation_requests_and_their_answers_are_approvals(tmp_path: Path) -> None:
    ask = {"command": "rm -rf /tmp/x", "confirmation_state": "awaiting_confirmation", "security_risk": 2}
    s = load(
        trajectory(
            tmp_path,
            action(1, "run", args=ask, tool_call_metadata=meta("a")),
            action(2, "run", args={**ask, "confirmation_state": "confirmed"}, tool_call_metadata=meta("a")),
            observation(3, "run", 2, "", extras={"metadata": {"exit_code": 0}}),
            action(4, "run", args={**ask, "command": "shutdown"}, tool_call_metadata=meta("b")),
            action(
                5,
                "run",
                args={**ask, "command": "shutdown", "confirmation_state": "rejected"},
                tool_call_metadata=meta("b"),
            ),
            observation(6, "user_rejected", 5, "Action has been rejected by the user"),
        )
    )
    assert kinds(s) == [
        "tool_call", "approval_request", "approval_decision", "tool_result",
        "tool_call", "approval_request", "approval_decision", "tool_result",
    ]  # fmt: skip
    first, second = approvals(s)
    assert (first.decision, first.gated, first.approver, second.decision, second.gated) == (
        "approved",
        0,
        "user",
        "denied",
        4,
    )
    assert (s.event(0).status, s.event(3).ref, s.event(4).status, s.event(7).ref, s.event(7).status) == (
        "ok",
        0,
        "denied",
        4,
        "denied",
    )
    req = s.detail(1)
    assert isinstance(req, ApprovalRequest) and "security risk 2" in req.reason


def test_v0_a_rejection_without_the_action_again_still_answers_the_request(tmp_path: Path) -> None:
    ask = {"command": "make", "confirmation_state": "awaiting_confirmation"}
    s = load(
        trajectory(
            tmp_path,
            action(1, "run", args=ask, tool_call_metadata=meta("a")),
            observation(2, "user_rejected", 1, "rejected", tool_call_metadata=meta("a")),
            action(3, "run", args={"command": "ls", "confirmation_state": "rejected"}),
        )
    )
    assert kinds(s) == [
        "tool_call",
        "approval_request",
        "approval_decision",
        "tool_result",
        "tool_call",
        "approval_decision",
    ]
    first, second = approvals(s)
    assert (first.request, first.decision, second.request, second.decision) == (1, "denied", 4, "denied")
    ran_path = trajectory(
        tmp_path,
        action(1, "run", args=ask, tool_call_metadata=meta("a")),
        observation(2, "run", 1, "", tool_call_metadata=meta("a")),
        name="ran.json",
    )
    asked = load(ran_path)
    (ran,) = approvals(asked)
    assert ran.decision == "approved" and ran.inferred and asked.table.flags[2] & INFERRED


def test_v0_delegates_are_subagents_with_their_own_events(tmp_path: Path) -> None:
    s = load(
        trajectory(
            tmp_path,
            action(1, "delegate", args={"agent": "BrowsingAgent", "inputs": {"task": "find the docs"}}),
            action(2, "browse", args={"url": "https://docs.test"}),
            observation(3, "browse", 2, "<html>"),
            observation(4, "delegate", 1, "found them", extras={"outputs": {"content": "found them"}}),
            action(5, "finish", args={"final_thought": "done"}),
        )
    )
    assert kinds(s) == ["agent_spawn", "tool_call", "tool_result", "agent_end", "run_end"]
    child = s.agents["delegate-1"]
    assert (child.parent, child.spawned_by, child.task, child.label, child.outcome) == (
        "main", 0, "find the docs", "BrowsingAgent", "completed",
    )  # fmt: skip
    assert [s.event(i).agent for i in range(len(s))] == [
        "main",
        "delegate-1",
        "delegate-1",
        "main",
        "main",
    ]
    spawn, end = s.detail(0), s.detail(3)
    assert isinstance(spawn, AgentSpawn) and spawn.agent_type == "BrowsingAgent"
    assert isinstance(end, AgentEnd) and end.summary == "found them" and s.event(3).ref == 0
    assert s.status == "completed" and s.event(1).target == "https://docs.test"


def test_v0_state_notes_errors_damage_and_a_crash(tmp_path: Path) -> None:
    s = load(
        trajectory(
            tmp_path,
            action(1, "change_agent_state", args={"agent_state": "running"}),
            observation(2, "agent_state_changed", None, extras={"agent_state": "awaiting_user_input"}),
            observation(3, "error", None, "the runtime died"),
            "not an event",
            action(4, "run", args={"command": "make"}),
        )
    )
    assert kinds(s) == ["other", "other", "error", "integrity", "tool_call"]
    note = s.detail(1)
    assert isinstance(note, Other) and note.summary == "agent state: awaiting_user_input"
    assert s.pending() == [4] and s.status == "crashed"


def test_a_v0_document_that_is_not_a_list_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text('[{"id": 0, "timestamp": "2025-01-01T00:00:00", "source": "user", "action": "message",')
    result = CliRunner().invoke(cli, ["show", str(path)])
    assert (
        result.exit_code == 2 and "not a JSON document" in result.output and "Traceback" not in result.output
    )


# -- V1 mapping rules -----------------------------------------------------------------------------
def conversation(tmp_path: Path, *events: dict[str, Any], policy: dict[str, Any] | None = None) -> Path:
    folder = tmp_path / "conv"
    (folder / "events").mkdir(parents=True)
    usages = [
        {
            "model": "m",
            "prompt_tokens": 10,
            "completion_tokens": 2,
            "cache_read_tokens": 4,
            "response_id": "r1",
        }
    ]
    state = {
        "id": "conv-1",
        "agent": {"llm": {"model": "m"}, "tools": [{"name": "terminal"}]},
        "workspace": {"working_dir": "/w"},
        "execution_status": "running",
        "confirmation_policy": policy or {"kind": "NeverConfirm"},
        "stats": {"usage_to_metrics": {"agent/x": {"token_usages": usages}}},
    }
    (folder / "base_state.json").write_bytes(orjson.dumps(state))
    for k, ev in enumerate(events):
        (folder / "events" / f"event-{k:05d}-{k:08x}-0000-0000-0000-000000000000.json").write_bytes(
            orjson.dumps(ev)
        )
    return folder


def v1(kind: str, eid: str, **fields: Any) -> dict[str, Any]:
    return {"id": eid, "timestamp": "2026-02-05T11:24:45.000000", "source": "agent", "kind": kind, **fields}


def act(
    eid: str, action: dict[str, Any], risk: str = "LOW", tool: str = "terminal", **fields: Any
) -> dict[str, Any]:
    return v1("ActionEvent", eid, action=action, tool_name=tool, tool_call_id=f"t-{eid}", security_risk=risk,
              thought=[{"type": "text", "text": "hm"}], **fields)  # fmt: skip


def obs(eid: str, action_id: str, kind: str = "ObservationEvent", **observation: Any) -> dict[str, Any]:
    return v1(
        kind,
        eid,
        action_id=action_id,
        tool_call_id=f"t-{action_id}",
        tool_name="terminal",
        observation=observation,
    )


def test_v1_actions_pair_with_observations_and_usage_comes_once(tmp_path: Path) -> None:
    user = {"role": "user", "content": [{"type": "text", "text": "do it"}]}
    s = load(
        conversation(
            tmp_path,
            v1("MessageEvent", "m0", source="user", llm_message=user),
            act("a1", {"kind": "TerminalAction", "command": "false"}, llm_response_id="r1"),
            obs("o1", "a1", content=[{"type": "text", "text": "no"}], exit_code=1),
            act("a2", {"kind": "TerminalAction", "command": "true"}, llm_response_id="r1"),
            obs("o2", "a2", exit_code=0),
        )
    )
    assert kinds(s) == [
        "run_start",
        "message",
        "model_result",
        "message",
        "tool_call",
        "tool_result",
        "message",
        "tool_call",
        "tool_result",
    ]
    assert s.task == "do it" and s.status == "unknown" and s.agents["main"].run == "conv-1"
    assert (s.event(4).status, s.event(7).status, s.event(5).ref, s.event(8).ref) == ("failed", "ok", 4, 7)
    assert s.where(2).endswith("base_state.json#/stats/usage_to_metrics/agent~1x/token_usages/0")
    result, thought = s.detail(5), s.detail(3)
    assert isinstance(result, ToolResult) and result.exit_code == 1 and result.output == "no"
    assert isinstance(thought, Message) and thought.text == "hm"


def test_v1_file_editor_changes_are_file_changes(tmp_path: Path) -> None:
    create = {"kind": "FileEditorAction", "command": "create", "path": "/w/n.txt", "file_text": "hi\n"}
    s = load(
        conversation(
            tmp_path,
            act("a", create, tool="file_editor"),
            obs("o", "a", path="/w/n.txt", prev_exist=False, old_content=None, new_content="hi\n"),
        )
    )
    (fc,) = (file_change(s, int(i)) for i in file_calls(s))
    assert fc is not None and (fc.path, fc.pre, fc.post, fc.edit.operation) == (
        "n.txt",
        "absent",
        text_hash("hi\n"),
        "create",
    )
    assert files_summary(s)[0]["last_post"] == text_hash("hi\n")


@pytest.mark.parametrize(
    ("policy", "risks", "asked"),
    [
        ({"kind": "ConfirmRisky"}, ["LOW", "HIGH", "UNKNOWN"], [False, True, True]),
        (
            {"kind": "ConfirmRisky", "threshold": "MEDIUM", "confirm_unknown": False},
            ["MEDIUM", "UNKNOWN"],
            [True, False],
        ),
        ({"kind": "AlwaysConfirm"}, ["LOW"], [True]),
        ({"kind": "NeverConfirm"}, ["HIGH"], [False]),
    ],
)
def test_v1_confirmation_policies_infer_approval_requests(
    tmp_path: Path, policy: dict[str, Any], risks: list[str], asked: list[bool]
) -> None:
    events = [act(f"a{k}", {"kind": "TerminalAction", "command": "x"}, risk=r) for k, r in enumerate(risks)]
    s = load(conversation(tmp_path, *events, policy=policy))
    requested = [a.gated for a in approvals(s)]
    calls = [i for i in range(len(s)) if s.event(i).kind == "tool_call"]
    assert requested == [c for c, yes in zip(calls, asked, strict=True) if yes]
    assert all(s.table.flags[a.request] & INFERRED for a in approvals(s))


def test_v1_rejections_deny_and_observations_approve(tmp_path: Path) -> None:
    s = load(
        conversation(
            tmp_path,
            act("a1", {"kind": "TerminalAction", "command": "rm -rf /"}, risk="HIGH"),
            v1("UserRejectObservation", "r", action_id="a1", tool_call_id="t-a1", rejection_reason="no way"),
            act("a2", {"kind": "TerminalAction", "command": "ls"}, risk="HIGH"),
            obs("o2", "a2", exit_code=0),
            policy={"kind": "ConfirmRisky"},
        )
    )
    denied, approved = approvals(s)
    assert (denied.decision, denied.approver, denied.reason, denied.inferred) == (
        "denied",
        "user",
        "no way",
        True,
    )
    assert (approved.decision, approved.inferred) == ("approved", True)
    assert s.event(denied.gated).status == "denied"
    req = s.detail(denied.request)
    assert isinstance(req, ApprovalRequest) and req.policy == "ConfirmRisky" and "HIGH" in req.reason


def test_v1_errors_condensation_unknown_kinds_and_damaged_files(tmp_path: Path) -> None:
    folder = conversation(
        tmp_path,
        act("a", {"kind": "TerminalAction", "command": "x"}),
        v1("AgentErrorEvent", "e", tool_call_id="t-a", tool_name="terminal", error="tool crashed"),
        v1("AgentErrorEvent", "e2", error="no tool"),
        v1("Condensation", "c", forgotten_event_ids=["a", "e"], summary=""),
        v1("BrandNewEvent", "n"),
    )
    (folder / "events" / "event-00005-ffffffff-0000-0000-0000-000000000000.json").write_text("{ torn")
    s = load(folder)
    assert kinds(s) == [
        "run_start",
        "message",
        "tool_call",
        "tool_result",
        "error",
        "compaction",
        "other",
        "integrity",
    ]
    assert s.event(2).status == "failed" and s.event(7).status == "corrupt"
    squeezed = s.detail(5)
    assert isinstance(squeezed, Compaction) and squeezed.summary == "2 events forgotten"


def test_v1_delegation_spawns_subagents_from_its_call(tmp_path: Path) -> None:
    spawn = {
        "kind": "DelegateAction",
        "command": "spawn",
        "ids": ["lint", "docs"],
        "tasks": ["lint it", "doc it"],
    }
    s = load(conversation(tmp_path, act("d", spawn, tool="delegate")))
    assert {k: (a.parent, a.spawned_by, a.task) for k, a in s.agents.items() if k != "main"} == {
        "delegate-lint": ("main", 2, "lint it"),
        "delegate-docs": ("main", 2, "doc it"),
    }


def test_an_event_file_or_base_state_loads_the_whole_conversation(tmp_path: Path) -> None:
    folder = conversation(
        tmp_path, act("a", {"kind": "TerminalAction", "command": "x"}), obs("o", "a", exit_code=0)
    )
    files = sorted((folder / "events").iterdir())
    for path in (folder, folder / "base_state.json", *files):
        s = load(path)
        assert kinds(s) == ["run_start", "message", "tool_call", "tool_result"], path
    stray = tmp_path / files[0].name
    stray.write_bytes(files[0].read_bytes())
    assert dict((n, v) for v, n in scores(stray))["openhands"] == 0


def test_detection_leaves_other_json_lists_alone(tmp_path: Path) -> None:
    for name, doc in (
        ("numbers.json", [1, 2]),
        ("inspect.json", [{"event": "model", "timestamp": "2025-01-01T00:00:00"}]),
        ("steps.json", [{"action": "ls", "observation": "a"}]),
    ):
        path = tmp_path / name
        path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
        assert dict((n, v) for v, n in scores(path))["openhands"] == 0, name
    path = trajectory(tmp_path, action(0, "message", "user", args={"content": "hi"}))
    assert detect(path).name == "openhands"


# -- the commands on real files -------------------------------------------------------------------
@pytest.mark.parametrize("path", [*FILES, CONVERSATION], ids=lambda p: str(p.relative_to(CORPUS)))
def test_show_json_and_import_work_on_every_session(path: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    shown = runner.invoke(cli, ["show", "--json", str(path)])
    assert shown.exit_code == 0, shown.output
    data = orjson.loads(shown.output)
    kinds_, _ = EXPECTED.get(str(path.relative_to(CORPUS)), (V1_KINDS, 0))
    assert data["format"] == "openhands" and data["events"] == sum(kinds_.values())
    done = runner.invoke(cli, ["import", str(path), "-o", str(tmp_path / "run")])
    assert done.exit_code == 0, done.output
    res = scan(tmp_path / "run" / "journal.jsonl")
    assert res.intact and res.header is not None and res.header["source"]["format"] == "openhands"


# -- mutation fuzz --------------------------------------------------------------------------------
V0 = sorted((CORPUS / "v0-trajectories").glob("*.json"))
V1_FILES = [str(p.relative_to(CONVERSATION)) for p in FILES if p.is_relative_to(CONVERSATION)]


@pytest.mark.parametrize("path", V0, ids=lambda p: p.name)
def test_mutated_trajectories_never_raise_a_traceback(path: Path) -> None:
    assert check(path, 300) == []


@pytest.mark.parametrize("target", V1_FILES)
def test_mutated_conversations_never_raise_a_traceback(target: str) -> None:
    assert check(CONVERSATION, 300, target=target) == []


@pytest.mark.soak
def test_ten_thousand_mutated_trajectories_never_raise_a_traceback() -> None:
    assert check(CORPUS / "v0-trajectories" / "wrong_initial_state.json", 10_000) == []


@pytest.mark.soak
def test_ten_thousand_mutated_conversations_never_raise_a_traceback() -> None:
    assert check(CONVERSATION, 10_000, target=[t for t in V1_FILES if "event-00002" in t][0]) == []
