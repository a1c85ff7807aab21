"""The hook command on its own (``python -m walkback.agent.hooks claude-code``), fed Claude Code's
payloads on stdin as the agent would: real processes, real git, real fsync."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from walkback.journal import scan

SESSION = "5f0c-test-session"


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def git(ws: Path, *args: str) -> str:
    ident = ["-c", "user.name=t", "-c", "user.email=t@t.invalid"]
    return subprocess.run(
        ["git", *ident, *args], cwd=ws, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q")
    (ws / "a.txt").write_text("one\ntwo\n")
    git(ws, "add", "a.txt")
    git(ws, "commit", "-qm", "init")
    return ws


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "walkback"


def payload(
    ws: Path, event: str, tool: str | None = None, call: str = "toolu_1", **fields: Any
) -> dict[str, Any]:
    p: dict[str, Any] = {
        "session_id": SESSION,
        "transcript_path": str(ws.parent / "t.jsonl"),
        "cwd": str(ws),
        "hook_event_name": event,
        **fields,
    }
    if tool is not None:
        p.update(tool_name=tool, tool_use_id=call)
    return p


def start(home: Path, data: dict[str, Any] | bytes, *flags: str) -> subprocess.Popen[bytes]:
    """The hook command started as the agent starts it, the payload written to its stdin."""
    p = subprocess.Popen(
        [sys.executable, "-m", "walkback.agent.hooks", "claude-code", *flags],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "WALKBACK_HOME": str(home)},
    )
    assert p.stdin is not None
    p.stdin.write(data if isinstance(data, bytes) else json.dumps(data).encode())
    p.stdin.close()
    return p


def hook(home: Path, data: dict[str, Any] | bytes, *flags: str) -> subprocess.CompletedProcess[str]:
    """The hook command run to its end: its exit code, stdout and stderr."""
    p = start(home, data, *flags)
    assert p.stdout is not None and p.stderr is not None
    out, err = p.stdout.read(), p.stderr.read()  # a few lines: no pipe fills up
    return subprocess.CompletedProcess(p.args, p.wait(), out.decode(), err.decode())


def journal(home: Path) -> Path:
    return home / "hooks" / "claude-code" / SESSION / "journal.jsonl"


def records(home: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in journal(home).read_text().splitlines()]


def test_hooks_of_one_event_running_in_parallel_append_one_chain(ws: Path, home: Path) -> None:
    procs = [
        start(
            home,
            payload(
                ws, "PreToolUse", "Write", f"toolu_{i}", tool_input={"file_path": f"f{i}", "content": "x"}
            ),
        )
        for i in range(8)
    ]
    assert [p.wait() for p in procs] == [0] * 8
    recs = records(home)
    assert [r["lsn"] for r in recs] == list(range(9))
    assert sorted(r["call"] for r in recs[1:]) == sorted(f"toolu_{i}" for i in range(8))
    assert sum(r["type"] == "run.start" for r in recs) == 1
    assert scan(journal(home)).intact


def test_an_edit_is_journaled_before_and_verified_after(ws: Path, home: Path) -> None:
    edit = {"file_path": str(ws / "a.txt"), "old_string": "two", "new_string": "TWO"}
    assert hook(home, payload(ws, "PreToolUse", "Edit", tool_input=edit)).returncode == 0
    intent = records(home)[1]
    assert (intent["target"], intent["pre"], intent["post"]) == (
        "a.txt",
        sha(b"one\ntwo\n"),
        sha(b"one\nTWO\n"),
    )
    assert intent["pre_image"] == {"text": "one\ntwo\n"} and intent["post_image"] == {"text": "one\nTWO\n"}
    (ws / "a.txt").write_text("one\nTWO\n")
    assert hook(home, payload(ws, "PostToolUse", "Edit", tool_input=edit, tool_response={})).returncode == 0
    commit = records(home)[2]
    assert (commit["type"], commit["ref"], commit["call"]) == ("commit", intent["lsn"], "toolu_1")
    assert commit["verified"] == {"post": True} and commit["post"] == sha(b"one\nTWO\n")


def test_a_file_changed_behind_the_tool_is_a_recorded_mismatch(ws: Path, home: Path) -> None:
    write = {"file_path": "b.py", "content": "x=1\n"}
    hook(home, payload(ws, "PreToolUse", "Write", tool_input=write))
    (ws / "b.py").write_text("x = 1\n")  # a formatter ran after the Write
    hook(home, payload(ws, "PostToolUse", "Write", tool_input=write))
    intent, commit = records(home)[1:]
    assert intent["post"] == sha(b"x=1\n")
    assert commit["post"] == sha(b"x = 1\n") and commit["verified"] == {"post": False}


def test_multiedit_and_an_edit_that_cannot_apply(ws: Path, home: Path) -> None:
    edits = [
        {"old_string": "one", "new_string": "1"},
        {"old_string": "two", "new_string": "2", "replace_all": True},
    ]
    hook(home, payload(ws, "PreToolUse", "MultiEdit", "m", tool_input={"file_path": "a.txt", "edits": edits}))
    missing = {"file_path": "a.txt", "old_string": "absent text", "new_string": "z"}
    hook(home, payload(ws, "PreToolUse", "Edit", "e", tool_input=missing))
    multi, failing = records(home)[1:]
    assert multi["post"] == sha(b"1\n2\n")
    assert "post" not in failing and failing["pre"] == sha(b"one\ntwo\n")  # Claude Code will refuse it


def test_a_failed_call_closes_its_intent_as_failed(ws: Path, home: Path) -> None:
    cmd = {"command": "false"}
    hook(home, payload(ws, "PreToolUse", "Bash", tool_input=cmd))
    hook(home, payload(ws, "PostToolUseFailure", "Bash", tool_input=cmd, error="Exit code 1"))
    intent, fail = records(home)[1:]
    assert intent["effect"] == "command" and intent["snapshot"]["git_tree"] == git(ws, "write-tree")
    assert (fail["type"], fail["ref"], fail["error"]) == ("fail", intent["lsn"], "Exit code 1")


def test_a_big_pre_image_is_a_durable_blob(ws: Path, home: Path) -> None:
    big = b"line\n" * 5000
    (ws / "big.txt").write_bytes(big)
    hook(home, payload(ws, "PreToolUse", "Write", tool_input={"file_path": "big.txt", "content": "small\n"}))
    intent = records(home)[1]
    assert "pre_image" not in intent and intent["pre"] == sha(big)
    blob = journal(home).parent / "blobs" / "sha256" / intent["pre"][7:9] / intent["pre"][7:]
    assert blob.read_bytes() == big


def test_precompact_checkpoints_the_tree_under_a_walkback_ref(ws: Path, home: Path) -> None:
    (ws / "a.txt").write_text("changed\n")
    (ws / "new.txt").write_text("untracked\n")
    head, index = git(ws, "rev-parse", "HEAD"), (ws / ".git" / "index").read_bytes()
    assert hook(home, payload(ws, "PreCompact", trigger="auto")).returncode == 0
    checkpoint = records(home)[-1]
    ref = f"refs/walkback/{SESSION}/{checkpoint['lsn']}"
    assert checkpoint["type"] == "checkpoint" and checkpoint["ref"] == ref
    assert git(ws, "rev-parse", ref) == checkpoint["git"]
    assert git(ws, "rev-parse", f"{ref}^") == head
    assert git(ws, "show", f"{ref}:a.txt") == "changed" and git(ws, "show", f"{ref}:new.txt") == "untracked"
    assert git(ws, "rev-parse", "HEAD") == head and (ws / ".git" / "index").read_bytes() == index
    assert git(ws, "stash", "list") == "" and git(ws, "branch", "--list") == "* " + git(
        ws, "branch", "--show-current"
    )


def test_a_subagent_spawn_its_calls_and_its_end_are_linked(ws: Path, home: Path) -> None:
    sub = {"agent_id": "agent-7", "agent_type": "general-purpose"}
    hook(home, payload(ws, "SubagentStart", **sub))
    hook(home, payload(ws, "PreToolUse", "Write", **sub, tool_input={"file_path": "s.txt", "content": "s"}))
    hook(home, payload(ws, "SubagentStop", **sub, last_assistant_message="wrote s.txt"))
    spawn, intent, end = records(home)[1:]
    assert (spawn["type"], spawn["child_agent"], spawn["task"]) == (
        "agent.spawn",
        "agent-7",
        "general-purpose",
    )
    assert spawn["transcript"] == str(ws.parent / "t" / "subagents" / "agent-agent-7.jsonl")
    assert (intent["agent"], records(home)[0]["agent"]) == ("agent-7", "main")
    assert (end["type"], end["ref"], end["child_agent"], end["outcome"]) == (
        "agent.end",
        spawn["lsn"],
        "agent-7",
        "completed",
    )
    assert end["result"] == {"last_message": "wrote s.txt"}


def test_a_torn_tail_is_repaired_before_the_next_append(ws: Path, home: Path) -> None:
    hook(home, payload(ws, "PreToolUse", "Write", tool_input={"file_path": "b", "content": "b"}))
    with open(journal(home), "ab") as f:
        f.write(b'{"v":1,"lsn":2,"ts":"2026-')  # a crash mid-append
    assert (
        hook(
            home, payload(ws, "PreToolUse", "Write", "t2", tool_input={"file_path": "c", "content": "c"})
        ).returncode
        == 0
    )
    assert [r["type"] for r in records(home)] == ["run.start", "intent", "journal.recovered", "intent"]
    assert scan(journal(home)).intact


@pytest.mark.parametrize(
    "raw",
    [b"", b"not json", b"[1, 2]", b'{"hook_event_name": "PreToolUse"}', b'{"session_id": "s", "cwd": 3}'],
)
def test_an_unreadable_payload_is_one_line_and_never_blocks(home: Path, raw: bytes) -> None:
    p = hook(home, raw)
    assert p.returncode == 0 and p.stdout == ""
    assert len(p.stderr.splitlines()) == 1 and p.stderr.startswith("walkback: payload ignored:")


def test_an_intent_that_cannot_be_durable_blocks_the_call_unless_allowed(ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "not-a-folder"
    home.write_text("a file where the journals should go")
    edit = payload(
        ws, "PreToolUse", "Edit", tool_input={"file_path": "a.txt", "old_string": "one", "new_string": "1"}
    )
    blocked = hook(home, edit)
    assert blocked.returncode == 2 and len(blocked.stderr.splitlines()) == 1
    assert blocked.stderr.startswith("walkback: not journaled (") and "blocked" in blocked.stderr
    allowed = hook(home, edit, "--on-failure", "allow")
    assert allowed.returncode == 1 and "blocked" not in allowed.stderr  # shown, not blocking
    read = hook(home, payload(ws, "PreToolUse", "Read", tool_input={"file_path": "a.txt"}))
    assert (read.returncode, read.stderr) == (0, "")  # a read-only tool is never journaled, never blocked
    assert "Traceback" not in blocked.stderr + allowed.stderr


def test_session_start_writes_the_header_and_has_nothing_to_recover(ws: Path, home: Path) -> None:
    p = hook(home, payload(ws, "SessionStart", source="startup"))
    assert (p.returncode, p.stdout) == (0, "")
    (header,) = records(home)
    assert header["type"] == "run.start" and header["workspace"] == str(ws)
    assert header["producer"]["name"] == "walkback-hooks"


def test_a_resume_recovers_its_own_session_and_a_new_one_only_reports_another(ws: Path, home: Path) -> None:
    edit = {"file_path": "a.txt", "old_string": "two", "new_string": "TWO"}
    hook(home, payload(ws, "PreToolUse", "Edit", tool_input=edit))  # the agent dies before the edit
    other = {**payload(ws, "SessionStart", source="startup"), "session_id": "a-new-session"}
    started = hook(home, other)
    context = json.loads(started.stdout)["hookSpecificOutput"]
    assert context["hookEventName"] == "SessionStart"
    assert f"walkback found session {SESSION} of this workspace unfinished" in context["additionalContext"]
    assert "lsn 1 Edit a.txt (call toolu_1) was not applied" in context["additionalContext"]
    assert (ws / "a.txt").read_text() == "one\ntwo\n" and "recovery" not in {r["type"] for r in records(home)}

    resumed = hook(home, payload(ws, "SessionStart", source="resume"))
    brief = json.loads(resumed.stdout)["hookSpecificOutput"]["additionalContext"]
    assert brief.startswith("walkback recovered this session") and "redone" in brief
    assert (ws / "a.txt").read_text() == "one\nTWO\n"
    assert [r["finding"] for r in records(home) if r["type"] == "recovery"] == ["not_applied"]
    assert hook(home, payload(ws, "SessionStart", source="resume")).stdout == ""  # nothing left


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs of this test's own (root only), unmounted afterwards."""
    mnt = tmp_path / "fs"
    mnt.mkdir()
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)], capture_output=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {p.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(folder: Path) -> Path:
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)
    return filler


@pytest.mark.parametrize("how", ["full", "read-only"])
def test_a_disk_that_refuses_the_intent_blocks_the_edit_and_the_journal_stays_whole(
    ws: Path, small_fs: Path, how: str
) -> None:
    home = small_fs / "walkback"
    write = {"file_path": "b.txt", "content": "b\n"}
    assert hook(home, payload(ws, "PreToolUse", "Write", "w1", tool_input=write)).returncode == 0
    before = journal(home).read_bytes()
    big = {"file_path": "a.txt", "old_string": "two", "new_string": "x" * 100_000}  # a blob
    if how == "full":
        filler = fill(small_fs)
        edit = payload(ws, "PreToolUse", "Edit", "e1", tool_input=big)
    else:
        subprocess.run(["mount", "-o", "remount,ro", str(small_fs)], check=True)
        edit = payload(ws, "PreToolUse", "Edit", "e1", tool_input={**big, "new_string": "TWO"})
    p = hook(home, edit)
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1 and "blocked" in p.stderr
    assert ("No space left on device" if how == "full" else "Read-only file system") in p.stderr
    assert journal(home).read_bytes() == before  # nothing half-written
    if how == "full":
        filler.unlink()
    else:
        subprocess.run(["mount", "-o", "remount,rw", str(small_fs)], check=True)
    assert hook(home, edit).returncode == 0  # the retried call is journaled
    assert [r["call"] for r in records(home)[1:]] == ["w1", "e1"] and scan(journal(home)).intact
