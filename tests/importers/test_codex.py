"""The Codex CLI importer: every corpus rollout with its counts pinned, one test per mapping rule on
a minimal hand-written rollout, the commands on real files, and the mutation fuzz."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from fuzz import check
from walkback.importers import detect, load
from walkback.importers.codex import IMPORTER as codex
from walkback.journal import scan
from walkback.timeline.details import (
    ApprovalDecision,
    ApprovalRequest,
    Checkpoint,
    Compaction,
    Message,
    ModelResult,
    RunEnd,
    RunStart,
    ToolCall,
    ToolResult,
    text_hash,
)
from walkback.timeline.kinds import FILE, INFERRED
from walkback.timeline.views import approval_counts, approvals, file_calls, file_change, files_summary

from walkback.cli import cli

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "codex"
FILES = sorted(CORPUS.rglob("*.jsonl"))
OLD = 1_600_000_000  # an mtime long past: a written rollout is "running" for two minutes

EXPECTED = {
    "codemie/rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl": (
        {
            "checkpoint": 1,
            "message": 6,
            "model_result": 3,
            "other": 9,
            "run_start": 1,
            "tool_call": 3,
            "tool_result": 3,
        },
        0,
        "unknown",
    ),
    "codemie/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl": (
        {
            "message": 42,
            "model_result": 66,
            "other": 20,
            "run_end": 2,
            "run_start": 3,
            "tool_call": 105,
            "tool_result": 148,
        },
        3,
        "completed",
    ),
    "localpush/rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl": (
        {
            "message": 180,
            "model_result": 81,
            "other": 221,
            "run_end": 5,
            "run_start": 6,
            "tool_call": 105,
            "tool_result": 104,
        },
        0,
        "completed",
    ),
    "localpush/rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl": (
        {
            "message": 68,
            "model_result": 28,
            "other": 82,
            "run_end": 1,
            "run_start": 2,
            "tool_call": 118,
            "tool_result": 118,
        },
        0,
        "completed",
    ),
    "localpush/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl": (
        {
            "message": 26,
            "model_result": 6,
            "other": 18,
            "run_end": 1,
            "run_start": 2,
            "tool_call": 5,
            "tool_result": 5,
        },
        0,
        "completed",
    ),
    "vibecodingtracker/codex.jsonl": (
        {"message": 21, "model_result": 19, "other": 29, "run_start": 1, "tool_call": 22, "tool_result": 19},
        6,
        "unknown",
    ),
}
"""Per corpus file: events by kind, file-changing calls, session status (one agent, no approvals:
the rollout policy persists no approval events and these runs asked for no escalation)."""


def test_the_codex_corpus_is_there() -> None:
    assert sorted(str(p.relative_to(CORPUS)) for p in FILES) == sorted(EXPECTED)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_every_corpus_rollout_loads_with_its_counts(path: Path) -> None:
    kinds, changes, status = EXPECTED[str(path.relative_to(CORPUS))]
    s = load(path)
    assert s.format == "codex" and dict(s.kinds()) == kinds
    assert len(file_calls(s)) == changes and len(s.agents) == 1 and s.status == status
    assert approval_counts(approvals(s))["requested"] == 0
    assert not s.pending() and not s.integrity.skipped
    for i in range(len(s)):
        s.detail(i)


def test_the_old_layout_reads_shell_patches_and_patch_ends_as_file_changes() -> None:
    s = load(CORPUS / "vibecodingtracker" / "codex.jsonl")
    paths = [f["path"] for f in files_summary(s)]
    assert paths == [
        "go.mod",
        "README.zh-TW.md",
        "README.zh-CN.md",
        ".python-version",
        "docs/RELEASE_NOTES.md",
        "core/version.go",
    ]
    notes = next(f for f in files_summary(s) if f["path"] == "docs/RELEASE_NOTES.md")
    assert notes["first_pre"] == "absent"
    assert notes["last_post"] == text_hash("# Release Notes\n\nApplied via exec apply_patch cell.\n")
    failed = [i for i in range(len(s)) if s.event(i).target == "should_not_count.txt"]
    assert [s.event(i).status for i in failed] == ["failed"] and not s.table.flags[failed[0]] & FILE
    assert s.task.startswith("# Context from my IDE setup")


def test_apply_patch_results_carry_the_unified_diff() -> None:
    s = load(CORPUS / "codemie" / "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl")
    fc = file_change(s, int(file_calls(s)[0]))
    assert fc is not None and fc.path == "src/agents/plugins/__tests__/codemie-code-reasoning.test.ts"
    assert fc.patch is not None and fc.patch.startswith("@@ -246,2 +246,16 @@")
    assert s.event(fc.result).type == "patch_apply_end"


# -- mapping rules, one minimal rollout each ------------------------------------------------------
META = {
    "id": "th-1",
    "timestamp": "2026-01-01T10:00:00.000Z",
    "cwd": "/w",
    "originator": "codex_cli_rs",
    "cli_version": "0.100.0",
    "git": {"commit_hash": "abc123", "branch": "main"},
}


def rollout(
    tmp_path: Path,
    *items: tuple[str, dict[str, Any]],
    meta: dict[str, Any] | None = None,
    name: str = "rollout-2026-01-01T10-00-00-th-1.jsonl",
) -> Path:
    lines = [{"timestamp": "2026-01-01T10:00:00.000Z", "type": "session_meta", "payload": meta or META}]
    for n, (typ, payload) in enumerate(items, 1):
        lines.append({"timestamp": f"2026-01-01T10:00:{n:02d}.000Z", "type": typ, "payload": payload})
    path = tmp_path / name
    path.write_bytes(b"\n".join(orjson.dumps(x) for x in lines) + b"\n")
    os.utime(path, (OLD, OLD))
    return path


def item(ptype: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    return "response_item", {"type": ptype, **fields}


def event(ptype: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    return "event_msg", {"type": ptype, **fields}


def call(name: str, call_id: str, **args: Any) -> tuple[str, dict[str, Any]]:
    return item("function_call", name=name, call_id=call_id, arguments=orjson.dumps(args).decode())


def out(call_id: str, output: Any) -> tuple[str, dict[str, Any]]:
    return item("function_call_output", call_id=call_id, output=output)


def kinds(s: Any) -> list[str]:
    return [s.event(i).kind for i in range(len(s))]


def test_session_meta_and_turn_context_make_the_run_start(tmp_path: Path) -> None:
    tc = {
        "cwd": "/w",
        "model": "gpt-5",
        "approval_policy": "on-request",
        "sandbox_policy": {"type": "read-only"},
    }
    s = load(rollout(tmp_path, ("turn_context", tc), event("user_message", message="fix the bug")))
    assert detect(s.files()[0]) is codex and s.task == "fix the bug"
    start = s.detail(0)
    assert isinstance(start, RunStart) and start.producer == "codex_cli_rs 0.100.0"
    assert (start.workspace, start.base, start.model, start.task) == ("/w", "abc123", "gpt-5", "fix the bug")
    assert start.settings["approval_policy"] == "on-request" and start.settings["branch"] == "main"
    assert kinds(s) == ["run_start", "other", "message"]


def test_a_message_written_twice_is_one_message_and_one_other(tmp_path: Path) -> None:
    s = load(
        rollout(
            tmp_path,
            event("agent_message", message="done"),
            item("message", role="assistant", content=[{"type": "output_text", "text": "done"}]),
            item("message", role="assistant", content=[{"type": "output_text", "text": "done"}]),
        )
    )
    assert kinds(s) == ["run_start", "message", "other", "message"]
    msg = s.detail(1)
    assert isinstance(msg, Message) and msg.role == "assistant" and msg.text == "done"


def test_reasoning_is_a_message_with_thinking(tmp_path: Path) -> None:
    s = load(
        rollout(
            tmp_path,
            item("reasoning", summary=[{"type": "summary_text", "text": "think"}], encrypted_content="x"),
        )
    )
    d = s.detail(1)
    assert isinstance(d, Message) and d.thinking == "think" and d.text == ""


@pytest.mark.parametrize(
    ("output", "status", "code"),
    [
        ('{"output":"hi\\n","metadata":{"exit_code":0,"duration_seconds":0.1}}', "ok", 0),
        ("Chunk ID: a\nWall time: 1 seconds\nProcess exited with code 2\nOutput:\nboom", "failed", 2),
        ("exec command rejected by user", "denied", None),
    ],
)
def test_a_function_call_pairs_with_its_output(
    tmp_path: Path, output: str, status: str, code: int | None
) -> None:
    s = load(rollout(tmp_path, call("shell", "c1", command=["bash", "-lc", "echo hi"]), out("c1", output)))
    call_i, res_i = 1, 2
    assert s.event(call_i).target == "echo hi" and s.event(res_i).ref == call_i
    assert s.event(call_i).status == status == s.event(res_i).status
    tc, tr = s.detail(call_i), s.detail(res_i)
    assert isinstance(tc, ToolCall) and tc.command == "echo hi" and tc.call_id == "c1"
    assert isinstance(tr, ToolResult) and tr.exit_code == code and tr.ok is (status == "ok")
    if code == 0:
        assert tr.output == "hi\n"


def test_a_call_without_output_is_pending_and_the_session_crashed(tmp_path: Path) -> None:
    s = load(rollout(tmp_path, event("task_started", turn_id="t"), call("exec_command", "c1", cmd="make")))
    assert s.pending() == [2] and s.status == "crashed"


def test_a_rollout_being_written_is_running_a_fresh_copy_of_an_old_one_is_not(tmp_path: Path) -> None:
    path = rollout(tmp_path, call("exec_command", "c1", cmd="make"))
    os.utime(path)
    assert load(path).status == "crashed"  # its records are old: a copy, not a live session
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    with open(path, "ab") as f:
        f.write(orjson.dumps({"timestamp": now, "type": "event_msg", "payload": {"type": "x"}}) + b"\n")
    assert load(path).status == "running"


def test_local_shell_and_custom_calls_pair_by_call_id(tmp_path: Path) -> None:
    s = load(
        rollout(
            tmp_path,
            item(
                "local_shell_call",
                call_id="l1",
                status="completed",
                action={"type": "exec", "command": ["ls"]},
            ),
            out("l1", "a\nb"),
            item("custom_tool_call", name="exec", call_id="x1", input="1+1"),
            item("custom_tool_call_output", call_id="x1", output="2"),
        )
    )
    assert [s.event(i).ref for i in (2, 4)] == [1, 3]
    assert s.event(1).tool == "local_shell" and s.event(1).target == "ls"


PATCH = (
    "*** Begin Patch\n*** Add File: docs/new.md\n+hello\n+world\n*** Update File: /w/src/a.py\n@@ def f():\n"
    "-    return 1\n+    return 2\n*** Delete File: old.txt\n*** End Patch\n"
)


def test_an_apply_patch_gives_one_file_changing_event_per_file(tmp_path: Path) -> None:
    changes = {
        "/w/docs/new.md": {"type": "add", "unified_diff": "@@ -0,0 +1,2 @@\n+hello\n+world\n"},
        "/w/src/a.py": {
            "type": "update",
            "unified_diff": "@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n",
        },
    }
    s = load(
        rollout(
            tmp_path,
            item("custom_tool_call", name="apply_patch", call_id="p1", input=PATCH),
            event("patch_apply_end", call_id="p1", success=True, stdout="Success", changes=changes),
            item(
                "custom_tool_call_output",
                call_id="p1",
                output='{"output":"Success","metadata":{"exit_code":0}}',
            ),
        )
    )
    calls = [int(i) for i in file_calls(s)]
    assert [s.event(i).target for i in calls] == ["docs/new.md", "src/a.py", "old.txt"]
    assert [s.table.sub[i] for i in calls] == [0, 1, 2] and all(s.event(i).status == "ok" for i in calls)
    new, upd, gone = (file_change(s, i) for i in calls)
    assert (
        new
        and new.pre == "absent"
        and new.post == text_hash("hello\nworld\n")
        and new.edit.operation == "create"
    )
    assert (
        upd
        and upd.patch == changes["/w/src/a.py"]["unified_diff"]
        and s.event(upd.result).type == "patch_apply_end"
    )
    assert gone and gone.post == "absent" and gone.result is None


def test_a_patch_given_to_a_shell_is_a_file_change(tmp_path: Path) -> None:
    script = "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: x.txt\n@@\n-a\n+b\n*** End Patch\nEOF"
    s = load(rollout(tmp_path, call("shell", "c1", command=["bash", "-lc", script]), out("c1", "Success")))
    (i,) = map(int, file_calls(s))
    fc = file_change(s, i)
    assert s.event(i).target == "x.txt" and fc is not None and fc.patch == "@@\n-a\n+b"


def test_a_patch_end_without_its_call_changes_files_only_if_it_succeeded(tmp_path: Path) -> None:
    s = load(
        rollout(
            tmp_path,
            event(
                "patch_apply_end",
                call_id="gone",
                success=True,
                changes={"/w/a.md": {"type": "add", "unified_diff": "+x\n"}},
            ),
            event(
                "patch_apply_end",
                call_id="gone2",
                success=False,
                changes={"/w/b.md": {"type": "add", "unified_diff": "+y\n"}},
            ),
        )
    )
    assert [s.event(i).target for i in map(int, file_calls(s))] == ["a.md"]
    assert s.event(2).kind == "tool_call" and s.event(2).status == "failed"


def test_an_escalation_request_is_an_approval_decided_by_what_followed(tmp_path: Path) -> None:
    ask = {"sandbox_permissions": "require_escalated", "justification": "Install deps?"}
    s = load(
        rollout(
            tmp_path,
            call("shell", "c1", command=["npm", "install"], **ask),
            out("c1", "Exit code: 0\nok"),
            call("shell", "c2", command=["rm", "-rf", "/"], **ask),
            out("c2", "exec command rejected by user"),
            call("shell", "c3", command=["curl", "x"], **ask),
        )
    )
    found = approvals(s)
    assert [(a.decision, a.inferred, a.target) for a in found] == [
        ("approved", True, "npm install"),
        ("denied", True, "rm -rf /"),
        (None, False, "curl x"),
    ]
    assert found[0].gated == found[0].request + 1
    req, dec = s.detail(found[0].request), s.detail(found[0].decision_event)
    assert isinstance(req, ApprovalRequest) and req.reason == "Install deps?"
    assert (
        isinstance(dec, ApprovalDecision)
        and dec.inferred
        and s.table.flags[found[0].decision_event] & INFERRED
    )
    assert approval_counts(found) == {"requested": 3, "approved": 1, "denied": 1, "unanswered": 1}


def test_exec_and_patch_approval_requests_are_approvals(tmp_path: Path) -> None:
    s = load(
        rollout(
            tmp_path,
            call("exec_command", "c1", cmd="make deploy"),
            event("exec_approval_request", call_id="c1", command=["make", "deploy"], reason="network"),
            event("exec_command_end", call_id="c1", exit_code=1, aggregated_output="no"),
            out("c1", "Process exited with code 1"),
            item(
                "custom_tool_call",
                name="apply_patch",
                call_id="p1",
                input="*** Begin Patch\n*** Add File: a\n+1\n*** End Patch",
            ),
            event(
                "apply_patch_approval_request",
                call_id="p1",
                changes={"/w/a": {"type": "add"}},
                reason="outside",
            ),
            item("custom_tool_call_output", call_id="p1", output="patch rejected by user"),
        )
    )
    exec_ask, patch_ask = approvals(s)
    assert (exec_ask.decision, exec_ask.target, exec_ask.gated) == ("approved", "make deploy", 1)
    assert (patch_ask.decision, patch_ask.target, patch_ask.tool) == ("denied", "a", "apply_patch")
    assert s.event(1).status == "failed"  # exec_command_end's exit code 1
    end = s.detail(4)
    assert isinstance(end, ToolResult) and end.exit_code == 1 and s.event(4).ref == 1


def test_token_counts_are_deduped_on_the_total(tmp_path: Path) -> None:
    usage = {
        "input_tokens": 100,
        "cached_input_tokens": 40,
        "output_tokens": 7,
        "reasoning_output_tokens": 3,
        "total_tokens": 107,
    }
    info = {"total_token_usage": usage, "last_token_usage": usage}
    s = load(
        rollout(
            tmp_path,
            ("turn_context", {"model": "gpt-5"}),
            event("token_count", info=info),
            event("token_count", info=info),
            event("token_count", info=None, rate_limits={}),
        )
    )
    assert kinds(s)[2:] == ["model_result", "other", "other"]
    d = s.detail(2)
    assert isinstance(d, ModelResult) and d.model == "gpt-5"
    assert (d.usage.input_tokens, d.usage.cache_read_tokens, d.usage.output_tokens) == (60, 40, 7)
    assert (d.usage.reasoning_tokens, d.usage.total_tokens) == (3, 107)


def test_compaction_is_told_once(tmp_path: Path) -> None:
    s = load(
        rollout(
            tmp_path,
            ("compacted", {"message": "summary so far", "replacement_history": []}),
            event("context_compacted"),
        )
    )
    assert kinds(s)[1:] == ["compaction", "other"]
    d = s.detail(1)
    assert isinstance(d, Compaction) and d.summary == "summary so far"


def test_turns_start_and_end_and_an_aborted_turn_cancels(tmp_path: Path) -> None:
    s = load(
        rollout(
            tmp_path,
            event("task_started", turn_id="t1"),
            event("task_complete", turn_id="t1", last_agent_message="ok"),
            event("task_started", turn_id="t2"),
            event("turn_aborted", turn_id="t2", reason="interrupted"),
        )
    )
    assert (
        kinds(s) == ["run_start", "run_start", "run_end", "run_start", "run_end"] and s.status == "cancelled"
    )
    end = s.detail(4)
    assert isinstance(end, RunEnd) and (end.status, end.reason) == ("cancelled", "interrupted")


def test_a_ghost_snapshot_is_a_checkpoint(tmp_path: Path) -> None:
    s = load(rollout(tmp_path, item("ghost_snapshot", ghost_commit={"id": "5392ce7", "parent": "0294234"})))
    d = s.detail(1)
    assert isinstance(d, Checkpoint) and d.git == "5392ce7"


def test_unknown_records_are_kept_and_bad_lines_are_placeholders(tmp_path: Path) -> None:
    path = rollout(tmp_path, event("sub_agent_activity", x=1))
    path.write_bytes(path.read_bytes() + b"{not json\n[1]\n")
    s = load(path)
    assert kinds(s) == ["run_start", "other", "integrity", "integrity"]
    assert s.event(1).type == "sub_agent_activity" and s.event(2).status == "corrupt"


def test_subagent_rollouts_beside_the_parent_are_its_child_agents(tmp_path: Path) -> None:
    child_meta = {
        **META,
        "id": "th-2",
        "timestamp": "2026-01-01T10:00:05.000Z",
        "source": {"subagent": {"thread_spawn": {"parent_thread_id": "th-1", "agent_nickname": "scout"}}},
    }
    rollout(tmp_path, call("spawn_agent", "s1", message="look around"), out("s1", '{"agent_id":"th-2"}'))
    rollout(
        tmp_path,
        event("user_message", message="look around"),
        meta=child_meta,
        name="rollout-2026-01-01T10-00-05-th-2.jsonl",
    )
    rollout(tmp_path, meta={**META, "id": "th-9"}, name="rollout-2026-01-01T11-00-00-th-9.jsonl")
    s = load(tmp_path / "rollout-2026-01-01T10-00-00-th-1.jsonl")
    assert set(s.agents) == {"main", "scout"}
    scout = s.agents["scout"]
    assert scout.parent == "main" and scout.task == "look around" and scout.run == "th-2"
    assert scout.spawned_by is not None and s.event(scout.spawned_by).tool == "spawn_agent"
    assert codex.score(tmp_path, b"") == 0  # three rollouts, two sessions: not one folder session
    (tmp_path / "rollout-2026-01-01T11-00-00-th-9.jsonl").unlink()
    assert detect(tmp_path) is codex and set(load(tmp_path).agents) == {"main", "scout"}


# -- the commands on real files -------------------------------------------------------------------
@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_show_json_and_import_work_on_every_rollout(path: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    shown = runner.invoke(cli, ["show", "--json", str(path)])
    assert shown.exit_code == 0, shown.output
    data = orjson.loads(shown.output)
    assert data["format"] == "codex" and data["events"] == sum(
        EXPECTED[str(path.relative_to(CORPUS))][0].values()
    )
    done = runner.invoke(cli, ["import", str(path), "-o", str(tmp_path / "run")])
    assert done.exit_code == 0, done.output
    res = scan(tmp_path / "run" / "journal.jsonl")
    assert res.intact and res.header is not None and res.header["source"]["format"] == "codex"


def test_a_bad_folder_is_one_clear_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["show", str(tmp_path)])
    assert result.exit_code == 2 and "Traceback" not in result.output


# -- mutation fuzz --------------------------------------------------------------------------------
@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_mutated_rollouts_never_raise_a_traceback(path: Path) -> None:
    assert check(path, 300) == []


@pytest.mark.soak
@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_ten_thousand_mutated_rollouts_never_raise_a_traceback(path: Path) -> None:
    assert check(path, 10_000) == []
