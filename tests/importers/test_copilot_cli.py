"""The Copilot CLI importer: every corpus session with its counts pinned, one test per mapping rule
on a minimal hand-written events.jsonl or legacy document, the commands on real files, the fuzz."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from fuzz import check
from walkback.importers import detect, load, scores
from walkback.importers.copilot_cli import IMPORTER as copilot
from walkback.journal import scan
from walkback.journal.errors import ImporterError
from walkback.timeline.builder import SessionBuilder
from walkback.timeline.details import (
    ApprovalDecision,
    ApprovalRequest,
    Message,
    ModelCall,
    ModelResult,
    Other,
    RunEnd,
    RunStart,
    ToolCall,
    ToolResult,
    text_hash,
)
from walkback.timeline.kinds import FILE
from walkback.timeline.views import approval_counts, approvals, file_calls, file_change, files_summary

from walkback.cli import cli

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "copilot-cli"
FILES = sorted(p for p in CORPUS.rglob("*") if p.is_file())
OLD = 1_600_000_000
EXPECTED = {
    "vibecodingtracker/copilot-events.jsonl": (
        {
            "run_start": 1,
            "message": 9,
            "model_call": 6,
            "model_result": 7,
            "tool_call": 13,
            "tool_result": 13,
            "run_end": 1,
            "other": 21,
        },
        0,
        "completed",
    ),
    "vibecodingtracker/copilot-legacy.json": (
        {"run_start": 1, "message": 8, "tool_call": 15, "tool_result": 15},
        7,
        "unknown",
    ),
    "vscode-copilot-chat/2acc594f-590b-4c79-9fcc-c1b1ea774875.jsonl": (
        {"run_start": 1, "message": 4},
        0,
        "unknown",
    ),
    "vscode-copilot-chat/c8963ad7-e7b1-414c-a9fc-930905e76708.jsonl": (
        {"run_start": 1, "message": 5, "tool_call": 2, "tool_result": 2, "other": 2},
        0,
        "unknown",
    ),
}
"""Per corpus file: events by kind, file-changing calls, status (one agent, no approvals in any)."""


def test_the_copilot_corpus_is_there() -> None:
    assert sorted(str(p.relative_to(CORPUS)) for p in FILES) == sorted(EXPECTED)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_every_corpus_session_loads_with_its_counts(path: Path) -> None:
    kinds, changes, status = EXPECTED[str(path.relative_to(CORPUS))]
    s = load(path)
    assert s.format == "copilot-cli" and dict(s.kinds()) == kinds and len(file_calls(s)) == changes
    assert len(s.agents) == 1 and s.status == status and not s.pending()
    assert approval_counts(approvals(s))["requested"] == 0
    assert sum(1 for i in range(len(s)) if s.event(i).kind == "tool_call") == kinds.get("tool_call", 0)
    for i in range(len(s)):
        s.detail(i)
        assert s.where(i).startswith(str(path))


def test_the_corpus_session_counts_tokens_once() -> None:
    s = load(CORPUS / "vibecodingtracker" / "copilot-events.jsonl")
    results = [s.detail(i) for i in range(len(s)) if s.event(i).kind == "model_result"]
    assert all(isinstance(r, ModelResult) for r in results)
    out = sum(r.usage.output_tokens or 0 for r in results if isinstance(r, ModelResult))
    assert out == 2848  # Copilot's own total at shutdown: the messages' counts, none twice
    last = results[-1]
    assert isinstance(last, ModelResult) and last.usage.input_tokens == 186809 - 151738
    assert (
        s.task.startswith("請不要修改任何代碼")
        and s.agents["main"].run == "96ef38f0-9d09-45c3-8124-6448c36090ed"
    )


def test_the_legacy_session_edits_with_their_diffs() -> None:
    s = load(CORPUS / "vibecodingtracker" / "copilot-legacy.json")
    files = {f["path"]: f for f in files_summary(s)}
    created = files["/home/wei/repo/VibeCodingTracker/CHANGELOG_DEMO.md"]
    assert created["first_pre"] == "absent" and created["last_post"].startswith("sha256:")
    assert files["/home/wei/repo/VibeCodingTracker/README.md"]["changes"] == 4
    fc = file_change(s, int(file_calls(s)[0]))
    assert (
        fc is not None and fc.edit.old_string and fc.edit.new_string and fc.patch and "diff --git" in fc.patch
    )


# -- mapping rules, one minimal session each ------------------------------------------------------
START = {
    "type": "session.start",
    "data": {
        "sessionId": "s-1",
        "producer": "copilot-agent",
        "copilotVersion": "1.0.34",
        "context": {"cwd": "/repo", "headCommit": "abc123", "branch": "main"},
    },
}


def event(typ: str, **data: Any) -> dict[str, Any]:
    return {"type": typ, "data": data, "id": typ, "timestamp": "2026-01-01T10:00:01.000Z", "parentId": None}


def session(tmp_path: Path, *records: dict[str, Any], start: bool = True) -> Path:
    folder = tmp_path / "s-1"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "events.jsonl"
    lines = [START, *records] if start else list(records)
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in lines) + b"\n")
    os.utime(path, (OLD, OLD))
    return path


def kinds(s: Any) -> list[str]:
    return [s.event(i).kind for i in range(len(s))]


def request(cid: str, name: str, **args: Any) -> dict[str, Any]:
    return {"toolCallId": cid, "name": name, "arguments": args}


def test_the_start_names_workspace_base_and_producer(tmp_path: Path) -> None:
    s = load(session(tmp_path, event("session.model_change", newModel="gpt-5")))
    start = s.detail(0)
    assert isinstance(start, RunStart) and (start.workspace, start.base, start.model) == (
        "/repo",
        "abc123",
        "gpt-5",
    )
    assert start.producer == "copilot-cli 1.0.34" and start.settings["branch"] == "main"
    change = s.detail(1)
    assert isinstance(change, Other) and change.summary == "model: - -> gpt-5"


def test_messages_task_reasoning_and_the_model_in_force(tmp_path: Path) -> None:
    s = load(
        session(
            tmp_path,
            event("session.model_change", newModel="m-1"),
            event("user.message", content="fix it"),
            event("assistant.turn_start", turnId="0"),
            event("assistant.message", messageId="a", content="done", reasoningText="think", outputTokens=5),
            event("session.model_change", newModel="m-2"),
            event("user.message", content="", transformedContent="keep going"),
        )
    )
    assert kinds(s) == [
        "run_start",
        "other",
        "message",
        "model_call",
        "message",
        "model_result",
        "other",
        "message",
    ]
    assert s.task == "fix it" and s.agents["main"].task == "fix it"
    said, call, result, nudge = s.detail(4), s.detail(3), s.detail(5), s.detail(7)
    assert isinstance(said, Message) and (said.role, said.text, said.thinking, said.model) == (
        "assistant",
        "done",
        "think",
        "m-1",
    )
    assert isinstance(call, ModelCall) and call.model == "m-1"
    assert isinstance(result, ModelResult) and result.usage.output_tokens == 5
    assert isinstance(nudge, Message) and nudge.text == "keep going"


def test_tool_requests_pair_with_their_executions(tmp_path: Path) -> None:
    reqs = [request("c1", "view", path="/repo/a.py"), request("c2", "bash", command="ls")]
    s = load(
        session(
            tmp_path,
            event("assistant.message", messageId="a", content="", toolRequests=reqs),
            event("tool.execution_start", toolCallId="c1", toolName="view", arguments={"path": "/repo/a.py"}),
            event("tool.execution_complete", toolCallId="c1", success=True, result={"content": "x = 1"}),
            event("tool.execution_start", toolCallId="c2", toolName="bash", arguments={"command": "ls"}),
            event(
                "tool.execution_complete",
                toolCallId="c2",
                success=True,
                result={"content": "boom\n<exited with exit code 2>"},
            ),
        )
    )
    assert kinds(s) == ["run_start", "tool_call", "tool_call", "other", "tool_result", "other", "tool_result"]
    assert [s.table.sub[i] for i in (1, 2)] == [0, 1] and s.event(1).line == s.event(2).line == 2
    assert s.event(1).target == "a.py" and s.event(3).ref == 1 and s.event(4).ref == 1
    assert (s.event(1).status, s.event(2).status) == ("ok", "failed")
    shell, out = s.detail(2), s.detail(6)
    assert isinstance(shell, ToolCall) and shell.command == "ls" and shell.call_id == "c2"
    assert isinstance(out, ToolResult) and out.exit_code == 2 and not out.ok


def test_an_execution_no_request_named_is_the_call(tmp_path: Path) -> None:
    s = load(
        session(
            tmp_path,
            event("tool.execution_start", toolCallId="g", toolName="glob", arguments={"pattern": "*.rs"}),
            event("tool.execution_complete", toolCallId="g", success=False, error={"message": "no such dir"}),
            event("tool.execution_start", toolCallId="w", toolName="write_bash", arguments={"command": "y"}),
            event(
                "tool.execution_complete",
                toolCallId="w",
                success=False,
                error={"message": "The user rejected this tool call."},
            ),
        )
    )
    assert kinds(s) == ["run_start", "tool_call", "tool_result", "tool_call", "tool_result"]
    assert (s.event(1).target, s.event(1).status, s.event(3).status) == ("*.rs", "failed", "denied")
    failed = s.detail(2)
    assert isinstance(failed, ToolResult) and failed.error == "no such dir"


def test_edit_and_create_are_file_changes_with_hashes_and_diffs(tmp_path: Path) -> None:
    reqs = [
        request("e", "edit", path="/repo/a.py", old_str="1", new_str="2"),
        request("c", "create", path="/repo/new.txt", file_text="hi\n"),
    ]
    diff = "diff --git a/repo/a.py b/repo/a.py\n--- a/repo/a.py\n+++ b/repo/a.py\n@@ -1 +1 @@\n-1\n+2\n"
    s = load(
        session(
            tmp_path,
            event("assistant.message", messageId="a", content="", toolRequests=reqs),
            event(
                "tool.execution_complete",
                toolCallId="e",
                success=True,
                result={"content": "ok", "detailedContent": diff},
            ),
            event("tool.execution_complete", toolCallId="c", success=True, result={"content": "created"}),
        )
    )
    assert [bool(s.table.flags[i] & FILE) for i in range(len(s))] == [False, True, True, False, False]
    edited, created = (file_change(s, int(i)) for i in file_calls(s))
    assert edited and (edited.path, edited.edit.old_string, edited.edit.new_string, edited.patch) == (
        "a.py",
        "1",
        "2",
        diff,
    )
    assert created and (created.pre, created.post, created.edit.operation) == (
        "absent",
        text_hash("hi\n"),
        "create",
    )


def test_shutdown_ends_the_run_and_totals_what_the_messages_did_not_count(tmp_path: Path) -> None:
    usage = {
        "inputTokens": 100,
        "outputTokens": 30,
        "cacheReadTokens": 40,
        "cacheWriteTokens": 1,
        "reasoningTokens": 2,
    }
    s = load(
        session(
            tmp_path,
            event("session.model_change", newModel="m"),
            event("assistant.message", messageId="a", content="x", outputTokens=10),
            event("assistant.message", messageId="a", content="x", outputTokens=10),  # written again
            event(
                "session.shutdown",
                shutdownType="routine",
                codeChanges={"linesAdded": 3, "linesRemoved": 1, "filesModified": ["a.py"]},
                modelMetrics={"m": {"requests": {"count": 2, "cost": 1}, "usage": usage}},
            ),
        )
    )
    assert kinds(s) == ["run_start", "other", "message", "model_result", "message", "run_end", "model_result"]
    assert s.status == "completed"
    end, total = s.detail(5), s.detail(6)
    assert isinstance(end, RunEnd) and end.reason == "routine; code changes: +3 -1 lines in 1 files: a.py"
    assert isinstance(total, ModelResult) and total.model == "m"
    assert (total.usage.input_tokens, total.usage.output_tokens, total.usage.cache_read_tokens) == (
        60,
        20,
        40,
    )


def test_permission_requests_and_answers_are_approvals(tmp_path: Path) -> None:
    ask = {"kind": "shell", "toolCallId": "c", "fullCommandText": "rm -rf build", "intention": "clean"}
    s = load(
        session(
            tmp_path,
            event(
                "assistant.message",
                messageId="a",
                content="",
                toolRequests=[request("c", "bash", command="rm -rf build")],
            ),
            event("permission.requested", requestId="p", permissionRequest=ask),
            event("permission.completed", requestId="p", result={"kind": "denied-interactively-by-user"}),
            event(
                "tool.execution_complete",
                toolCallId="c",
                success=False,
                error={"message": "denied by the user"},
            ),
        )
    )
    assert kinds(s) == ["run_start", "tool_call", "approval_request", "approval_decision", "tool_result"]
    (a,) = approvals(s)
    assert (a.request, a.decision, a.gated, a.target, a.approved) == (2, "denied", 1, "rm -rf build", False)
    req, dec = s.detail(2), s.detail(3)
    assert isinstance(req, ApprovalRequest) and req.reason == "clean"
    assert isinstance(dec, ApprovalDecision) and dec.reason == "denied-interactively-by-user"
    assert s.event(1).status == "denied"


def test_subagents_are_child_agents_spawned_by_their_call(tmp_path: Path) -> None:
    s = load(
        session(
            tmp_path,
            event(
                "assistant.message",
                messageId="a",
                content="",
                toolRequests=[request("t", "task", prompt="look")],
            ),
            event("subagent.started", toolCallId="t", agentName="explore", agentDisplayName="Explorer"),
            event("assistant.message", messageId="b", content="found it", parentToolCallId="t"),
            event("subagent.completed", toolCallId="t"),
            event("tool.execution_complete", toolCallId="t", success=True, result={"content": "found it"}),
        )
    )
    assert kinds(s) == ["run_start", "tool_call", "agent_spawn", "message", "agent_end", "tool_result"]
    child = s.agents["subagent-t"]
    assert (child.parent, child.spawned_by, child.label, child.outcome) == (
        "main",
        1,
        "Explorer",
        "completed",
    )
    assert s.event(3).agent == "subagent-t" and s.event(4).ref == 2


def test_a_call_left_without_its_result_is_what_a_crash_left(tmp_path: Path) -> None:
    s = load(
        session(
            tmp_path,
            event("tool.execution_start", toolCallId="c", toolName="bash", arguments={"command": "make"}),
        )
    )
    assert s.pending() == [1] and s.status == "crashed"


def test_unknown_types_are_other_and_damaged_lines_placeholders(tmp_path: Path) -> None:
    path = session(tmp_path, event("session.brand_new", x=1))
    with open(path, "ab") as f:
        f.write(b'{"type": "user.mess\n')
    os.utime(path, (OLD, OLD))
    s = load(path)
    assert kinds(s) == ["run_start", "other", "integrity"] and s.event(2).status == "corrupt"
    assert s.event(1).type == "session.brand_new"


def test_detection_claims_copilot_lines_and_folders_only(tmp_path: Path) -> None:
    path = session(tmp_path, event("user.message", content="hi"))
    assert detect(path).name == "copilot-cli" and detect(path.parent).name == "copilot-cli"
    headless = session(
        tmp_path / "x", event("user.message", content="hi"), event("assistant.turn_start"), start=False
    )
    assert dict((n, v) for v, n in scores(headless))["copilot-cli"] == 50
    claude = tmp_path / "claude.jsonl"
    claude.write_bytes(orjson.dumps({"type": "user", "uuid": "u", "message": {"content": "hi"}}) + b"\n")
    assert dict((n, v) for v, n in scores(claude))["copilot-cli"] == 0


# -- the legacy session document ------------------------------------------------------------------
def legacy(tmp_path: Path, timeline: list[Any], chat: list[Any] | None = None) -> Path:
    path = tmp_path / "0b2a81da.json"
    doc = {
        "sessionId": "s-9",
        "startTime": "2025-10-11T12:54:52.206Z",
        "chatMessages": chat or [],
        "timeline": timeline,
    }
    path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    return path


def entry(typ: str, **fields: Any) -> dict[str, Any]:
    return {"id": typ, "timestamp": "2025-10-11T12:55:00.000Z", "type": typ, **fields}


def test_legacy_timeline_messages_and_calls_with_their_results(tmp_path: Path) -> None:
    done = {"type": "success", "log": "4:/// x\n<exited with exit code 0>"}
    s = load(
        legacy(
            tmp_path,
            [
                entry("user", text="rename it"),
                entry("copilot", text="on it"),
                entry("tool_call_requested", callId="r", name="bash", arguments={"command": "grep x"}),
                entry(
                    "tool_call_completed",
                    callId="r",
                    name="bash",
                    arguments={"command": "grep x"},
                    result=done,
                ),
                entry(
                    "tool_call_completed",
                    callId="w",
                    name="str_replace_editor",
                    arguments={"command": "create", "path": "/r/c.md", "file_text": "c\n"},
                    result={"type": "failure", "log": "no"},
                ),  # fmt: skip
                entry("something_new"),
            ],
        )
    )
    assert kinds(s) == [
        "run_start",
        "message",
        "message",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "other",
    ]
    assert s.task == "rename it" and s.agents["main"].run == "s-9"
    assert (s.event(4).ref, s.event(6).ref, s.event(3).status, s.event(5).status) == (3, 5, "ok", "failed")
    assert (s.table.sub[5], s.table.sub[6]) == (0, 1) and s.where(6).endswith("#/timeline/4")
    out = s.detail(4)
    assert isinstance(out, ToolResult) and out.exit_code == 0
    fc = file_change(s, 5)
    assert fc is not None and (fc.pre, fc.post) == ("absent", text_hash("c\n"))


def test_legacy_chat_messages_are_the_conversation_when_the_timeline_is_empty(tmp_path: Path) -> None:
    call = {"id": "k", "type": "function", "function": {"name": "view", "arguments": '{"path": "a"}'}}
    chat = [
        {"role": "user", "content": "look"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "k", "content": "x"},
    ]
    s = load(legacy(tmp_path, [], chat))
    assert kinds(s) == ["run_start", "message", "tool_call", "tool_result"] and s.event(3).ref == 2
    assert s.task == "look" and s.event(2).target == "a"
    copies = load(legacy(tmp_path, [entry("user", text="look")], chat))
    assert kinds(copies) == ["run_start", "message", "other", "other", "other"]


def test_a_torn_legacy_document_keeps_what_was_written_and_a_broken_one_is_one_clear_error(
    tmp_path: Path,
) -> None:
    path = tmp_path / "x.json"
    path.write_text('{\n  "sessionId": "s",\n  "chatMessages": [],\n  "timeline": [\n    {"type": "user",')
    s = load(path)
    assert kinds(s) == ["run_start", "integrity"] and s.event(1).status == "torn"
    assert "line 5" in str(s.detail(1)) and s.where(1) == f"{path}:5"
    path.write_text('{"sessionId": "s", "chatMessages": [], "timeline": [{"type": "user",')
    result = CliRunner().invoke(cli, ["show", str(path)])
    assert result.exit_code == 2 and f"{path}:1: not a JSON document" in result.output
    assert "Traceback" not in result.output
    path.write_text('{"sessionId": "s", "chatMessages": 3, "timeline": {}}')
    with pytest.raises(ImporterError, match="no timeline or chatMessages array"):
        list(copilot.read(path, SessionBuilder("copilot-cli", describe=copilot.details), None))


# -- the commands on real files -------------------------------------------------------------------
@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_show_json_and_import_work_on_every_session(path: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    shown = runner.invoke(cli, ["show", "--json", str(path)])
    assert shown.exit_code == 0, shown.output
    data = orjson.loads(shown.output)
    assert data["format"] == "copilot-cli"
    assert data["events"] == sum(EXPECTED[str(path.relative_to(CORPUS))][0].values())
    done = runner.invoke(cli, ["import", str(path), "-o", str(tmp_path / "run")])
    assert done.exit_code == 0, done.output
    res = scan(tmp_path / "run" / "journal.jsonl")
    assert res.intact and res.header is not None and res.header["source"]["format"] == "copilot-cli"


# -- mutation fuzz --------------------------------------------------------------------------------
@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_mutated_sessions_never_raise_a_traceback(path: Path) -> None:
    assert check(path, 300) == []


@pytest.mark.soak
@pytest.mark.parametrize("name", ["copilot-events.jsonl", "copilot-legacy.json"])
def test_ten_thousand_mutated_sessions_never_raise_a_traceback(name: str) -> None:
    assert check(CORPUS / "vibecodingtracker" / name, 10_000) == []
