"""The real hook command, then recovery: ``python -m walkback.agent.hooks claude-code`` run as the
agent runs it (a subprocess, the payload on stdin, in the shape Claude Code sends), the agent killed
between the hooks, then ``walkback recover TRANSCRIPT --workspace WS --apply``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hookjournal_helpers import Transcript, git, h, make_repo

HEAD_A = b"a = 'as committed'\n"
PRE_A = b"a = 1\n"


def hook(payload: dict[str, object], env: dict[str, str]) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "walkback.agent.hooks", "claude-code"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("junk", [b"\x00\x00torn", None], ids=["torn", "not-applied"])
def test_a_crash_between_the_hooks_is_recovered_exactly(tmp_path: Path, junk: bytes | None) -> None:
    ws = tmp_path / "ws"
    make_repo(ws, {"a.py": HEAD_A})
    (ws / "a.py").write_bytes(PRE_A)  # the agent's earlier edit, never committed
    env = {**os.environ, "WALKBACK_HOME": str(tmp_path / "wbhome")}
    t = Transcript(tmp_path / "session.jsonl", ws)
    base = {
        "session_id": t.session,
        "transcript_path": str(t.path),
        "cwd": str(ws),
        "permission_mode": "default",
    }
    t.prompt("edit, then build")
    edit = {"file_path": str(ws / "a.py"), "old_string": "a = 1", "new_string": "a = 2"}
    t.tool_use("toolu_e2e_edit", "Edit", edit)
    pre = {**base, "hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_input": edit}
    hook({**pre, "tool_use_id": "toolu_e2e_edit"}, env)
    if junk is not None:
        (ws / "a.py").write_bytes(junk)  # the write was cut
    t.tool_use("toolu_e2e_bash", "Bash", {"command": "make"})
    bash = {**base, "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "make"}}
    hook({**bash, "tool_use_id": "toolu_e2e_bash"}, env)
    (ws / "out.bin").write_bytes(b"built")  # the command ran, or began to; then SIGKILL
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "walkback",
            "recover",
            str(t.path),
            "--workspace",
            str(ws),
            "--apply",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 3, r.stderr  # the command is left for a human
    found = {f["call"]: f for f in json.loads(r.stdout)["findings"]}
    expect = ("torn", "restore_redo") if junk is not None else ("not_applied", "redo")
    assert (found["toolu_e2e_edit"]["finding"], found["toolu_e2e_edit"]["action"]) == expect
    assert h((ws / "a.py").read_bytes()) == h(b"a = 2\n"), "exact: the post image, not git's version"
    assert git(ws, "show", "HEAD:a.py") == HEAD_A.decode().strip()
    sh = found["toolu_e2e_bash"]
    assert (sh["finding"], sh["action"]) == ("in_doubt", "ask_human")
    assert "out.bin" in sh["detail"] and "a.py" not in sh["detail"].split("snapshot:")[-1]
