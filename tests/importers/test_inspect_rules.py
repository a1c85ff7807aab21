"""The Inspect AI importer's mapping rules, one test each, on minimal logs written as Inspect writes
them (``inspect_logs``): ``.eval`` zips and ``.json`` documents."""

from __future__ import annotations

import os
from pathlib import Path

from inspect_logs import OLD, at, eval_log, event, json_log, rows, sample
from walkback.importers import load, parts
from walkback.timeline.details import (
    AgentSpawn,
    ApprovalDecision,
    Error,
    Message,
    ModelCall,
    ModelResult,
    Other,
    RunStart,
    TestResult,
    ToolCall,
    ToolResult,
    text_hash,
)
from walkback.timeline.views import approvals, file_calls, files_summary


def test_a_model_event_is_a_call_and_its_result_with_usage(tmp_path: Path) -> None:
    output = {
        "model": "gpt-4o-2024",
        "choices": [{"message": {"role": "assistant", "content": "Done."}, "stop_reason": "stop"}],
        "usage": {
            "input_tokens": 100,
            "output_tokens": 7,
            "total_tokens": 107,
            "input_tokens_cache_read": 60,
            "reasoning_tokens": 3,
        },
    }
    s = load(
        eval_log(
            tmp_path,
            sample(
                event(
                    "model",
                    1,
                    model="openai/gpt-4o",
                    input=[{"role": "user", "content": "Fix the bug"}],
                    output=output,
                    completed=at(3),
                ),
                event("model", 4, model="openai/gpt-4o", input=[], output={}, error="rate limited"),
                event("model", 5, model="openai/gpt-4o", input=[], output={}, pending=True),
            ),
        )
    )
    assert rows(s) == [
        ("model_call", "model", "", "", ""),
        ("model_result", "model", "", "", "ok"),
        ("model_call", "model", "", "", ""),
        ("model_result", "model", "", "", "failed"),
        ("model_call", "model", "", "", "pending"),
    ]
    assert s.event(1).ref == 0 and s.event(1).ts - s.event(0).ts == 2.0
    call, result = s.detail(0), s.detail(1)
    assert isinstance(call, ModelCall) and call.model == "openai/gpt-4o" and call.summary == "Fix the bug"
    assert isinstance(result, ModelResult) and result.text == "Done." and result.stop_reason == "stop"
    u = result.usage  # Inspect's input count includes the cache reads here (total = input + output)
    assert (u.input_tokens, u.cache_read_tokens, u.output_tokens, u.reasoning_tokens) == (40, 60, 7, 3)
    failed = s.detail(3)
    assert isinstance(failed, ModelResult) and failed.text == "error: rate limited"


def test_a_tool_event_is_a_call_and_its_result(tmp_path: Path) -> None:
    s = load(
        eval_log(
            tmp_path,
            sample(
                event(
                    "tool",
                    1,
                    id="c1",
                    function="bash",
                    arguments={"cmd": "pytest -q\nmore"},
                    result="2 passed",
                    completed=at(2),
                ),
                event(
                    "tool",
                    3,
                    id="c2",
                    function="bash",
                    arguments={"cmd": "false"},
                    result="",
                    error={"type": "unknown", "message": "exit 1"},
                    completed=at(4),
                ),
                event("tool", 5, id="c3", function="python", arguments={"code": "1/0"}, pending=True),
            ),
        )
    )
    assert rows(s) == [
        ("tool_call", "tool", "bash", "pytest -q", "ok"),
        ("tool_result", "tool", "", "", "ok"),
        ("tool_call", "tool", "bash", "false", "failed"),
        ("tool_result", "tool", "", "", "failed"),
        ("tool_call", "tool", "python", "1/0", "pending"),
    ]
    call = s.detail(0)
    assert isinstance(call, ToolCall) and call.command == "pytest -q\nmore" and call.call_id == "c1"
    bad = s.detail(3)
    assert isinstance(bad, ToolResult) and bad.ok is False and bad.error == "exit 1"
    assert s.pending() == [4]  # a call whose result never came


def test_an_editor_call_is_a_file_change_with_its_hash(tmp_path: Path) -> None:
    text = "print('hi')\n"
    s = load(
        eval_log(
            tmp_path,
            sample(
                event(
                    "tool",
                    1,
                    id="c1",
                    function="text_editor",
                    arguments={"command": "create", "path": "/repo/app.py", "file_text": text},
                    result="",
                    completed=at(2),
                ),
                event(
                    "tool",
                    3,
                    id="c2",
                    function="text_editor",
                    arguments={
                        "command": "str_replace",
                        "path": "/repo/app.py",
                        "old_str": "hi",
                        "new_str": "bye",
                    },
                    result="",
                    completed=at(4),
                ),
                event(
                    "tool",
                    5,
                    id="c3",
                    function="text_editor",
                    arguments={"command": "view", "path": "/repo/app.py"},
                    result=text,
                    completed=at(6),
                ),
            ),
        )
    )
    assert [int(i) for i in file_calls(s)] == [0, 2]
    create, replace = s.detail(0), s.detail(2)
    assert isinstance(create, ToolCall) and create.edit is not None
    assert create.edit.operation == "create" and create.edit.post == text_hash(text)
    assert isinstance(replace, ToolCall) and replace.edit is not None
    assert (replace.edit.old_string, replace.edit.new_string) == ("hi", "bye")
    assert files_summary(s) == [{"path": "/repo/app.py", "changes": 2, "first_pre": None, "last_post": None}]


def test_an_approval_event_is_a_request_and_its_decision_gating_the_call(tmp_path: Path) -> None:
    call = {"id": "c1", "function": "bash", "arguments": {"cmd": "rm -rf build"}}
    s = load(
        eval_log(
            tmp_path,
            sample(
                event(
                    "tool",
                    1,
                    id="c1",
                    function="bash",
                    arguments=call["arguments"],
                    result="",
                    error={"type": "approval", "message": "rejected"},
                    completed=at(3),
                ),
                event(
                    "approval",
                    2,
                    message="cleaning up",
                    call=call,
                    approver="human",
                    decision="reject",
                    explanation="not now",
                ),
                event(
                    "approval", 4, message="", call={**call, "id": "c2"}, approver="policy", decision="modify"
                ),
                event(
                    "tool",
                    5,
                    id="c2",
                    function="bash",
                    arguments={"cmd": "rm -rf build/tmp"},
                    result="",
                    completed=at(6),
                ),
            ),
        )
    )
    assert rows(s)[:4] == [
        ("tool_call", "tool", "bash", "rm -rf build", "denied"),
        ("tool_result", "tool", "", "", "denied"),
        ("approval_request", "approval", "bash", "rm -rf build", "denied"),
        ("approval_decision", "approval", "", "", "denied"),
    ]
    found = approvals(s)
    assert [(a.decision, a.approver, a.gated) for a in found] == [
        ("denied", "human", 0),
        ("approved", "policy", 6),
    ]
    assert found[0].reason == "not now" and found[1].reason == "modify"
    d = s.detail(3)
    assert isinstance(d, ApprovalDecision) and d.decision == "denied"


def test_sandbox_events_are_tool_calls_and_a_write_is_a_file_change(tmp_path: Path) -> None:
    cut = "line\n" * 20 + "\n\nOutput truncated (5 additional lines)"
    s = load(
        eval_log(
            tmp_path,
            sample(
                event(
                    "sandbox",
                    1,
                    action="exec",
                    cmd="make test",
                    options={},
                    result=2,
                    output="boom",
                    completed=at(2),
                ),
                event("sandbox", 3, action="write_file", file="/repo/a.txt", input="new\n", completed=at(3)),
                event("sandbox", 4, action="write_file", file="/repo/b.txt", input=cut, completed=at(4)),
                event("sandbox", 5, action="read_file", file="/repo/a.txt", output="new\n", completed=at(5)),
            ),
        )
    )
    assert rows(s)[::2] == [
        ("tool_call", "sandbox", "sandbox.exec", "make test", "failed"),
        ("tool_call", "sandbox", "sandbox.write_file", "/repo/a.txt", "ok"),
        ("tool_call", "sandbox", "sandbox.write_file", "/repo/b.txt", "ok"),
        ("tool_call", "sandbox", "sandbox.read_file", "/repo/a.txt", "ok"),
    ]
    exec_result = s.detail(1)
    assert isinstance(exec_result, ToolResult) and exec_result.exit_code == 2 and exec_result.output == "boom"
    whole, truncated = s.detail(2), s.detail(4)
    assert isinstance(whole, ToolCall) and whole.edit is not None and whole.edit.post == text_hash("new\n")
    assert isinstance(truncated, ToolCall) and truncated.edit is not None and truncated.edit.post is None
    assert [int(i) for i in file_calls(s)] == [2, 4]


def test_a_tools_own_sandbox_write_is_not_a_second_change(tmp_path: Path) -> None:
    s = load(
        eval_log(
            tmp_path,
            sample(
                event("span_begin", 1, id="g", name="generate", type="solver", span_id="g"),
                event("span_begin", 1, id="t", parent_id="g", name="write_file", type="tool", span_id="t"),
                event(
                    "tool",
                    1,
                    id="c1",
                    function="write_file",
                    arguments={"path": "/repo/a.txt", "content": "x"},
                    result="",
                    completed=at(2),
                    span_id="g",
                ),
                event(
                    "sandbox",
                    1,
                    action="write_file",
                    file="/repo/a.txt",
                    input="x",
                    completed=at(1),
                    span_id="t",
                ),
                event("span_end", 2, id="t", span_id="t"),
            ),
        )
    )
    assert [s.event(int(i)).tool for i in file_calls(s)] == ["write_file"]


def test_scores_errors_and_limits(tmp_path: Path) -> None:
    s = load(
        eval_log(
            tmp_path,
            sample(
                event("span_begin", 1, id="sc", name="match", type="scorer", span_id="sc"),
                event(
                    "score",
                    2,
                    score={"value": "C", "answer": "Yes", "explanation": "right"},
                    target="Yes",
                    span_id="sc",
                ),
                event("score", 2, score={"value": "I"}, span_id="sc"),
                event("score", 2, score={"value": 0.5}, span_id="sc"),
                event("error", 3, error={"message": "boom", "traceback": "..."}),
                event("sample_limit", 4, type="token", message="token limit 1000 exceeded", limit=1000),
                error={"message": "sample failed", "traceback": ""},
            ),
        )
    )
    assert [r for r in rows(s) if r[0] != "other"] == [
        ("test_result", "score", "", "match", "ok"),
        ("test_result", "score", "", "match", "failed"),
        ("test_result", "score", "", "match", ""),
        ("error", "error", "", "", "error"),
        ("error", "sample_limit", "", "token", "error"),
        ("error", "sample.error", "", "", "error"),
    ]
    score = s.detail(1)
    assert isinstance(score, TestResult) and score.passed is True and "answer: Yes" in score.output
    errors = [s.detail(i) for i in range(len(s)) if s.event(i).kind == "error"]
    assert [(e.message, e.error_type) for e in errors if isinstance(e, Error)] == [
        ("boom", "error"),
        ("token limit 1000 exceeded", "token limit"),
        ("sample failed", "sample.error"),
    ]
    assert s.status == "failed" and s.agents["1_epoch_1"].outcome == "failed"
    assert s.where(len(s) - 1) == f"{tmp_path / 'log.eval'}!samples/1_epoch_1.json#/error"


def test_agent_spans_are_subagents_and_a_handoff_spawns_from_its_tool_call(tmp_path: Path) -> None:
    s = load(
        eval_log(
            tmp_path,
            sample(
                event("span_begin", 1, id="solvers", name="solvers", type="solvers", span_id="solvers"),
                event(
                    "span_begin", 2, id="a1", parent_id="solvers", name="planner", type="agent", span_id="a1"
                ),
                event("model", 3, model="m", input=[], output={}, span_id="a1", completed=at(3)),
                event(
                    "tool",
                    4,
                    id="h1",
                    function="transfer_to_coder",
                    arguments={},
                    result="",
                    agent="coder",
                    agent_span_id="a2",
                    span_id="a1",
                    completed=at(8),
                ),
                event("span_begin", 5, id="a2", parent_id="a1", name="coder", type="agent", span_id="a2"),
                event("model", 6, model="m", input=[], output={}, span_id="a2", completed=at(6)),
                event("span_end", 7, id="a2", span_id="a2"),
                event("span_end", 9, id="a1", span_id="a1"),
                event(
                    "span_begin", 10, id="a3", parent_id="solvers", name="planner", type="agent", span_id="a3"
                ),
                event("span_end", 11, id="a3", span_id="a3"),
            ),
        )
    )
    assert list(s.agents) == ["1_epoch_1", "1_epoch_1/planner", "1_epoch_1/coder", "1_epoch_1/planner-2"]
    coder = s.agents["1_epoch_1/coder"]
    assert coder.parent == "1_epoch_1/planner" and coder.label == "coder" and coder.outcome == "completed"
    handoff = next(i for i in range(len(s)) if s.event(i).tool == "transfer_to_coder")
    assert coder.spawned_by == handoff
    planner = s.agents["1_epoch_1/planner"]
    assert s.event(planner.spawned_by or 0).kind == "agent_spawn"
    assert [e.agent for e in s.events() if e.kind == "model_call"] == ["1_epoch_1/planner", "1_epoch_1/coder"]
    spawn = s.detail(planner.spawned_by or 0)
    assert isinstance(spawn, AgentSpawn) and spawn.child == "1_epoch_1/planner"
    spawn_row = next(e.index for e in s.events() if e.kind == "agent_spawn" and e.target == "1_epoch_1/coder")
    end = next(e for e in s.events() if e.kind == "agent_end" and e.target == "1_epoch_1/coder")
    assert end.ref == spawn_row and end.agent == "1_epoch_1/planner"


def test_sample_init_is_the_start_with_its_messages_and_attachments_resolved(tmp_path: Path) -> None:
    long = "You are a careful engineer. " * 20
    init = event(
        "sample_init",
        0,
        sample={"id": 1, "input": "attachment://abc", "target": "ok"},
        state={
            "messages": [
                {"role": "system", "content": "attachment://abc"},
                {
                    "role": "user",
                    "content": [
                        {"type": "reasoning", "reasoning": "hmm"},
                        {"type": "text", "text": "Fix it"},
                    ],
                },
            ]
        },
    )
    s = load(eval_log(tmp_path, sample(init, input="attachment://abc", attachments={"abc": long})))
    assert rows(s) == [
        ("run_start", "sample_init", "", "", ""),
        ("message", "sample_init", "", "", ""),
        ("message", "sample_init", "", "", ""),
    ]
    start, system, user = s.detail(0), s.detail(1), s.detail(2)
    assert isinstance(start, RunStart) and start.task == long and start.settings["target"] == "ok"
    assert isinstance(system, Message) and system.role == "system" and system.text == long
    assert isinstance(user, Message) and (user.text, user.thinking) == ("Fix it", "hmm")
    assert s.task == long and s.agents["1_epoch_1"].task == long


def test_state_store_and_unknown_events_are_other_with_their_record(tmp_path: Path) -> None:
    s = load(
        eval_log(
            tmp_path,
            sample(
                event("state", 1, changes=[{"op": "add", "path": "/x", "value": 1}]),
                event("store", 2, changes=[]),
                event("anchor", 3, anchor_id="z"),
                {"event": 7},
                "not an event",
            ),
        )
    )
    assert [(e.kind, e.type) for e in s.events()] == [
        ("other", "state"),
        ("other", "store"),
        ("other", "anchor"),
        ("other", "?"),
        ("integrity", "unreadable"),
    ]
    d = s.detail(0)
    assert isinstance(d, Other) and d.summary == "1 changes to the sample's state"
    assert s.raw(2) == {"timestamp": at(3), "event": "anchor", "anchor_id": "z"}


def test_older_logs_steps_subtasks_and_nested_tool_events(tmp_path: Path) -> None:
    nested = [event("model", 3, model="m", input=[], output={}, completed=at(3))]
    s = load(
        eval_log(
            tmp_path,
            sample(
                event("step", 1, action="begin", type="solver", name="generate"),
                event(
                    "tool",
                    2,
                    id="c1",
                    function="search",
                    arguments={"query": "x"},
                    result="found",
                    events=[
                        event(
                            "sandbox", 2, action="exec", cmd="grep x", result=0, output="x", completed=at(2)
                        )
                    ],
                    completed=at(4),
                ),
                event(
                    "subtask",
                    5,
                    name="research",
                    input={"input": "look it up"},
                    result="done",
                    events=nested,
                    completed=at(6),
                ),
                event("step", 7, action="end", type="solver", name="generate"),
            ),
        )
    )
    assert [(e.kind, e.agent) for e in s.events()] == [
        ("other", "1_epoch_1"),
        ("tool_call", "1_epoch_1"),
        ("tool_call", "1_epoch_1"),
        ("tool_result", "1_epoch_1"),
        ("tool_result", "1_epoch_1"),
        ("agent_spawn", "1_epoch_1"),
        ("model_call", "1_epoch_1/research"),
        ("model_result", "1_epoch_1/research"),
        ("agent_end", "1_epoch_1"),
        ("other", "1_epoch_1"),
    ]
    assert s.event(4).ref == 1 and s.event(8).ref == 5
    assert s.where(2) == f"{tmp_path / 'log.eval'}!samples/1_epoch_1.json#/events/1/events/0"
    assert s.agents["1_epoch_1/research"].parent == "1_epoch_1"
    spawn = s.detail(5)
    assert isinstance(spawn, AgentSpawn) and spawn.task == "look it up"


def test_a_json_log_is_read_a_sample_at_a_time_in_either_layout(tmp_path: Path) -> None:
    samples = [
        sample(event("model", 1, model="m", input=[], output={}, completed=at(2)), sid=k) for k in (1, 2)
    ]
    pretty = json_log(tmp_path, *samples)
    compact = json_log(tmp_path, *samples, compact=True, name="compact.json")
    for path in (pretty, compact):
        s = load(path)
        assert list(s.agents) == ["1_epoch_1", "2_epoch_1"] and len(s) == 4
        assert s.where(2) == f"{path}#/samples/1/events/0" and s.raw(2)["model"] == "m"
        assert parts(path) == ["1_epoch_1", "2_epoch_1"]
        assert list(load(f"{path}#2_epoch_1").agents) == ["2_epoch_1"]


def test_a_cut_json_log_keeps_its_whole_samples(tmp_path: Path) -> None:
    path = json_log(tmp_path, sample(sid=1), sample(event("model", 1, model="m", input=[], output={}), sid=2))
    data = path.read_bytes()
    path.write_bytes(data[: data.rindex(b'"model"')])
    s = load(path)
    assert list(s.agents) == ["1_epoch_1", "2_epoch_1"]
    assert [(e.kind, e.status) for e in s.events()] == [("integrity", "torn")]


def test_a_damaged_sample_member_is_a_placeholder_and_the_others_load(tmp_path: Path) -> None:
    good = sample(event("model", 1, model="m", input=[], output={}, completed=at(1)), sid=1)
    path = eval_log(tmp_path, good, extra={"samples/2_epoch_1.json": b'{"id": 2, "epoch"'})
    s = load(path)
    assert [(e.kind, e.agent, e.status) for e in s.events()] == [
        ("model_call", "1_epoch_1", ""),
        ("model_result", "1_epoch_1", "ok"),
        ("integrity", "2_epoch_1", "corrupt"),
    ]
    assert "samples/2_epoch_1.json is not JSON" in s.detail(2).reason  # type: ignore[union-attr]


def test_an_eval_without_its_header_is_running_or_crashed(tmp_path: Path) -> None:
    path = eval_log(tmp_path, sample(), header=None)
    s = load(path)
    assert s.status == "running" and s.header["eval"]["run_id"] == "R1"
    os.utime(path, (OLD, OLD))
    assert load(path).status == "crashed"
