"""The real Claude Code (npm, pinned) with walkback's hooks installed, offline against a scripted API.

Each Claude Code start costs a few seconds, so the scenarios are few and each checks a lot: what
the journal holds against the files themselves, a kill mid-session and its recovery on resume, and
a full disk that blocks an edit.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from real_claude import Claude, claude_bin, kill_group
from scripted_anthropic import Script, serve, text, tool
from walkback.journal import scan

WALKBACK = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "walkback"


def sha(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def git(ws: Path, *args: str) -> str:
    ident = ["-c", "user.name=t", "-c", "user.email=t@t.invalid"]
    return subprocess.run(["git", *ident, *args], cwd=ws, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def claude(tmp_path: Path) -> Iterator[Claude]:
    claude_bin()
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    git(ws, "init", "-q")
    (ws / "a.txt").write_text("one\ntwo\n")
    git(ws, "add", "a.txt")
    git(ws, "commit", "-qm", "init")
    c = Claude(home, ws, tmp_path / "walkback")
    c.trust()
    yield c


def install(c: Claude, *more: str) -> None:
    subprocess.run(
        [str(WALKBACK), "hooks", "install", "--agent", "claude-code", "--workspace", str(c.workspace), *more],
        check=True,
        capture_output=True,
        env={**c.env(), "HOME": str(c.home)},
    )


def records(c: Claude, session: str) -> list[dict[str, Any]]:
    path = c.walkback_home / "hooks" / "claude-code" / session / "journal.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def only_journal(c: Claude) -> Path:
    found = list((c.walkback_home / "hooks" / "claude-code").glob("*/journal.jsonl"))
    assert len(found) == 1, found
    return found[0]


def wait_for(check: Callable[[], bool], timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.05)


def has_open_intent(c: Claude, tool_name: str) -> Callable[[], bool]:
    def check() -> bool:
        found = list((c.walkback_home / "hooks" / "claude-code").glob("*/journal.jsonl"))
        return bool(found) and f'"type":"intent","tool":"{tool_name}"'.encode() in found[0].read_bytes()

    return check


def test_write_read_edit_and_bash_are_journaled_with_the_hashes_of_the_files(claude: Claude) -> None:
    ws = claude.workspace
    install(claude)
    pre_a = sha(ws / "a.txt")
    script = Script(
        [
            [tool("Write", file_path=str(ws / "b.txt"), content="hello\n")],
            [tool("Read", file_path=str(ws / "a.txt"))],
            [tool("Edit", file_path=str(ws / "a.txt"), old_string="two", new_string="TWO")],
            [tool("Bash", command="echo hi > c.txt", description="write c")],
            [text("Done.")],
        ]
    )
    with serve(script) as url:
        claude.base_url = url
        result = claude.run("write b, edit a, run a command")
    session = result["session_id"]
    recs = records(claude, session)
    assert recs[0]["type"] == "run.start"
    assert recs[0]["hooked"] == {
        "agent": "claude-code",
        "session": session,
        "transcript": str(claude.transcript(session)),
    }
    assert claude.transcript(session).is_file()
    intents = {r["tool"]: r for r in recs if r["type"] == "intent"}
    assert set(intents) == {"Write", "Edit", "Bash"}  # Read changes nothing: not journaled
    write, edit, bash = intents["Write"], intents["Edit"], intents["Bash"]
    assert (write["target"], write["pre"], write["post"]) == ("b.txt", "absent", sha(ws / "b.txt"))
    assert (edit["target"], edit["pre"], edit["post"]) == ("a.txt", pre_a, sha(ws / "a.txt"))
    assert edit["pre_image"] == {"text": "one\ntwo\n"} and (ws / "a.txt").read_text() == "one\nTWO\n"
    # the ids are the transcript's tool_use ids
    transcript = claude.transcript(session).read_text()
    for intent in intents.values():
        assert intent["call"].startswith("toolu_") and f'"id":"{intent["call"]}"' in transcript
    commits = {r["ref"]: r for r in recs if r["type"] == "commit"}
    assert commits[write["lsn"]]["verified"] == {"post": True}
    assert commits[edit["lsn"]]["post"] == sha(ws / "a.txt") and commits[edit["lsn"]]["verified"]["post"]
    # the shell's snapshot is the tree before the command: a.txt edited, no c.txt yet
    snapshot = bash["snapshot"]
    assert snapshot["repo"] == str(ws)
    listing = git(ws, "ls-tree", "-r", snapshot["git_tree"])
    assert "a.txt" in listing and "b.txt" in listing and "c.txt" not in listing
    assert (
        git(ws, "rev-parse", f"{snapshot['git_tree']}:a.txt").strip()
        == git(ws, "hash-object", "a.txt").strip()
    )
    assert (ws / "c.txt").read_text() == "hi\n" and commits[bash["lsn"]]["result"] == {"output_tail": ""}
    assert git(ws, "status", "--porcelain", "a.txt").startswith(" M")  # the user's index untouched
    assert scan(only_journal(claude)).intact


def test_a_killed_session_resumes_from_facts(claude: Claude) -> None:
    """Killed while a slower user hook holds an Edit (walkback's intent is already durable), the
    file then overwritten with junk: the resume restores the pre-image (which git never had),
    redoes the edit, and hands Claude Code the brief. Killed again during a slow shell command:
    the next resume says the command is in doubt."""
    ws = claude.workspace
    (ws / "a.txt").write_text("one\ntwo\nnot in git\n")
    (ws / ".claude").mkdir()
    slow = {"matcher": "Edit", "hooks": [{"type": "command", "command": "sleep 120"}]}
    (ws / ".claude" / "settings.json").write_text(json.dumps({"model": "x", "hooks": {"PreToolUse": [slow]}}))
    install(claude)
    script = Script(
        [
            [tool("Read", file_path=str(ws / "a.txt"))],
            [tool("Edit", file_path=str(ws / "a.txt"), old_string="two", new_string="TWO")],
        ]
    )
    with serve(script) as url:
        claude.base_url = url
        agent = claude.start("edit a")
        wait_for(has_open_intent(claude, "Edit"))
        kill_group(agent)
        session = records(claude, only_journal(claude).parent.name)[0]["hooked"]["session"]
        assert (ws / "a.txt").read_text() == "one\ntwo\nnot in git\n"  # held: not applied
        (ws / "a.txt").write_bytes(b"\0junk")  # torn

        (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": {}}))  # the slow hook goes
        install(claude)
        script.turns = [[tool("Bash", command="echo started > s.txt; sleep 120", description="slow")]]
        asked = len(script.main_requests)
        agent = claude.start("continue", "--resume", session)
        wait_for(has_open_intent(claude, "Bash"))
        wait_for((ws / "s.txt").exists)
        kill_group(agent)
        assert (ws / "a.txt").read_text() == "one\nTWO\nnot in git\n"  # restored, then redone
        brief = json.dumps(script.main_requests[asked])
        assert "walkback recovered this session" in brief
        assert "Edit a.txt (call toolu_0002) was torn" in brief

        script.turns = [[text("Resumed.")]]
        asked = len(script.main_requests)
        claude.run("continue", "--resume", session)
        assert "Bash" in json.dumps(script.main_requests[asked]) and script.sent("in doubt")
    recs = records(claude, session)
    calls = {r["lsn"]: r["call"] for r in recs if r["type"] == "intent"}
    decisions = [(r["tool"], r["finding"], calls[r["ref"]]) for r in recs if r["type"] == "recovery"]
    assert decisions == [("Edit", "torn", "toolu_0002"), ("Bash", "in_doubt", "toolu_0003")]
    assert sum(r["type"] == "recovery.brief" for r in recs) == 2
    assert scan(only_journal(claude)).intact


def test_a_subagent_is_a_spawn_linked_to_its_transcript_and_its_calls(claude: Claude) -> None:
    ws = claude.workspace
    install(claude)
    script = Script(
        [
            [tool("Task", description="write s", prompt="write s.txt", subagent_type="general-purpose")],
            [
                tool("Write", file_path=str(ws / "s.txt"), content="from the subagent\n")
            ],  # the subagent's turn
            [text("Wrote s.txt.")],
            [text("Done.")],
        ]
    )
    with serve(script) as url:
        claude.base_url = url
        session = claude.run("delegate", "--allowedTools", "Task Write")["session_id"]
    recs = records(claude, session)
    (spawn,) = [r for r in recs if r["type"] == "agent.spawn"]
    (end,) = [r for r in recs if r["type"] == "agent.end"]
    (write,) = [r for r in recs if r["type"] == "intent"]
    child = spawn["child_agent"]
    assert end["ref"] == spawn["lsn"] and end["child_agent"] == child and end["outcome"] == "completed"
    assert spawn["transcript"] == end["transcript"] and Path(end["transcript"]).is_file()
    assert f'"agentId":"{child}"' in Path(end["transcript"]).read_text()
    assert write["agent"] == child and write["post"] == sha(ws / "s.txt")
    assert spawn["lsn"] < write["lsn"] < end["lsn"]


def test_a_compaction_is_checkpointed_first(claude: Claude) -> None:
    ws = claude.workspace
    install(claude)
    head = git(ws, "rev-parse", "HEAD").strip()
    script = Script([[tool("Write", file_path=str(ws / "b.txt"), content="b\n")], [text("Wrote b.")]])
    with serve(script) as url:
        claude.base_url = url
        session = claude.run("write b")["session_id"]
        claude.run("/compact", "--resume", session)
    (checkpoint,) = [r for r in records(claude, session) if r["type"] == "checkpoint"]
    assert checkpoint["trigger"] == "manual" and checkpoint["covers_lsn"] == checkpoint["lsn"]
    assert checkpoint["ref"] == f"refs/walkback/{session}/{checkpoint['lsn']}"
    assert git(ws, "rev-parse", checkpoint["ref"]).strip() == checkpoint["git"]
    assert (
        git(ws, "rev-parse", f"{checkpoint['git']}^").strip() == head == git(ws, "rev-parse", "HEAD").strip()
    )
    assert git(ws, "show", f"{checkpoint['git']}:b.txt") == "b\n"
    assert "walkback" not in git(ws, "branch", "--list", "--all")
    compacted = [
        datetime.fromisoformat(json.loads(line)["timestamp"])
        for line in claude.transcript(session).read_text().splitlines()
        if '"subtype":"local_command"' in line or '"compact_boundary"' in line
    ]
    journaled = datetime.fromisoformat(checkpoint["ts"])
    assert compacted and journaled < max(compacted)  # the checkpoint is journaled before the compaction


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs, filled: every write on it fails with ENOSPC."""
    mnt = tmp_path / "full"
    mnt.mkdir()
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)], capture_output=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {p.stderr.decode().strip()}")
    try:
        fd = os.open(mnt / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError:
            pass
        finally:
            os.close(fd)
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_a_full_disk_blocks_the_edit_with_one_line(claude: Claude, full_disk: Path) -> None:
    ws = claude.workspace
    claude.walkback_home = full_disk / "walkback"
    install(claude)
    script = Script(
        [
            [tool("Read", file_path=str(ws / "a.txt"))],
            [tool("Edit", file_path=str(ws / "a.txt"), old_string="two", new_string="TWO")],
            [text("Blocked.")],
        ]
    )
    with serve(script) as url:
        claude.base_url = url
        claude.run("edit a")
    assert (ws / "a.txt").read_text() == "one\ntwo\n"  # the edit never ran
    results = [
        block
        for body in script.main_requests
        for message in body["messages"]
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result" and block.get("is_error")
    ]
    said = json.dumps(results)
    assert "walkback: not journaled" in said and "No space left on device" in said, said
    reason = next(
        line
        for r in results
        for line in json.dumps(r["content"]).split("\\n")
        if "walkback: not journaled" in line
    )
    assert "Traceback" not in said and "the tool call is blocked" in reason
