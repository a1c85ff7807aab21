"""Postmortem of crashed foreign sessions (Claude Code, Aider, Cline, and a synthetic one for
patches) on real git workspaces: each verdict, the brief, ``--apply`` with its journal beside the
session, refusals, exit codes and the stable ``--json``."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from walkback.importers import load
from walkback.journal import scan
from walkback.journal.reader import Scanner
from walkback.journal.record import sha256_bytes
from walkback.timeline.builder import SessionBuilder
from walkback.timeline.details import Detail, FileEdit, ToolCall
from walkback.timeline.kinds import FILE
from walkback.timeline.postmortem import analyze, apply, beside
from walkback.timeline.session import Session

from walkback.cli import cli

OLD = 1_600_000_000
ORIGINAL = "x = 1\ny = 2\n"


def git(ws: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    return subprocess.run(
        ["git", "-C", str(ws), *args], check=True, capture_output=True, text=True, env=env
    ).stdout


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A git repository with ``a.py`` committed."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "a.py").write_text(ORIGINAL)
    git(root, "add", ".")
    git(root, "commit", "-qm", "init")
    return root


def claude_session(tmp_path: Path, ws: Path, *calls: dict[str, Any]) -> Path:
    """A Claude Code transcript that stops after an assistant message with these tool uses."""
    env = {"sessionId": "s-1", "cwd": str(ws), "version": "2.0.0", "timestamp": "2026-01-01T10:00:00.000Z"}
    uses = [{"type": "tool_use", "id": f"toolu_{k}", **c} for k, c in enumerate(calls)]
    asked = {"role": "user", "content": "rename x to z, then test"}
    said = {
        "id": "msg_1",
        "role": "assistant",
        "model": "claude-x",
        "usage": {"input_tokens": 3},
        "content": uses,
    }
    lines = [
        {"type": "user", "uuid": "u1", "parentUuid": None, **env, "message": asked},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", **env, "message": said},
    ]
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(x) for x in lines) + b"\n")
    os.utime(path, (OLD, OLD))
    return path


def edit(ws: Path, old: str, new: str, path: Path | None = None) -> dict[str, Any]:
    target = str(path if path is not None else ws / "a.py")
    return {"name": "Edit", "input": {"file_path": target, "old_string": old, "new_string": new}}


def recover(*args: str) -> Any:
    return CliRunner().invoke(cli, ["recover", *args])


# -- the three verdicts on an Edit (Claude Code) ------------------------------------------------------
def test_an_edit_whose_new_text_is_there_was_applied(tmp_path: Path, ws: Path) -> None:
    (ws / "a.py").write_text("z = 1\ny = 2\n")
    pm = analyze(load(claude_session(tmp_path, ws, edit(ws, "x = 1\n", "z = 1\n"))), ws, source="s")
    [f] = pm.findings
    assert (f.finding, f.action, f.tool, f.target, f.call) == ("applied", "commit", "Edit", "a.py", 1)
    assert pm.completed_through == 0 and pm.calls == 1 and not pm.needs_human
    assert "Tool call 1 (step 3) Edit of a.py was applied; its result was never recorded" in pm.brief


def test_an_edit_whose_old_text_is_there_was_not_applied_and_is_redone(tmp_path: Path, ws: Path) -> None:
    session = claude_session(tmp_path, ws, edit(ws, "x = 1\n", "z = 1\n"))
    result = recover(str(session), "--workspace", str(ws))
    assert result.exit_code == 0, result.output
    assert "not_applied  redo" in result.output and (ws / "a.py").read_text() == ORIGINAL  # nothing changed
    result = recover(str(session), "--workspace", str(ws), "--apply")
    assert result.exit_code == 0, result.output
    assert (ws / "a.py").read_text() == "z = 1\ny = 2\n"
    assert "redone from the recorded text; the new hash sha256:" in result.output
    journal = beside(session) / "journal.jsonl"
    types = [r.data["type"] for r in Scanner(journal)]
    assert types == ["run.start", "intent", "recovery", "commit"] and scan(journal).intact
    intent, decision, commit = (r.data for r in list(Scanner(journal))[1:])
    assert intent["source_step"] == 3 and intent["pre"] == sha256_bytes(ORIGINAL.encode())
    assert intent["post"] == sha256_bytes(b"z = 1\ny = 2\n") and intent["post_image"] == {
        "text": "z = 1\ny = 2\n"
    }
    assert (decision["finding"], decision["action"]) == ("not_applied", "redo") and commit[
        "recovered"
    ] is True
    assert session.read_bytes().count(b"\n") == 2  # the agent's own file is never written
    again = recover(str(session), "--workspace", str(ws), "--apply", "--json")
    assert again.exit_code == 0 and "settled by an earlier postmortem" in again.output
    assert len(list(Scanner(journal))) == 4  # a second run changes nothing


def test_an_edit_with_neither_text_there_is_torn_and_needs_a_human(tmp_path: Path, ws: Path) -> None:
    (ws / "a.py").write_text("w = 9\n")
    session = claude_session(tmp_path, ws, edit(ws, "x = 1\n", "z = 1\n"))
    result = recover(str(session), "--workspace", str(ws), "--apply")
    assert result.exit_code == 3, result.output
    assert "torn" in result.output and "look at a.py by hand" in result.output
    assert (ws / "a.py").read_text() == "w = 9\n"  # never touched
    decisions = [r.data for r in Scanner(beside(session) / "journal.jsonl") if r.data["type"] == "recovery"]
    assert [(d["finding"], d["action"]) for d in decisions] == [("torn", "ask_human")]


def test_a_write_by_the_hash_of_its_content_and_a_command_in_doubt(tmp_path: Path, ws: Path) -> None:
    write = {"name": "Write", "input": {"file_path": str(ws / "new.py"), "content": "print(1)\n"}}
    bash = {"name": "Bash", "input": {"command": "npm test"}}
    session = claude_session(tmp_path, ws, write, bash)
    pm = analyze(load(session), ws, source=str(session))
    assert [(f.tool, f.finding, f.action) for f in pm.findings] == [
        ("Write", "not_applied", "redo"),
        ("Bash", "in_doubt", "ask_human"),
    ]
    assert "the Bash `npm test` is in doubt" in pm.brief.replace("Tool call 2 (step 4) Bash", "the Bash")
    assert "rerun `npm test` if that is safe" in pm.brief and pm.needs_human
    result = recover(str(session), "--workspace", str(ws), "--apply", "--json")
    assert result.exit_code == 3
    data = json.loads(result.output)
    assert sorted(data) == ["brief", "calls", "completed_through", "findings", "format", "journal", "session"]
    assert data["format"] == "claude-code" and data["findings"][0]["outcome"].startswith("redone")
    assert sorted(data["findings"][1]) == [
        "action",
        "call",
        "detail",
        "finding",
        "outcome",
        "step",
        "target",
        "tool",
    ]
    assert (ws / "new.py").read_text() == "print(1)\n"
    pm = analyze(load(session), ws)
    assert pm.findings[0].finding == "applied"  # the file now hashes to the Write's content


def test_the_workspace_defaults_to_the_one_the_session_recorded(tmp_path: Path, ws: Path) -> None:
    session = claude_session(tmp_path, ws, edit(ws, "x = 1\n", "z = 1\n"))
    assert recover(str(session)).exit_code == 0
    gone = claude_session(tmp_path, tmp_path / "nowhere", edit(ws, "x = 1\n", "z = 1\n"))
    result = recover(str(gone))
    assert result.exit_code == 1 and "is not a directory; pass --workspace DIR" in result.output


# -- refusals --------------------------------------------------------------------------------------
def test_a_target_outside_the_workspace_is_never_touched(tmp_path: Path, ws: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text(ORIGINAL)
    (ws / "link.py").symlink_to(outside)
    (ws / "sub").symlink_to(tmp_path, target_is_directory=True)
    calls = [edit(ws, "x = 1\n", "z\n", p) for p in (outside, ws / "link.py", ws / "sub" / "outside.py")]
    session = claude_session(tmp_path, ws, *calls)
    result = recover(str(session), "--workspace", str(ws), "--apply", "--json")
    assert result.exit_code == 3
    details = [f["detail"] for f in json.loads(result.output)["findings"]]
    assert "outside the workspace" in details[0] and "symbolic link" in details[1]
    assert "outside the workspace" in details[2]
    assert outside.read_text() == ORIGINAL


def test_a_file_changed_after_classification_is_not_redone(tmp_path: Path, ws: Path) -> None:
    session = claude_session(tmp_path, ws, edit(ws, "x = 1\n", "z = 1\n"))
    pm = analyze(load(session), ws, source=str(session))
    (ws / "a.py").write_text("x = 1\ny = 3\n")  # someone edits it between the look and the act
    pm = apply(pm, beside(session))
    [f] = pm.findings
    assert not f.done and f.action == "ask_human" and "changed since it was classified" in f.outcome
    assert (ws / "a.py").read_text() == "x = 1\ny = 3\n"
    assert [r.data["type"] for r in Scanner(beside(session))][-1] == "fail"


# -- other importers' sessions ------------------------------------------------------------------------
def test_a_crashed_aider_history(tmp_path: Path, ws: Path) -> None:
    block = "a.py\n```python\n<<<<<<< SEARCH\nx = 1\n=======\nz = 1\n>>>>>>> REPLACE\n```"
    history = tmp_path / ".aider.chat.history.md"
    history.write_text(f"\n# aider chat started at 2024-08-05 19:33:02\n\n#### rename  \n\n{block}\n\n")
    os.utime(history, (OLD, OLD))
    result = recover(str(history), "--workspace", str(ws), "--apply")
    assert result.exit_code == 0, result.output
    assert (ws / "a.py").read_text() == "z = 1\ny = 2\n" and "aider session" in result.output


def test_a_crashed_cline_task(tmp_path: Path, ws: Path) -> None:
    diff = "------- SEARCH\ny = 2\n=======\ny = 3\n+++++++ REPLACE"
    folder = tmp_path / "1733145600000"
    folder.mkdir()
    tool = json.dumps({"tool": "editedExistingFile", "path": "a.py", "content": diff})
    ui = [
        {"ts": 1733145600000, "type": "say", "say": "task", "text": "bump y"},
        {"ts": 1733145601000, "type": "ask", "ask": "tool", "text": tool},
        {"ts": 1733145602000, "type": "ask", "ask": "command", "text": "pytest -q"},
    ]
    (folder / "ui_messages.json").write_text(json.dumps(ui))
    (ws / "a.py").write_text("x = 1\ny = 3\n")  # the edit landed, then the editor died
    result = recover(str(folder), "--workspace", str(ws), "--json")
    assert result.exit_code == 3
    found = [(f["tool"], f["finding"]) for f in json.loads(result.output)["findings"]]
    assert found == [("replace_in_file", "applied"), ("execute_command", "in_doubt")]


# -- patches (a synthetic session, as any importer with FileEdit.patch builds one) ---------------------
PATCH = "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 20\n"


def patched_session(patch: str = PATCH) -> Session:
    def describe(session: Session, i: int) -> Detail:
        return ToolCall(name="apply_patch", target="a.py", edit=FileEdit(path="a.py", patch=patch))

    b = SessionBuilder("synthetic", describe=describe)
    b.agent("main")
    b.add(
        "tool_call",
        type="call",
        agent="main",
        tool="apply_patch",
        target="a.py",
        status="pending",
        flags=FILE,
    )
    return b.finish()


@pytest.mark.parametrize(
    ("content", "finding", "action"),
    [
        (ORIGINAL, "not_applied", "redo"),  # applies forward
        ("x = 1\ny = 20\n", "applied", "commit"),  # applies in reverse
        ("x = 5\ny = 7\n", "torn", "ask_human"),  # neither
    ],
)
def test_a_patch_by_whether_it_applies_forward_or_in_reverse(
    ws: Path, content: str, finding: str, action: str
) -> None:
    (ws / "a.py").write_text(content)
    [f] = analyze(patched_session(), ws).findings
    assert (f.finding, f.action) == (finding, action)


def test_a_not_applied_patch_is_redone(tmp_path: Path, ws: Path) -> None:
    pm = apply(analyze(patched_session(), ws, source="synthetic"), tmp_path / "pm.walkback")
    assert pm.findings[0].done and (ws / "a.py").read_text() == "x = 1\ny = 20\n"
    assert git(ws, "diff", "--stat").strip().startswith("a.py | 2")


def test_a_session_with_nothing_pending(tmp_path: Path, ws: Path) -> None:
    history = tmp_path / "h.md"
    history.write_text("\n# aider chat started at 2024-08-05 19:33:02\n\n#### hi  \n\nHello!\n\n")
    os.utime(history, (OLD, OLD))
    result = recover(str(history), "--workspace", str(ws), "--apply")
    assert result.exit_code == 0 and "nothing to recover" in result.output
    assert not beside(history).exists()


def test_one_run_of_an_aider_history(tmp_path: Path, ws: Path) -> None:
    block = "a.py\n```python\n<<<<<<< SEARCH\nx = 1\n=======\nz = 1\n>>>>>>> REPLACE\n```"
    run = "\n# aider chat started at 2024-08-0{d} 19:33:02\n\n#### go  \n\n"
    history = tmp_path / ".aider.chat.history.md"
    history.write_text(run.format(d=5) + "Hello!\n\n" + run.format(d=6) + block + "\n\n")
    os.utime(history, (OLD, OLD))
    first = recover(f"{history}#1", "--workspace", str(ws), "--json")
    assert first.exit_code == 0 and json.loads(first.output)["findings"] == []
    second = recover(f"{history}#2", "--workspace", str(ws), "--json")
    assert [f["finding"] for f in json.loads(second.output)["findings"]] == ["not_applied"]


def test_a_crashed_codex_rollout_with_a_v4a_patch(tmp_path: Path, ws: Path) -> None:
    patch = "*** Begin Patch\n*** Update File: a.py\n@@\n x = 1\n-y = 2\n+y = 20\n*** End Patch\n"
    meta = {
        "id": "019b7f94-51b4",
        "timestamp": "2026-01-02T16:39:45.332Z",
        "cwd": str(ws),
        "cli_version": "0.77.0",
    }
    call = {"type": "custom_tool_call", "status": "completed", "call_id": "call_1", "name": "apply_patch"}
    records = [
        {"timestamp": "2026-01-02T16:39:45.349Z", "type": "session_meta", "payload": meta},
        {
            "timestamp": "2026-01-02T16:39:47.000Z",
            "type": "response_item",
            "payload": {**call, "input": patch},
        },
    ]
    rollout = tmp_path / "rollout-2026-01-02T16-39-45-019b7f94-51b4.jsonl"
    rollout.write_bytes(b"\n".join(orjson.dumps(r) for r in records) + b"\n")
    os.utime(rollout, (OLD, OLD))
    result = recover(str(rollout), "--apply")  # the workspace is the rollout's cwd
    assert result.exit_code == 0, result.output
    assert (
        ws / "a.py"
    ).read_text() == "x = 1\ny = 20\n" and "apply_patch of a.py was not applied" in result.output
    [f] = analyze(load(rollout), ws).findings
    assert (f.finding, f.action) == ("applied", "commit")  # the patch now applies only in reverse


# -- writes that need a folder, writes that fail, ~ ----------------------------------------------------
def write(path: Path | str, content: str = "print(1)\n") -> dict[str, Any]:
    return {"name": "Write", "input": {"file_path": str(path), "content": content}}


def test_a_write_into_folders_that_do_not_exist_creates_them_inside_the_workspace(
    tmp_path: Path, ws: Path
) -> None:
    (tmp_path / "elsewhere").mkdir()
    (ws / "out").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    session = claude_session(tmp_path, ws, write(ws / "src/new/deep/mod.py"), write(ws / "out/sub/x.py"))
    result = recover(str(session), "--workspace", str(ws), "--apply", "--json")
    assert result.exit_code == 3, result.output  # the one through a link is left for a human
    assert (ws / "src/new/deep/mod.py").read_text() == "print(1)\n"
    assert list((tmp_path / "elsewhere").iterdir()) == [], "nothing made outside, through the link"
    types = [r.data["type"] for r in Scanner(beside(session) / "journal.jsonl")]
    assert types == ["run.start", "intent", "recovery", "commit", "intent", "recovery"]
    again = recover(str(session), "--workspace", str(ws), "--apply", "--json")
    assert again.exit_code == 3 and "settled by an earlier postmortem" in again.output


def test_a_failed_write_is_exit_4_naming_the_file_and_the_next_calls_still_get_their_decision(
    tmp_path: Path, ws: Path
) -> None:
    (ws / "blocked").write_text("a file where a folder should be")
    session = claude_session(tmp_path, ws, write(ws / "blocked/x.py"), write(ws / "ok.py"))
    result = recover(str(session), "--workspace", str(ws), "--apply")
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert result.exit_code == 4, result.output
    assert errors == [f"Error: {ws / 'blocked/x.py'}: cannot write: Not a directory"]
    assert ".wb-tmp" not in result.output and (ws / "ok.py").read_text() == "print(1)\n"
    records = [r.data for r in Scanner(beside(session) / "journal.jsonl")]
    assert [r["type"] for r in records] == [
        "run.start",
        "intent",
        "recovery",
        "fail",
        "intent",
        "recovery",
        "commit",
    ]
    assert str(ws / "blocked/x.py") in records[3]["error"]
    (ws / "blocked").unlink()  # the obstacle gone, a rerun redoes what failed
    assert recover(str(session), "--workspace", str(ws), "--apply").exit_code == 0
    assert (ws / "blocked/x.py").read_text() == "print(1)\n"


def test_a_full_disk_fails_one_write_and_lets_a_smaller_one_land(tmp_path: Path) -> None:
    from fullfs import mounted

    with mounted(tmp_path / "disk", size="256k") as disk:
        ws = disk.root / "ws"
        ws.mkdir()
        session = claude_session(
            tmp_path, ws, write(ws / "big.txt", "x" * (64 << 10)), write(ws / "small.py")
        )
        disk.fill(16 << 10)
        result = recover(str(session), "--workspace", str(ws), "--apply")
        assert result.exit_code == 4
        assert f"Error: {ws / 'big.txt'}: cannot write: No space left on device" in result.stderr
        assert not (ws / "big.txt").exists() and (ws / "small.py").read_text() == "print(1)\n"
        assert [n for n in os.listdir(ws) if n.endswith(".wb-tmp")] == []


@pytest.mark.parametrize("home_is_workspace", [True, False])
def test_a_tilde_is_the_home_folder_taken_only_inside_the_workspace(
    tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch, home_is_workspace: bool
) -> None:
    from walkback.journal.recovery._images import resolve_target

    home = ws if home_is_workspace else tmp_path / "home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    session = claude_session(tmp_path, ws, write("~/n.py"))
    result = recover(str(session), "--workspace", str(ws), "--apply", "--json")
    assert not (ws / "~").exists(), "never a folder named ~"
    if home_is_workspace:
        assert result.exit_code == 0 and (ws / "n.py").read_text() == "print(1)\n"
        assert resolve_target(ws, "~/src/m.py") == ws / "src/m.py"
    else:
        assert result.exit_code == 3 and "outside the workspace" in result.output
        assert not (home / "n.py").exists()
        assert resolve_target(ws, "~/src/m.py") is None
    assert resolve_target(ws, "~nosuchuser-wb/x") is None
