"""The Cline importer: two task folders written as Cline and Roo Code write them (there is none in
the shared corpus; see ``test_cline/make_fixtures.py``) with their counts pinned, one test per
mapping rule on a minimal task, the commands, and the mutation fuzz."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from fuzz import check
from walkback.importers import detect, load
from walkback.journal import scan
from walkback.timeline.details import (
    ApprovalDecision,
    Checkpoint,
    Message,
    ModelResult,
    RunStart,
    ToolCall,
    ToolResult,
    text_hash,
)
from walkback.timeline.kinds import FILE, INFERRED
from walkback.timeline.views import approvals, file_calls, file_change, files_summary

from walkback.cli import cli

HERE = Path(__file__).parent / "test_cline"
CLINE = HERE / "1733145600000"
ROO = HERE / "roo-8d2e41f0-crashed"
OLD = 1_600_000_000
EXPECTED = {
    CLINE.name: {
        "run_start": 1,
        "message": 6,
        "model_call": 6,
        "model_result": 6,
        "tool_call": 5,
        "tool_result": 5,
        "approval_request": 3,
        "approval_decision": 3,
        "checkpoint": 2,
        "run_end": 1,
        "other": 1,
    },
    ROO.name: {
        "run_start": 1,
        "message": 2,
        "model_call": 2,
        "model_result": 2,
        "tool_call": 3,
        "tool_result": 1,
        "approval_request": 3,
        "approval_decision": 1,
    },
}


@pytest.fixture(autouse=True)
def _old_files() -> None:
    for p in HERE.rglob("*.json"):
        os.utime(p, (OLD, OLD))


def test_the_cline_task_loads_with_its_counts() -> None:
    s = load(CLINE)
    assert s.format == "cline" and dict(s.kinds()) == EXPECTED[CLINE.name] and s.status == "completed"
    assert len(file_calls(s)) == 3 and not s.pending() and list(s.agents) == ["main"]
    assert (
        s.task == "Fix the add function in src/calc.py and add a test" and s.agents["main"].run == CLINE.name
    )
    decided = [(a.decision, a.inferred, a.tool) for a in approvals(s)]
    assert decided == [
        ("approved", True, "replace_in_file"),
        ("approved", True, "execute_command"),
        ("denied", True, "replace_in_file"),
    ]
    files = {f["path"]: f for f in files_summary(s)}
    assert files["tests/test_calc.py"]["first_pre"] == "absent" and files["src/calc.py"]["changes"] == 2
    start = s.detail(0)
    assert isinstance(start, RunStart) and start.producer == "cline" and start.workspace == "/home/dev/calc"
    assert start.model == "claude-sonnet-4-20250514"
    for i in range(len(s)):
        s.detail(i)


def test_an_approved_edit_gets_the_saved_file_as_its_post_image() -> None:
    s = load(CLINE)
    fc = file_change(s, int(file_calls(s)[0]))
    assert fc is not None and fc.tool == "replace_in_file" and fc.path == "src/calc.py"
    assert fc.edit.old_string == "def add(a, b):\n    return a - b\n"
    assert fc.edit.new_string == "def add(a, b):\n    return a + b\n"
    saved = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
    assert fc.edit.post_text == saved and fc.post == text_hash(saved)
    result = s.detail(fc.result) if fc.result is not None else None
    assert (
        isinstance(result, ToolResult)
        and result.ok
        and result.output.startswith("The content was successfully")
    )


def test_the_roo_task_stops_with_an_edit_and_a_command_in_flight() -> None:
    s = load(ROO)
    assert dict(s.kinds()) == EXPECTED[ROO.name] and s.status == "crashed"
    edit, cmd = s.pending()
    assert s.event(edit).tool == "apply_diff" and s.event(cmd).tool == "execute_command"
    d = s.detail(edit)
    assert isinstance(d, ToolCall) and d.edit is not None and d.edit.old_string == "console.log('hi');\n"
    assert d.edit.new_string == "console.log('hello world');\n"  # Roo's :start_line: and ------- left out
    assert isinstance(s.detail(0), RunStart) and s.detail(0).producer == "roo-code"  # type: ignore[union-attr]
    first = s.detail(1)
    assert isinstance(first, Message) and first.role == "user"  # Roo starts with a say: text
    auto = approvals(s)[0]
    assert auto.decision == "approved" and auto.approver == "policy" and not auto.inferred


# -- minimal tasks ----------------------------------------------------------------------------------
T0 = 1733145600000


def say(kind: str, text: Any = "", ts: int = 0, **fields: Any) -> dict[str, Any]:
    body = text if isinstance(text, str) else json.dumps(text)
    return {"ts": T0 + ts, "type": "say", "say": kind, "text": body, **fields}


def ask(kind: str, text: Any = "", ts: int = 0, **fields: Any) -> dict[str, Any]:
    body = text if isinstance(text, str) else json.dumps(text)
    return {"ts": T0 + ts, "type": "ask", "ask": kind, "text": body, **fields}


def user(*blocks: Any) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [b if isinstance(b, dict) else {"type": "text", "text": b} for b in blocks],
    }


def task(tmp_path: Path, ui: list[dict[str, Any]], api: list[dict[str, Any]] | None = None) -> Path:
    folder = tmp_path / str(T0)
    folder.mkdir(exist_ok=True)
    (folder / "ui_messages.json").write_text(json.dumps(ui))
    if api is not None:
        (folder / "api_conversation_history.json").write_text(json.dumps(api))
    for p in folder.iterdir():
        os.utime(p, (OLD, OLD))
    return folder


def kinds(s: Any) -> list[tuple[str, str]]:
    return [(e.kind, e.status) for e in s.events()]


def test_the_task_starts_the_run_and_is_the_first_prompt(tmp_path: Path) -> None:
    s = load(task(tmp_path, [say("task", "do it", modelInfo={"modelId": "m-1"}), say("text", "ok", 5)]))
    assert [e.kind for e in s.events()] == ["run_start", "message", "message"]
    assert s.event(0).ts == pytest.approx(T0 / 1000) and s.event(2).ts == pytest.approx((T0 + 5) / 1000)
    assert isinstance(s.detail(1), Message) and s.detail(1).role == "user"  # type: ignore[union-attr]
    assert s.detail(2).role == "assistant" and s.status == "unknown"  # type: ignore[union-attr]


def test_an_api_request_with_tokens_and_cost(tmp_path: Path) -> None:
    info = {"request": "<task>x</task>", "tokensIn": 10, "tokensOut": 20, "cacheReads": 30, "cacheWrites": 40}
    cancelled = {"request": "y", "cancelReason": "user_cancelled", "streamingFailedMessage": "stopped"}
    s = load(
        task(
            tmp_path,
            [
                say("task", "x"),
                say("api_req_started", {**info, "cost": 0.5}),
                say("api_req_started", cancelled),
            ],
        )
    )
    assert kinds(s)[2:] == [
        ("model_call", ""),
        ("model_result", "ok"),
        ("model_call", ""),
        ("model_result", "failed"),
    ]
    r = s.detail(3)
    assert isinstance(r, ModelResult) and r.cost == 0.5 and s.event(3).ref == 2
    u = r.usage
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens) == (10, 20, 30, 40)
    failed = s.detail(5)
    assert isinstance(failed, ModelResult) and failed.stop_reason == "user_cancelled"


EDIT = {
    "tool": "editedExistingFile",
    "path": "a.py",
    "content": "------- SEARCH\nx\n=======\ny\n+++++++ REPLACE",
}


def test_an_approved_edit_is_an_inferred_approval_and_a_file_change(tmp_path: Path) -> None:
    ui = [say("task", "t"), ask("tool", EDIT, 1), say("api_req_started", {"request": "r", "cost": 0.1}, 2)]
    api = [user("t"), {"role": "assistant", "content": [{"type": "text", "text": "<replace_in_file>"}]}]
    api.append(
        user(
            "[replace_in_file for 'a.py'] Result:",
            "The content was successfully saved to a.py.\n\n"
            '<final_file_content path="a.py">\ny\n\n</final_file_content>',
        )
    )
    s = load(task(tmp_path, ui, api))
    assert [e.kind for e in s.events()] == [
        "run_start",
        "message",
        "approval_request",
        "tool_call",
        "approval_decision",
        "tool_result",
        "model_call",
        "model_result",
    ]
    assert s.table.flags[3] & FILE and s.gated[2] == 3 and s.table.flags[4] & INFERRED
    decision = s.detail(4)
    assert isinstance(decision, ApprovalDecision) and decision.inferred and decision.decision == "approved"
    fc = file_change(s, 3)
    assert (
        fc is not None
        and fc.edit.old_string == "x\n"
        and fc.edit.new_string == "y\n"
        and fc.post == text_hash("y\n")
    )
    assert s.where(5).endswith("api_conversation_history.json#/2")


def test_a_denied_edit(tmp_path: Path) -> None:
    ui = [
        say("task", "t"),
        ask("tool", EDIT, 1),
        say("user_feedback", "no", 2),
        say("api_req_started", {"request": "r"}, 3),
    ]
    api = [
        user("t"),
        user(
            "[replace_in_file for 'a.py'] Result:",
            "The user denied this operation. The file was not updated.",
        ),
    ]
    s = load(task(tmp_path, ui, api))
    assert s.event(3).status == "denied" and approvals(s)[0].approved is False
    res = s.detail(6)
    assert isinstance(res, ToolResult) and res.ok is False and res.error.startswith("The user denied")


def test_a_new_file_is_a_create_with_its_hash(tmp_path: Path) -> None:
    made = {"tool": "newFileCreated", "path": "n.py", "content": "print(1)\n"}
    s = load(task(tmp_path, [say("task", "t"), say("tool", made, 1)]))
    fc = file_change(s, 2)
    assert (
        fc is not None
        and fc.tool == "write_to_file"
        and fc.pre == "absent"
        and fc.post == text_hash("print(1)\n")
    )
    assert fc.edit.operation == "create" and s.pending() == [2] and s.status == "crashed"


def test_a_command_with_its_output_and_the_result_quoted_in_the_next_request(tmp_path: Path) -> None:
    quoted = (
        "[execute_command for 'make test'] Result:\nCommand executed.\nOutput:\nok\n\n<environment_details>x"
    )
    ui = [
        say("task", "t"),
        ask("command", "make test", 1),
        say("command_output", "ok", 2),
        say("api_req_started", {"request": quoted}, 3),
    ]
    s = load(task(tmp_path, ui))  # no API history: the request the result went out with quotes it
    call = s.detail(3)
    assert isinstance(call, ToolCall) and call.command == "make test" and call.name == "execute_command"
    res = s.detail(6)
    assert isinstance(res, ToolResult) and res.ok and res.output == "Command executed.\nOutput:\nok"
    assert not s.table.flags[6] & INFERRED and s.event(4).kind == "other"


def test_a_result_nothing_quotes_is_inferred(tmp_path: Path) -> None:
    ui = [
        say("task", "t"),
        say("tool", {"tool": "readFile", "path": "a.py"}, 1),
        say("api_req_started", {}, 2),
    ]
    s = load(task(tmp_path, ui))
    assert s.event(3).kind == "tool_result" and s.table.flags[3] & INFERRED and s.event(2).status == "ok"


def test_native_tool_results_pair_through_their_tool_use(tmp_path: Path) -> None:
    ui = [
        say("task", "t"),
        say("tool", {"tool": "readFile", "path": "a.py"}, 1),
        say("api_req_started", {}, 2),
    ]
    use = {"type": "tool_use", "id": "toolu_9", "name": "read_file", "input": {"path": "a.py"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_9", "content": [{"type": "text", "text": "x = 1"}]}
    s = load(task(tmp_path, ui, [user("t"), {"role": "assistant", "content": [use]}, user(result)]))
    res = s.detail(3)
    assert isinstance(res, ToolResult) and res.call_id == "toolu_9" and res.output == "x = 1"


def test_a_checkpoint_carries_its_shadow_git_commit(tmp_path: Path) -> None:
    s = load(
        task(tmp_path, [say("task", "t"), say("checkpoint_created", "", 1, lastCheckpointHash="ab" * 20)])
    )
    d = s.detail(2)
    assert isinstance(d, Checkpoint) and d.git == "ab" * 20


def test_a_resumed_task_fails_what_was_cut_off(tmp_path: Path) -> None:
    s = load(task(tmp_path, [say("task", "t"), ask("tool", EDIT, 1), ask("resume_task", "", 9)]))
    assert s.event(3).status == "failed" and not s.pending() and approvals(s)[0].decision is None


def test_a_partial_tool_message_is_no_tool_use(tmp_path: Path) -> None:
    s = load(task(tmp_path, [say("task", "t"), ask("tool", EDIT, 1, partial=True)]))
    assert [e.kind for e in s.events()] == ["run_start", "message", "other"] and not s.pending()


# -- detection, bad input, the commands -----------------------------------------------------------
def test_detection_of_the_folder_and_its_files(tmp_path: Path) -> None:
    folder = task(tmp_path, [say("task", "t")], [user("t")])
    for p in (folder, folder / "ui_messages.json", folder / "api_conversation_history.json"):
        assert detect(p).name == "cline"
    assert load(folder / "api_conversation_history.json").task == "t"


def test_ui_messages_that_are_not_an_array_are_one_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "ui_messages.json").write_text('{"ts": 1}')
    result = CliRunner().invoke(cli, ["show", str(folder)])
    assert result.exit_code == 2 and "not the array of messages" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("folder", [CLINE, ROO], ids=lambda p: p.name)
def test_show_json_and_import_work(folder: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    shown = runner.invoke(cli, ["show", "--json", str(folder)])
    assert shown.exit_code == 0, shown.output
    data = orjson.loads(shown.output)
    fmt = "roo-code" if folder == ROO else "cline"  # one layout, two formats
    assert data["format"] == fmt and data["events"] == sum(EXPECTED[folder.name].values())
    done = runner.invoke(cli, ["import", str(folder), "-o", str(tmp_path / "run")])
    assert done.exit_code == 0, done.output
    res = scan(tmp_path / "run" / "journal.jsonl")
    assert res.intact and res.header is not None and res.header["source"]["format"] == fmt


def test_a_damaged_message_is_a_row_with_its_line_and_the_others_stay(tmp_path: Path) -> None:
    """Each message is parsed alone: one that is not JSON is a placeholder row, not the end."""
    folder = tmp_path / "t"
    shutil.copytree(CLINE, folder)
    ui = folder / "ui_messages.json"
    messages = orjson.loads(ui.read_bytes())
    parts = [orjson.dumps(m) for m in messages]
    parts[3] = parts[3].replace(b'"say":', b'"say" ', 1)  # a colon lost inside the fourth message
    ui.write_bytes(b"[" + b",".join(parts) + b"]")
    s = load(folder)
    rows = [i for i in range(len(s)) if s.event(i).status == "corrupt"]
    assert len(rows) == 1 and "not JSON: unexpected character" in s.raw(rows[0])["reason"]
    assert sum(s.kinds().values()) >= sum(EXPECTED[CLINE.name].values()) - 2


def test_a_cut_message_file_keeps_what_came_before(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    shutil.copytree(CLINE, folder)
    ui = folder / "ui_messages.json"
    data = ui.read_bytes()
    ui.write_bytes(data[: len(data) // 2])
    s = load(folder)
    torn = [i for i in range(len(s)) if s.event(i).status == "torn"]
    assert len(torn) == 1 and s.event(torn[0]).kind == "integrity"
    assert s.kinds().get("message", 0) >= 2


def test_a_damaged_api_message_is_counted_as_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    shutil.copytree(CLINE, folder)
    api = folder / "api_conversation_history.json"
    parts = [orjson.dumps(m) for m in orjson.loads(api.read_bytes())]
    parts[2] = parts[2].replace(b'"role":', b'"role" ', 1)
    api.write_bytes(b"[" + b",".join(parts) + b"]")
    s = load(folder)
    skipped = [x for x in s.integrity.skipped if x["file"] == str(api)]
    assert len(skipped) == 1 and skipped[0]["reason"].startswith("API message 2: ")
    assert "not JSON" in skipped[0]["reason"]
    assert dict(s.kinds())["tool_call"] == EXPECTED[CLINE.name]["tool_call"]


# -- mutation fuzz --------------------------------------------------------------------------------
FUZZED = [(CLINE, "ui_messages.json"), (CLINE, "api_conversation_history.json"), (ROO, "ui_messages.json")]


@pytest.mark.parametrize(("folder", "target"), FUZZED, ids=lambda x: getattr(x, "name", x))
def test_mutated_tasks_never_raise_a_traceback(folder: Path, target: str) -> None:
    assert check(folder, 300, target=target) == []


@pytest.mark.soak
@pytest.mark.parametrize(("folder", "target"), FUZZED, ids=lambda x: getattr(x, "name", x))
def test_ten_thousand_mutated_tasks_never_raise_a_traceback(folder: Path, target: str) -> None:
    assert check(folder, 10_000, target=target) == []
