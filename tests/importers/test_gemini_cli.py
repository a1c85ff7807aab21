"""The Gemini CLI importer: both corpus chats with their counts pinned, one test per mapping rule on
a minimal hand-written chat (JSONL and legacy), the commands on real files, and the mutation fuzz."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from fuzz import check
from walkback.importers import detect, load
from walkback.importers.gemini_cli import IMPORTER as gemini
from walkback.journal import scan
from walkback.timeline.details import (
    Branch,
    Compaction,
    Error,
    Message,
    ModelResult,
    ToolCall,
    ToolResult,
    text_hash,
)
from walkback.timeline.views import file_calls, file_change, files_summary

from walkback.cli import cli

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "gemini-cli"
FILES = sorted(p for p in CORPUS.rglob("*") if p.is_file())
OLD = 1_600_000_000

EXPECTED = {
    "vibecodingtracker/gemini.jsonl": (
        {"message": 11, "model_result": 6, "other": 11, "run_start": 1, "tool_call": 12, "tool_result": 12},
        2,
    ),
    "vibecodingtracker/session-legacy.json": (
        {"message": 4, "model_result": 3, "run_start": 1, "tool_call": 7, "tool_result": 7},
        4,
    ),
}
"""Per corpus file: events by kind and file-changing calls (one agent, no approvals)."""


def test_the_gemini_corpus_is_there() -> None:
    assert sorted(str(p.relative_to(CORPUS)) for p in FILES) == sorted(EXPECTED)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_every_corpus_chat_loads_with_its_counts(path: Path) -> None:
    kinds, changes = EXPECTED[str(path.relative_to(CORPUS))]
    s = load(path)
    assert s.format == "gemini-cli" and dict(s.kinds()) == kinds and len(file_calls(s)) == changes
    assert len(s.agents) == 1 and s.status == "unknown" and not s.pending()
    for i in range(len(s)):
        s.detail(i)


def test_the_legacy_chat_hashes_what_write_file_changed() -> None:
    s = load(CORPUS / "vibecodingtracker" / "session-legacy.json")
    files = {f["path"]: f for f in files_summary(s)}
    assert sorted(files) == ["CONTRIBUTING.md", "README.md", "README.zh-CN.md", "README.zh-TW.md"]
    assert files["CONTRIBUTING.md"]["first_pre"] == "absent"
    fc = file_change(s, int(file_calls(s)[0]))
    assert (
        fc is not None and fc.pre == text_hash(fc.edit.pre_text) and fc.post == text_hash(fc.edit.post_text)
    )
    assert fc.patch is not None and fc.patch.startswith("Index: README.md")
    assert s.task.startswith("請幫我依照專案實際狀況更新")


def test_the_jsonl_chat_adds_each_message_version_only_once() -> None:
    s = load(CORPUS / "vibecodingtracker" / "gemini.jsonl")
    lines = [s.event(i).line for i in range(len(s)) if s.event(i).kind == "message"]
    assert len(lines) == len(set(lines))  # a repeated message id never repeats its message
    edit = [file_change(s, int(i)) for i in file_calls(s)]
    assert [(e.tool, e.path) for e in edit if e] == [("write_file", "GEMINI.md"), ("replace", "GEMINI.md")]
    replace = edit[1]
    assert replace is not None and replace.edit.old_string and replace.edit.new_string
    assert s.header["lastUpdated"] == "2026-04-23T12:58:35.591Z"  # the last $set applied


# -- mapping rules, one minimal chat each ---------------------------------------------------------
HEADER = {
    "sessionId": "s-1",
    "projectHash": "ab" * 32,
    "startTime": "2026-01-01T10:00:00.000Z",
    "kind": "main",
}


def chat(tmp_path: Path, *records: dict[str, Any], name: str = "session-2026-01-01T10-00-s-1.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in (HEADER, *records)) + b"\n")
    os.utime(path, (OLD, OLD))
    return path


def msg(mid: str, typ: str, content: Any = "", **fields: Any) -> dict[str, Any]:
    return {"id": mid, "timestamp": "2026-01-01T10:00:01.000Z", "type": typ, "content": content, **fields}


def tool(cid: str, name: str, args: Any, status: str = "success", **fields: Any) -> dict[str, Any]:
    result = [{"functionResponse": {"id": cid, "name": name, "response": {"output": "done"}}}]
    return {"id": cid, "name": name, "args": args, "status": status, "result": result, **fields}


def kinds(s: Any) -> list[str]:
    return [s.event(i).kind for i in range(len(s))]


def test_messages_with_thoughts_and_tokens(tmp_path: Path) -> None:
    tokens = {"input": 100, "output": 5, "cached": 30, "thoughts": 7, "tool": 0, "total": 142}
    thoughts = [{"subject": "Plan", "description": "read first", "timestamp": "2026-01-01T10:00:01.000Z"}]
    s = load(
        chat(
            tmp_path,
            msg("u", "user", [{"text": "hi"}]),
            msg("g", "gemini", "hello", thoughts=thoughts, tokens=tokens, model="gemini-3"),
        )
    )
    assert detect(s.files()[0]) is gemini and s.task == "hi"
    assert kinds(s) == ["run_start", "message", "message", "model_result"]
    said, result = s.detail(2), s.detail(3)
    assert isinstance(said, Message) and said.role == "assistant" and said.text == "hello"
    assert said.thinking == "**Plan** read first" and said.model == "gemini-3"
    assert isinstance(result, ModelResult) and result.usage.input_tokens == 70
    assert (result.usage.cache_read_tokens, result.usage.reasoning_tokens, result.usage.total_tokens) == (
        30,
        7,
        142,
    )


def test_a_message_rewritten_adds_only_what_is_new(tmp_path: Path) -> None:
    first = msg(
        "g", "gemini", "", toolCalls=[tool("c1", "read_file", {"file_path": "a.py"}, status="executing")]
    )
    done = msg("g", "gemini", "", toolCalls=[tool("c1", "read_file", {"file_path": "a.py"})])
    s = load(chat(tmp_path, first, done, done))
    assert kinds(s) == ["run_start", "tool_call", "tool_result", "other"]
    assert s.event(2).ref == 1 and s.event(1).status == "ok" and s.event(1).target == "a.py"
    assert s.event(1).line == 2 and s.event(2).line == 3


def test_tool_calls_pair_with_results_by_index(tmp_path: Path) -> None:
    calls = [
        tool("a", "run_shell_command", '{"command": "ls -l"}'),
        tool("b", "web_fetch", {"url": "https://x.test"}, status="error"),
        tool("c", "write_file", {"file_path": "x", "content": "1"}, status="cancelled"),
    ]
    s = load(chat(tmp_path, msg("g", "gemini", "", toolCalls=calls)))
    assert [(s.event(i).kind, s.table.sub[i], s.event(i).status) for i in range(1, len(s))] == [
        ("tool_call", 0, "ok"),
        ("tool_result", 0, "ok"),
        ("tool_call", 1, "failed"),
        ("tool_result", 1, "failed"),
        ("tool_call", 2, "denied"),
        ("tool_result", 2, "denied"),
    ]
    shell, fetch = s.detail(1), s.detail(3)
    assert (
        isinstance(shell, ToolCall) and shell.command == "ls -l" and shell.arguments == {"command": "ls -l"}
    )
    assert isinstance(fetch, ToolCall) and fetch.url == "https://x.test"
    out = s.detail(2)
    assert isinstance(out, ToolResult) and out.output == "done" and out.ok


def test_a_call_still_running_at_the_end_is_pending(tmp_path: Path) -> None:
    s = load(
        chat(tmp_path, msg("g", "gemini", "", toolCalls=[tool("c", "run_shell_command", {}, "executing")]))
    )
    assert s.pending() == [1] and s.status == "crashed"


def test_write_file_and_replace_are_file_changes_with_hashes(tmp_path: Path) -> None:
    new = {"fileDiff": "--- a\n+++ b\n", "originalContent": "", "newContent": "hi\n", "isNewFile": True}
    old = {
        "fileDiff": "@@ -1 +1 @@",
        "originalContent": "a = 1\n",
        "newContent": "a = 2\n",
        "isNewFile": False,
    }
    calls = [
        tool("w", "write_file", {"file_path": "n.txt", "content": "hi\n"}, resultDisplay=new),
        tool(
            "r",
            "replace",
            {"file_path": "a.py", "old_string": "1", "new_string": "2"},
            resultDisplay=orjson.dumps(old).decode(),
        ),
    ]
    s = load(chat(tmp_path, msg("g", "gemini", "", toolCalls=calls)))
    wrote, replaced = (file_change(s, int(i)) for i in file_calls(s))
    assert wrote and (wrote.pre, wrote.post, wrote.edit.operation) == ("absent", text_hash("hi\n"), "create")
    assert replaced and (replaced.pre, replaced.post) == (text_hash("a = 1\n"), text_hash("a = 2\n"))
    assert (replaced.edit.old_string, replaced.edit.new_string, replaced.patch) == ("1", "2", "@@ -1 +1 @@")


def test_set_rewind_errors_and_info(tmp_path: Path) -> None:
    s = load(
        chat(
            tmp_path,
            msg("i", "info", "Request cancelled."),
            {"$set": {"lastUpdated": "2026-01-01T10:00:05.000Z", "summary": "a chat"}},
            msg("e", "error", "quota exceeded"),
            {"$rewindTo": "i"},
            {"$set": {"messages": [msg("i", "user", "again")]}},
            {"weird": 1},
        )
    )
    assert kinds(s) == ["run_start", "message", "other", "error", "branch", "compaction", "other"]
    assert s.header["summary"] == "a chat" and s.header["sessionId"] == "s-1"
    info, err, rewind, history = s.detail(1), s.detail(3), s.detail(4), s.detail(5)
    assert isinstance(info, Message) and info.role == "info"
    assert isinstance(err, Error) and err.message == "quota exceeded"
    assert isinstance(rewind, Branch) and rewind.parent == "i"
    assert isinstance(history, Compaction) and "1 messages" in history.summary


def test_subagent_chats_load_as_child_agents(tmp_path: Path) -> None:
    path = chat(tmp_path, msg("u", "user", "go"))
    (tmp_path / "s-1").mkdir()
    sub = {**HEADER, "sessionId": "sub-7", "kind": "subagent"}
    (tmp_path / "s-1" / "sub-7.jsonl").write_bytes(
        orjson.dumps(sub) + b"\n" + orjson.dumps(msg("x", "user", "look")) + b"\n"
    )
    s = load(path)
    assert set(s.agents) == {"main", "agent-sub-7"}
    child = s.agents["agent-sub-7"]
    assert child.parent == "main" and child.task == "look" and s.task == "go"
    assert s.agents["main"].events == child.events == 2  # interleaved by time, each file in its order


def test_a_legacy_document_without_messages_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "session-x.json"
    path.write_text('{"sessionId": "s", "projectHash": "p", "messages": 3}')
    result = CliRunner().invoke(cli, ["show", str(path)])
    assert result.exit_code == 2 and "no messages array" in result.output and "Traceback" not in result.output


# -- the commands on real files -------------------------------------------------------------------
@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_show_json_and_import_work_on_every_chat(path: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    shown = runner.invoke(cli, ["show", "--json", str(path)])
    assert shown.exit_code == 0, shown.output
    data = orjson.loads(shown.output)
    assert data["format"] == "gemini-cli"
    assert data["events"] == sum(EXPECTED[str(path.relative_to(CORPUS))][0].values())
    done = runner.invoke(cli, ["import", str(path), "-o", str(tmp_path / "run")])
    assert done.exit_code == 0, done.output
    res = scan(tmp_path / "run" / "journal.jsonl")
    assert res.intact and res.header is not None and res.header["source"]["format"] == "gemini-cli"


# -- mutation fuzz --------------------------------------------------------------------------------
@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_mutated_chats_never_raise_a_traceback(path: Path) -> None:
    assert check(path, 300) == []


@pytest.mark.soak
@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_ten_thousand_mutated_chats_never_raise_a_traceback(path: Path) -> None:
    assert check(path, 10_000) == []
