"""The Claude Code importer: every corpus file with its counts pinned, one test per mapping rule on
minimal hand-written sessions, the commands on real files, and the mutation fuzz."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from fuzz import check
from walkback.importers import detect, load, scores
from walkback.importers.claude_code import IMPORTER as claude
from walkback.journal import scan
from walkback.timeline.details import (
    ABSENT,
    ApprovalDecision,
    Branch,
    Checkpoint,
    Compaction,
    Error,
    Message,
    ModelResult,
    Other,
    ToolCall,
    ToolResult,
    text_hash,
)
from walkback.timeline.kinds import FILE, INFERRED
from walkback.timeline.session import Session
from walkback.timeline.views import approval_counts, approvals, file_calls, file_change

from walkback.cli import cli

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "claude-code"
FILES = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".jsonl", ".json"))
WITH_SUBAGENTS = CORPUS / "vscode-copilot-chat" / "b3a7bd3c-5a10-4e7b-8ff0-7fc0cd6d1093.jsonl"

# path: (events by kind, file changes, agents, denied approvals, status)
EXPECTED: dict[str, tuple[dict[str, int], int, list[str], int, str]] = {
    "claude-code-log/edge_cases.jsonl": (
        {
            "compaction": 1,
            "integrity": 3,
            "message": 10,
            "model_result": 4,
            "other": 2,
            "tool_call": 3,
            "tool_result": 1,
        },
        1,
        ["main"],
        0,
        "unknown",
    ),
    "claude-code-log/representative_messages.jsonl": (
        {"compaction": 1, "message": 7, "model_result": 5, "tool_call": 2, "tool_result": 2},
        1,
        ["main"],
        0,
        "unknown",
    ),
    "claude-code-transcripts/sample_session.json": (
        {"compaction": 1, "message": 13, "tool_call": 12, "tool_result": 12},
        4,
        ["main"],
        0,
        "completed",
    ),
    "claude-reliability/hello-world-script.jsonl": (
        {"message": 4, "model_result": 4, "other": 1, "tool_call": 2, "tool_result": 2},
        1,
        ["main"],
        0,
        "completed",
    ),
    "spotter/258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-a881341.jsonl": (
        {"message": 4, "model_result": 3, "other": 2, "tool_call": 2, "tool_result": 2},
        0,
        ["agent-a881341"],
        0,
        "completed",
    ),
    "spotter/short.jsonl": (
        {
            "approval_decision": 2,
            "checkpoint": 1,
            "message": 7,
            "model_result": 1,
            "other": 3,
            "tool_call": 2,
            "tool_result": 2,
        },
        0,
        ["main"],
        2,
        "cancelled",
    ),
    "spotter/subagent.jsonl": (
        {"checkpoint": 3, "message": 17, "model_result": 17, "other": 26, "tool_call": 25, "tool_result": 25},
        1,
        ["agent-afb92ff", "main"],
        0,
        "completed",
    ),
    "vibecodingtracker/claude_code.jsonl": (
        {
            "approval_decision": 2,
            "message": 23,
            "model_result": 32,
            "other": 1,
            "tool_call": 31,
            "tool_result": 32,
        },
        6,
        ["main"],
        2,
        "unknown",
    ),
    "vscode-copilot-chat/30530d66-37fb-4f3b-aa5f-d92b6a8afae2.jsonl": (
        {"compaction": 1, "message": 8, "model_result": 15, "tool_call": 25, "tool_result": 25},
        1,
        ["main"],
        0,
        "completed",
    ),
    "vscode-copilot-chat/50a7220d-7250-46f3-b38e-b716ce25032e/subagents/agent-a21e2f5.jsonl": (
        {"message": 4, "model_result": 2, "other": 13, "tool_call": 1, "tool_result": 1},
        0,
        ["agent-a21e2f5"],
        0,
        "completed",
    ),
    "vscode-copilot-chat/50a7220d-7250-46f3-b38e-b716ce25032e.jsonl": (
        {"message": 8, "model_result": 4, "other": 14, "tool_call": 2, "tool_result": 2},
        0,
        ["agent-a21e2f5", "main"],
        0,
        "completed",
    ),
    "vscode-copilot-chat/b3a7bd3c-5a10-4e7b-8ff0-7fc0cd6d1093/subagents/agent-a775a67.jsonl": (
        {"message": 4, "model_result": 2, "other": 4, "tool_call": 1, "tool_result": 1},
        0,
        ["agent-a775a67"],
        0,
        "completed",
    ),
    "vscode-copilot-chat/b3a7bd3c-5a10-4e7b-8ff0-7fc0cd6d1093/subagents/agent-aa9d784.jsonl": (
        {"message": 4, "model_result": 2, "other": 6, "tool_call": 1, "tool_result": 1},
        0,
        ["agent-aa9d784"],
        0,
        "completed",
    ),
    "vscode-copilot-chat/b3a7bd3c-5a10-4e7b-8ff0-7fc0cd6d1093/subagents/agent-ac47f8c.jsonl": (
        {"message": 4, "model_result": 2, "other": 7, "tool_call": 1, "tool_result": 1},
        0,
        ["agent-ac47f8c"],
        0,
        "completed",
    ),
    "vscode-copilot-chat/b3a7bd3c-5a10-4e7b-8ff0-7fc0cd6d1093/subagents/agent-ae52dab.jsonl": (
        {"message": 4, "model_result": 2, "other": 5, "tool_call": 1, "tool_result": 1},
        0,
        ["agent-ae52dab"],
        0,
        "completed",
    ),
    "vscode-copilot-chat/b3a7bd3c-5a10-4e7b-8ff0-7fc0cd6d1093.jsonl": (
        {"message": 20, "model_result": 10, "other": 23, "tool_call": 8, "tool_result": 8},
        0,
        ["agent-a775a67", "agent-aa9d784", "agent-ac47f8c", "agent-ae52dab", "main"],
        0,
        "completed",
    ),
}


def test_the_claude_code_corpus_is_there() -> None:
    assert {str(p.relative_to(CORPUS)) for p in FILES} == set(EXPECTED)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_every_corpus_file_loads_with_its_counts(path: Path) -> None:
    kinds, changes, agents, denied, status = EXPECTED[str(path.relative_to(CORPUS))]
    s = load(path)
    assert s.format == "claude-code"
    assert s.kinds() == kinds
    assert len(file_calls(s)) == changes
    assert sorted(s.agents) == agents
    assert approval_counts(approvals(s))["denied"] == denied
    assert s.status == status
    assert all(isinstance(s.detail(i), ToolCall) for i in s.indices_where(kind="tool_call"))


def test_the_parent_with_four_subagents_links_each_to_its_task_call() -> None:
    s = load(WITH_SUBAGENTS)
    children = [a for a in s.agents.values() if a.parent == "main"]
    assert len(children) == 4
    for a in children:
        assert a.spawned_by is not None
        call = s.event(a.spawned_by)
        assert (call.kind, call.tool, call.agent) == ("tool_call", "Task", "main")
        assert a.label == "Bash" and a.outcome == "completed" and a.task.startswith("Run: sleep")
    # interleaved by time: the children's first events come between the parent's calls and results
    agents_in_order = [s.event(i).agent for i in range(len(s))]
    first_child = min(agents_in_order.index(a.id) for a in children)
    last_main = len(agents_in_order) - 1 - agents_in_order[::-1].index("main")
    assert first_child < last_main


def test_the_session_folder_and_the_session_file_are_the_same_session() -> None:
    folder = WITH_SUBAGENTS.with_suffix("")
    assert detect(folder) is claude
    assert load(folder).kinds() == load(WITH_SUBAGENTS).kinds()


def test_a_folder_of_subagents_without_its_session_file_is_a_session_of_them() -> None:
    s = load(CORPUS / "spotter" / "258c7280-ae70-4798-800f-63464d01a85d")
    assert sorted(s.agents) == ["agent-a881341"] and s.agents["agent-a881341"].parent is None


def test_inline_agent_progress_stands_in_for_a_missing_subagent_file() -> None:
    s = load(CORPUS / "spotter" / "subagent.jsonl")
    child = s.agents["agent-afb92ff"]
    assert child.parent == "main" and child.label == "Plan" and child.outcome == "completed"
    assert s.event(child.spawned_by).tool == "Task"
    mine = [i for i in range(len(s)) if s.event(i).agent == child.id]
    kinds = {s.event(i).kind for i in mine}
    assert {"message", "model_result", "tool_call", "tool_result"} <= kinds
    read = next(i for i in mine if s.event(i).kind == "tool_call")
    assert isinstance(s.detail(read), ToolCall) and s.detail(read).name == "Read"
    assert s.event(read).status == "failed"  # EISDIR, inside the copied record


def test_real_edits_carry_pre_and_post_hashes_from_the_original_file() -> None:
    s = load(CORPUS / "vibecodingtracker" / "claude_code.jsonl")
    edits = [file_change(s, int(i)) for i in file_calls(s)]
    done = [fc for fc in edits if fc is not None and fc.tool == "Edit" and fc.pre is not None]
    assert len(done) == 2
    version = next(fc for fc in done if fc.path == ".python-version")
    assert version.pre == text_hash("3.12\n") and version.post == text_hash("3.10\n")
    assert version.patch is not None and "-3.12" in version.patch
    writes = [fc for fc in edits if fc is not None and fc.tool == "Write"]
    assert writes and all(fc.pre == ABSENT and fc.edit.operation == "create" for fc in writes)


def test_user_rejections_in_the_corpus_are_inferred_denials() -> None:
    s = load(CORPUS / "spotter" / "short.jsonl")
    for a in approvals(s):
        assert a.decision == "denied" and a.inferred and a.approver == "user"
        assert s.event(a.request).kind == "tool_call" and s.event(a.request).status == "denied"


# -- mapping rules on hand-written sessions -------------------------------------------------------
SESSION = "11111111-2222-3333-4444-555555555555"
CWD = "/work/repo"
_clock = itertools.count()


def _next_time() -> str:
    k = next(_clock)
    return f"2026-02-10T21:{k // 60 % 60:02d}:{k % 60:02d}.000Z"


def rec(typ: str, uuid: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    """A record with Claude Code's envelope (one second after the previous one)."""
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": CWD,
        "sessionId": SESSION,
        "version": "2.1.38",
        "gitBranch": "main",
        "type": typ,
        "uuid": uuid,
        "timestamp": _next_time(),
        **fields,
    }


def user(uuid: str, parent: str | None, content: Any, **fields: Any) -> dict[str, Any]:
    return rec("user", uuid, parent, message={"role": "user", "content": content}, **fields)


def assistant(
    uuid: str, parent: str | None, mid: str, blocks: list[dict[str, Any]], **usage: int
) -> dict[str, Any]:
    message = {
        "model": "claude-opus-4-6",
        "id": mid,
        "type": "message",
        "role": "assistant",
        "content": blocks,
        "stop_reason": None,
        "usage": {"input_tokens": 3, "output_tokens": 1, **usage},
    }
    return rec("assistant", uuid, parent, message=message, requestId="req_" + mid)


def tool_use(cid: str, name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": cid, "name": name, "input": args}


def result(cid: str, content: Any, *, error: bool = False) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": cid, "content": content, "is_error": error}


def write(path: Path, records: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


def session_of(tmp_path: Path, records: list[Any]) -> Session:
    s = load(write(tmp_path / f"{SESSION}.jsonl", records))
    for i in range(len(s)):
        s.detail(i)
    return s


def kinds_in_order(s: Session) -> list[str]:
    return [s.event(i).kind for i in range(len(s))]


def first(s: Session, kind: str) -> int:
    return s.indices_where(kind=kind)[0]


def test_a_prompt_and_a_reply_are_messages_with_text_and_thinking(tmp_path: Path) -> None:
    s = session_of(
        tmp_path,
        [
            user("u1", None, "fix the build"),
            assistant(
                "a1", "u1", "msg_1", [{"type": "thinking", "thinking": "look first", "signature": "x"}]
            ),
            assistant("a2", "a1", "msg_1", [{"type": "text", "text": "Done."}]),
        ],
    )
    assert kinds_in_order(s) == ["message", "model_result", "message", "message"]
    assert s.task == "fix the build" and s.agents["main"].run == SESSION
    prompt, thought, said = (s.detail(i) for i in s.indices_where(kind="message"))
    assert isinstance(prompt, Message) and prompt.role == "user" and prompt.text == "fix the build"
    assert (
        isinstance(thought, Message)
        and thought.thinking == "look first"
        and thought.model == "claude-opus-4-6"
    )
    assert isinstance(said, Message) and said.text == "Done."
    assert s.status == "completed"


def test_a_response_streamed_over_records_is_one_model_result_with_its_final_usage(tmp_path: Path) -> None:
    s = session_of(
        tmp_path,
        [
            user("u1", None, "go"),
            assistant("a1", "u1", "msg_1", [{"type": "text", "text": "a"}], output_tokens=8),
            assistant("a2", "a1", "msg_1", [{"type": "text", "text": "b"}], output_tokens=8),
            assistant("a3", "a2", "msg_1", [tool_use("toolu_1", "Bash", command="ls")], output_tokens=472),
            user("u2", "a3", [result("toolu_1", "a.txt")]),
            assistant("a4", "u2", "msg_2", [{"type": "text", "text": "c"}], cache_read_input_tokens=5),
        ],
    )
    results = s.indices_where(kind="model_result")
    assert len(results) == 2
    d = s.detail(results[0])
    assert isinstance(d, ModelResult) and d.usage.output_tokens == 472 and d.response_id == "msg_1"
    assert d.model == "claude-opus-4-6" and d.usage.input_tokens == 3
    shown = s.event(results[0])  # where the response starts, read from its last record
    assert shown.line == 4 and shown.ts == s.event(results[0] + 1).ts and s.event(results[0] + 1).line == 2
    last = s.detail(results[1])
    assert isinstance(last, ModelResult) and last.usage.cache_read_tokens == 5


def test_each_tool_use_block_is_a_call_paired_with_its_result_by_id(tmp_path: Path) -> None:
    s = session_of(
        tmp_path,
        [
            user("u1", None, "look"),
            assistant(
                "a1",
                "u1",
                "msg_1",
                [tool_use("toolu_1", "Bash", command="make"), tool_use("toolu_2", "Grep", pattern="TODO")],
            ),
            user(
                "u2", "a1", [result("toolu_2", "x.py:1"), result("toolu_1", "Exit code 2\nboom", error=True)]
            ),
        ],
    )
    calls = s.indices_where(kind="tool_call")
    assert [s.table.sub[i] for i in calls] == [0, 1]
    assert [s.event(i).target for i in calls] == ["make", "TODO"]
    assert [s.event(i).status for i in calls] == ["failed", "ok"]
    res = s.indices_where(kind="tool_result")
    assert [s.event(i).ref for i in res] == [calls[1], calls[0]]
    failed = s.detail(res[1])
    assert (
        isinstance(failed, ToolResult) and not failed.ok and failed.exit_code == 2 and "boom" in failed.error
    )
    call = s.detail(calls[0])
    assert isinstance(call, ToolCall) and call.command == "make" and call.call_id == "toolu_1"


def test_an_edit_with_the_original_file_has_both_hashes_and_honours_replace_all(tmp_path: Path) -> None:
    before = "a = 1\nb = 1\n"
    edit = tool_use(
        "toolu_1", "Edit", file_path=f"{CWD}/src/x.py", old_string="1", new_string="2", replace_all=True
    )
    tur = {
        "filePath": f"{CWD}/src/x.py",
        "oldString": "1",
        "newString": "2",
        "originalFile": before,
        "structuredPatch": [
            {"oldStart": 1, "oldLines": 2, "newStart": 1, "newLines": 2, "lines": ["-a = 1", "+a = 2"]}
        ],
        "replaceAll": True,
    }
    s = session_of(
        tmp_path,
        [
            user("u1", None, "bump"),
            assistant("a1", "u1", "msg_1", [edit]),
            user("u2", "a1", [result("toolu_1", "The file has been updated.")], toolUseResult=tur),
        ],
    )
    i = first(s, "tool_call")
    assert s.table.flags[i] & FILE and s.event(i).target == "src/x.py"
    fc = file_change(s, i)
    assert fc is not None and fc.path == "src/x.py"
    assert fc.pre == text_hash(before) and fc.post == text_hash("a = 2\nb = 2\n")
    assert fc.edit.old_string == "1" and fc.edit.new_string == "2"
    assert fc.patch is not None and fc.patch.startswith("@@ -1,2 +1,2 @@\n-a = 1")


def test_an_edit_whose_old_string_is_not_in_the_file_has_no_guessed_post(tmp_path: Path) -> None:
    edit = tool_use("toolu_1", "Edit", file_path=f"{CWD}/x.py", old_string="zzz", new_string="y")
    s = session_of(
        tmp_path,
        [
            user("u1", None, "go"),
            assistant("a1", "u1", "msg_1", [edit]),
            user("u2", "a1", [result("toolu_1", "ok")], toolUseResult={"originalFile": "abc\n"}),
        ],
    )
    fc = file_change(s, first(s, "tool_call"))
    assert fc is not None and fc.pre == text_hash("abc\n") and fc.post is None


def test_a_write_of_a_new_file_is_a_create_whose_post_is_its_content(tmp_path: Path) -> None:
    s = session_of(
        tmp_path,
        [
            user("u1", None, "go"),
            assistant(
                "a1",
                "u1",
                "msg_1",
                [tool_use("toolu_1", "Write", file_path=f"{CWD}/new.sh", content="echo\n")],
            ),
            user(
                "u2",
                "a1",
                [result("toolu_1", "File created successfully")],
                toolUseResult={
                    "type": "create",
                    "filePath": f"{CWD}/new.sh",
                    "content": "echo\n",
                    "structuredPatch": [],
                },
            ),
        ],
    )
    fc = file_change(s, first(s, "tool_call"))
    assert (
        fc is not None
        and fc.edit.operation == "create"
        and fc.pre == ABSENT
        and fc.post == text_hash("echo\n")
    )


def test_a_multi_edit_applies_its_edits_in_order_and_notebook_edit_is_a_file_change(tmp_path: Path) -> None:
    edits = [
        {"old_string": "a", "new_string": "b"},
        {"old_string": "b", "new_string": "c", "replace_all": True},
    ]
    s = session_of(
        tmp_path,
        [
            user("u1", None, "go"),
            assistant(
                "a1",
                "u1",
                "msg_1",
                [
                    tool_use("toolu_1", "MultiEdit", file_path=f"{CWD}/m.txt", edits=edits),
                    tool_use("toolu_2", "NotebookEdit", notebook_path=f"{CWD}/n.ipynb", new_source="x = 1"),
                ],
            ),
            user(
                "u2",
                "a1",
                [result("toolu_1", "ok")],
                toolUseResult={"originalFile": "ab b\n", "edits": edits},
            ),
        ],
    )
    multi, notebook = (file_change(s, int(i)) for i in file_calls(s))
    assert (
        multi is not None
        and multi.post == text_hash("cc c\n")
        and multi.edit.edits == [("a", "b"), ("b", "c")]
    )
    assert notebook is not None and notebook.path == "n.ipynb" and notebook.pre is None


def test_a_pending_edit_says_what_it_intended(tmp_path: Path) -> None:
    s = session_of(
        tmp_path,
        [
            user("u1", None, "go"),
            assistant(
                "a1",
                "u1",
                "msg_1",
                [tool_use("toolu_1", "Edit", file_path=f"{CWD}/x", old_string="a", new_string="b")],
            ),
        ],
    )
    fc = file_change(s, first(s, "tool_call"))
    assert fc is not None and fc.edit.new_string == "b" and fc.pre is None and fc.result is None


def test_a_rejected_call_is_denied_with_an_inferred_denied_approval(tmp_path: Path) -> None:
    s = session_of(
        tmp_path,
        [
            user("u1", None, "go"),
            assistant("a1", "u1", "msg_1", [tool_use("toolu_1", "Bash", command="rm -rf /")]),
            user(
                "u2",
                "a1",
                [result("toolu_1", "The user doesn't want to proceed with this tool use. STOP.", error=True)],
                toolUseResult="User rejected tool use",
            ),
            user("u3", "u2", [{"type": "text", "text": "[Request interrupted by user for tool use]"}]),
        ],
    )
    call = first(s, "tool_call")
    decision = first(s, "approval_decision")
    assert s.event(call).status == "denied" and s.event(first(s, "tool_result")).status == "denied"
    assert s.event(decision).ref == call and s.table.flags[decision] & INFERRED
    d = s.detail(decision)
    assert isinstance(d, ApprovalDecision) and d.decision == "denied" and d.inferred and d.approver == "user"
    (a,) = approvals(s)
    assert a.gated == call and a.approved is False and a.tool == "Bash"
    assert s.status == "cancelled"


def test_a_call_denied_by_the_permission_settings_is_a_policy_denial(tmp_path: Path) -> None:
    text = "Claude requested permissions to use Write, but you haven't granted it yet."
    s = session_of(
        tmp_path,
        [
            user("u1", None, "go"),
            assistant("a1", "u1", "msg_1", [tool_use("toolu_1", "Write", file_path=f"{CWD}/f", content="x")]),
            user("u2", "a1", [result("toolu_1", text, error=True)]),
        ],
    )
    d = s.detail(first(s, "approval_decision"))
    assert isinstance(d, ApprovalDecision) and d.approver == "policy" and d.decision == "denied"


def test_an_ordinary_error_is_a_failure_not_a_denial(tmp_path: Path) -> None:
    s = session_of(
        tmp_path,
        [
            user("u1", None, "go"),
            assistant("a1", "u1", "msg_1", [tool_use("toolu_1", "Read", file_path=f"{CWD}/d")]),
            user("u2", "a1", [result("toolu_1", "EISDIR: illegal operation on a directory", error=True)]),
        ],
    )
    assert s.event(first(s, "tool_call")).status == "failed" and not s.indices_where(kind="approval_decision")


def test_a_compact_boundary_and_its_summary_message(tmp_path: Path) -> None:
    boundary = rec(
        "system",
        "c1",
        None,
        subtype="compact_boundary",
        content="Conversation compacted",
        compactMetadata={"trigger": "auto", "preTokens": 155000},
        logicalParentUuid="u1",
    )
    s = session_of(
        tmp_path,
        [
            user("u1", None, "go"),
            boundary,
            user(
                "u2",
                "c1",
                "This session is being continued from a previous conversation.",
                isCompactSummary=True,
            ),
            {"type": "summary", "summary": "Fixed the build", "leafUuid": "u2"},
        ],
    )
    assert kinds_in_order(s) == ["message", "compaction", "message", "compaction"]
    d = s.detail(1)
    assert isinstance(d, Compaction) and d.trigger == "auto" and d.tokens_before == 155000
    titled = s.detail(3)
    assert isinstance(titled, Compaction) and titled.summary == "Fixed the build"
    assert s.event(3).ts == s.event(2).ts  # a record without a time takes the one before it


def test_a_compact_summary_without_a_boundary_is_the_compaction(tmp_path: Path) -> None:
    s = session_of(tmp_path, [user("u1", None, "Summary of the earlier context.", isCompactSummary=True)])
    d = s.detail(0)
    assert isinstance(d, Compaction) and d.summary == "Summary of the earlier context."


def test_a_second_prompt_under_one_parent_is_a_branch_parallel_results_are_not(tmp_path: Path) -> None:
    s = session_of(
        tmp_path,
        [
            user("u1", None, "go"),
            assistant("a1", "u1", "msg_1", [tool_use("toolu_1", "Bash", command="a")]),
            assistant("a2", "a1", "msg_1", [tool_use("toolu_2", "Bash", command="b")]),
            user("r1", "a1", [result("toolu_1", "1")], sourceToolAssistantUUID="a1"),
            user("r2", "a2", [result("toolu_2", "2")], sourceToolAssistantUUID="a2"),
            assistant("a3", "r2", "msg_2", [{"type": "text", "text": "done"}]),
            user("u2", "a3", "now test it"),
            user("u2b", "a3", "now lint it"),  # the prompt edited: a second turn after a3
            user("u2b", "a3", "now lint it"),  # a copy of the same record is not a third
        ],
    )
    (b,) = s.indices_where(kind="branch")
    assert s.event(b + 1).kind == "message" and s.event(b).line == s.event(b + 1).line == 8
    d = s.detail(b)
    assert isinstance(d, Branch) and d.parent == "a3" and "edited prompt" in d.reason


def test_snapshots_hooks_progress_and_queue_records_are_kept(tmp_path: Path) -> None:
    snapshot = {
        "type": "file-history-snapshot",
        "messageId": "u1",
        "snapshot": {
            "messageId": "u1",
            "trackedFileBackups": {"a.py": {"backupFileName": "ab@v2"}},
            "timestamp": "x",
        },
        "isSnapshotUpdate": False,
    }
    hook = rec(
        "progress",
        "p1",
        None,
        data={"type": "hook_progress", "hookName": "PreToolUse:Bash", "command": "guard"},
    )
    s = session_of(
        tmp_path,
        [
            {
                "type": "queue-operation",
                "operation": "enqueue",
                "timestamp": "2026-02-10T21:00:00.000Z",
                "content": "hi",
            },
            snapshot,
            hook,
            rec("system", "s1", "p1", subtype="turn_duration", durationMs=1200),
            rec("attachment", "t1", "s1", attachment={"type": "x"}),
        ],
    )
    assert kinds_in_order(s) == ["other", "checkpoint", "other", "other", "other"]
    assert isinstance(s.detail(1), Checkpoint) and "(1 file)" in s.detail(1).label
    summaries = [s.detail(i).summary for i in (0, 2, 3)]
    assert summaries == ["queued input: enqueue hi", "hook PreToolUse:Bash: guard", "the turn took 1200 ms"]
    assert isinstance(s.detail(4), Other) and s.detail(4).type == "attachment"
    assert s.status == "completed"  # the turn ended (turn_duration)


def test_api_errors_and_local_commands(tmp_path: Path) -> None:
    error = assistant("a1", "u1", "msg_e", [{"type": "text", "text": "API Error: 529 overloaded"}])
    error["isApiErrorMessage"] = True
    s = session_of(
        tmp_path,
        [
            user("u1", None, "go"),
            error,
            rec("system", "s1", "a1", subtype="api_error", level="error", error="overloaded"),
            rec("system", "s2", "s1", subtype="local_command", content="<command-name>/model</command-name>"),
        ],
    )
    assert kinds_in_order(s) == ["message", "error", "error", "message"]
    d = s.detail(1)
    assert isinstance(d, Error) and "529" in d.message
    m = s.detail(3)
    assert isinstance(m, Message) and m.role == "system" and "/model" in m.text


def test_a_session_ending_with_unanswered_calls_crashed_and_they_stay_pending(tmp_path: Path) -> None:
    records = [
        user("u1", None, "go"),
        assistant("a1", "u1", "msg_1", [tool_use("toolu_1", "Bash", command="a")]),
        assistant("a2", "a1", "msg_1", [tool_use("toolu_2", "Bash", command="b")]),
        user("r1", "a1", [result("toolu_1", "1")]),
        rec("progress", "p1", "a2", data={"type": "hook_progress", "hookName": "PreToolUse:Bash"}),
    ]
    s = session_of(tmp_path, records)
    assert s.status == "crashed" and len(s.pending()) == 1 and s.event(s.pending()[0]).target == "b"
    later = session_of(tmp_path, [*records, user("u2", "p1", "are you there?")])
    assert later.status == "unknown" and len(later.pending()) == 1


def test_a_session_whose_file_is_being_written_is_running(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    r = user("u1", None, "go")
    r["timestamp"] = now
    assert session_of(tmp_path, [r]).status == "running"


def _subagent_session(
    tmp_path: Path, *, meta: dict[str, Any] | None = None, agent_id_in_result: bool = True
) -> Path:
    main = tmp_path / "proj" / f"{SESSION}.jsonl"
    tur = {
        "status": "completed",
        "prompt": "look around",
        **({"agentId": "a1b2c3d"} if agent_id_in_result else {}),
    }
    write(
        main,
        [
            user("u1", None, "go"),
            assistant(
                "a1",
                "u1",
                "msg_1",
                [
                    tool_use(
                        "toolu_T", "Task", description="scout", prompt="look around", subagent_type="Explore"
                    )
                ],
            ),
            user("u2", "a1", [result("toolu_T", "found it")], toolUseResult=tur),
            assistant("a2", "u2", "msg_2", [{"type": "text", "text": "done"}]),
        ],
    )
    sub = main.with_suffix("") / "subagents" / "agent-a1b2c3d.jsonl"
    child = [
        user("c1", None, "look around", isSidechain=True, agentId="a1b2c3d"),
        assistant("c2", "c1", "msg_c", [tool_use("toolu_c", "Glob", pattern="*.py")]),
        user("c3", "c2", [result("toolu_c", "a.py")]),
    ]
    # the child ran between the parent's call and its result
    for k, r in enumerate(child):
        r["timestamp"] = f"2026-02-10T20:00:0{k}.500Z"
    main_recs = [orjson.loads(x) for x in main.read_bytes().splitlines()]
    for k, r in enumerate(main_recs):
        r["timestamp"] = f"2026-02-10T20:00:0{[0, 0, 5, 6][k]}.000Z"
    write(main, main_recs)
    write(sub, child)
    if meta is not None:
        sub.with_name("agent-a1b2c3d.meta.json").write_bytes(orjson.dumps(meta))
    return main


def test_a_subagent_file_is_a_child_linked_to_its_task_call_by_agent_id(tmp_path: Path) -> None:
    s = load(_subagent_session(tmp_path))
    child = s.agents["agent-a1b2c3d"]
    call = s.event(child.spawned_by)
    assert (call.kind, call.tool, call.target) == ("tool_call", "Task", "scout")
    assert child.parent == "main" and child.label == "Explore" and child.task == "look around"
    assert child.outcome == "completed" and child.run == SESSION
    assert [s.event(i).agent for i in range(len(s))] == ["main"] * 3 + ["agent-a1b2c3d"] * 4 + ["main"] * 3


def test_the_meta_file_links_a_subagent_when_the_result_does_not(tmp_path: Path) -> None:
    meta = {"agentType": "Plan", "description": "scout", "toolUseId": "toolu_T"}
    s = load(_subagent_session(tmp_path, meta=meta, agent_id_in_result=False))
    child = s.agents["agent-a1b2c3d"]
    assert s.event(child.spawned_by).tool == "Task" and child.label == "Plan"


def test_an_unreadable_meta_file_is_counted_not_fatal(tmp_path: Path) -> None:
    main = _subagent_session(tmp_path)
    main.with_suffix("").joinpath("subagents", "agent-a1b2c3d.meta.json").write_bytes(b"{nope")
    s = load(main)
    assert "agent-a1b2c3d" in s.agents and len(s.integrity.skipped) == 1


def test_agent_progress_is_other_when_the_subagent_file_is_read(tmp_path: Path) -> None:
    main = _subagent_session(tmp_path)
    progress = rec(
        "progress",
        "p1",
        "a1",
        data={"type": "agent_progress", "agentId": "a1b2c3d", "message": user("x", None, "look around")},
        parentToolUseID="toolu_T",
    )
    write(main, [*(orjson.loads(x) for x in main.read_bytes().splitlines()), progress])
    s = load(main)
    last = [i for i in range(len(s)) if s.event(i).type == "agent_progress"]
    assert len(last) == 1 and s.event(last[0]).kind == "other" and s.event(last[0]).agent == "main"


def test_a_project_folder_with_one_session_and_the_older_sibling_layout(tmp_path: Path) -> None:
    folder = tmp_path / "proj"
    write(folder / f"{SESSION}.jsonl", [user("u1", None, "go")])
    write(folder / "agent-old1.jsonl", [user("c1", None, "sub", isSidechain=True, agentId="old1")])
    write(folder / "agent-other.jsonl", [{**user("c1", None, "x"), "sessionId": "another"}])
    assert claude.score(folder, b"") == 100
    s = load(folder)
    assert sorted(s.agents) == ["agent-old1", "main"]
    write(folder / "22222222-2222-3333-4444-555555555555.jsonl", [user("u9", None, "two")])
    assert claude.score(folder, b"") == 0  # two sessions: not one


def test_the_web_export_is_read_from_its_loglines(tmp_path: Path) -> None:
    path = tmp_path / "web.json"
    path.write_bytes(
        orjson.dumps(
            {
                "loglines": [
                    {
                        "type": "user",
                        "timestamp": "2025-12-24T10:00:00.000Z",
                        "message": {"role": "user", "content": "hi"},
                    },
                    "not a record",
                    {
                        "type": "assistant",
                        "timestamp": "2025-12-24T10:00:05.000Z",
                        "message": {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
                    },
                ]
            },
            option=orjson.OPT_INDENT_2,
        )
    )
    s = load(path)
    assert kinds_in_order(s) == ["message", "integrity", "message"] and s.status == "completed"
    assert s.where(2).endswith("web.json#/loglines/2")
    (tmp_path / "bad.json").write_bytes(b'{"loglines": [{"type": "user"')
    result = CliRunner().invoke(cli, ["show", str(tmp_path / "bad.json")])
    assert result.exit_code == 2 and "bad.json" in result.output and "Traceback" not in result.output


def test_a_line_that_does_not_parse_is_a_placeholder_with_the_time_before_it(tmp_path: Path) -> None:
    path = write(tmp_path / f"{SESSION}.jsonl", [user("u1", None, "go"), user("u2", "u1", "more")])
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join([lines[0], b'{"type": "user", "mess', lines[1], b""]))
    s = load(path)
    assert kinds_in_order(s) == ["message", "integrity", "message"]
    assert s.event(1).status == "corrupt" and s.event(1).ts == s.event(0).ts


# -- detection ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "line",
    [
        b'{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x"}}',
        b'{"sessionId":"s","projectHash":"p","startTime":"2026","kind":"main"}',
        b'{"type":"user","id":"1","timestamp":"2026","content":"hi"}',
        b'{"type":"session.start","data":{"sessionId":"s"},"id":"e1","timestamp":"2026","parentId":null}',
        b'{"type":"user.message","data":{"content":"hi"},"id":"e2","parentId":"e1"}',
        b'{"v":1,"lsn":0,"type":"run.start"}',
    ],
)
def test_other_json_lines_formats_score_nothing(line: bytes, tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(line + b"\n")
    assert claude.score(path, path.read_bytes()) == 0


def test_a_first_line_longer_than_the_head_still_scores(tmp_path: Path) -> None:
    big = orjson.dumps(user("u1", None, "x" * 100_000))
    path = tmp_path / "big.jsonl"
    path.write_bytes(big + b"\n")
    ranked = scores(path)
    assert ranked[0][1] == "claude-code" and ranked[0][0] > ranked[1][0]


# -- the commands on real files -------------------------------------------------------------------
@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_show_json_and_import_work_on_every_corpus_file(path: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    shown = runner.invoke(cli, ["show", "--json", str(path)])
    assert shown.exit_code == 0, shown.output
    data = orjson.loads(shown.output)
    kinds = EXPECTED[str(path.relative_to(CORPUS))][0]
    assert data["format"] == "claude-code" and data["events"] == sum(kinds.values())
    done = runner.invoke(cli, ["import", str(path), "-o", str(tmp_path / "run")])
    assert done.exit_code == 0, done.output
    res = scan(tmp_path / "run" / "journal.jsonl")
    assert res.intact and res.header is not None
    source = res.header["source"]
    assert source["format"] == "claude-code"
    files = load(path).files()
    assert sorted(f["path"] for f in source["files"]) == sorted(str(p.resolve()) for p in files)
    assert all(len(f["sha256"]) >= 64 for f in source["files"])


def test_a_folder_that_is_no_session_is_one_clear_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["show", str(tmp_path)])
    assert result.exit_code == 2 and "Traceback" not in result.output


# -- mutation fuzz --------------------------------------------------------------------------------
def _project(tmp_path: Path) -> Path:
    """A project folder holding the corpus session with one subagent (the fuzz copies a folder)."""
    src = CORPUS / "vscode-copilot-chat" / "50a7220d-7250-46f3-b38e-b716ce25032e.jsonl"
    folder = tmp_path / "proj"
    folder.mkdir()
    shutil.copy(src, folder / src.name)
    shutil.copytree(src.with_suffix(""), folder / src.stem)
    return folder


SUBAGENT = "50a7220d-7250-46f3-b38e-b716ce25032e/subagents/agent-a21e2f5.jsonl"


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_mutated_sessions_never_raise_a_traceback(path: Path) -> None:
    assert check(path, 300) == []


@pytest.mark.parametrize("target", ["50a7220d-7250-46f3-b38e-b716ce25032e.jsonl", SUBAGENT])
def test_a_mutated_session_folder_never_raises_a_traceback(target: str, tmp_path: Path) -> None:
    folder = _project(tmp_path)
    assert detect(folder) is claude and len(load(folder).agents) == 2
    assert check(folder, 300, target=target) == []


@pytest.mark.soak
def test_ten_thousand_mutated_sessions_never_raise_a_traceback() -> None:
    assert check(CORPUS / "spotter" / "subagent.jsonl", 10_000) == []


@pytest.mark.soak
@pytest.mark.parametrize("target", ["50a7220d-7250-46f3-b38e-b716ce25032e.jsonl", SUBAGENT])
def test_ten_thousand_mutated_session_folders_never_raise_a_traceback(target: str, tmp_path: Path) -> None:
    assert check(_project(tmp_path), 10_000, target=target) == []
