"""Gemini CLI hooked by walkback: the real Gemini CLI (0.61.0, npm) run offline with ``gemini -p``
against the scripted Gemini API (scripted_gemini.py), its project hooks running the real hook
command; and captured payloads (tests/hooks/payloads/gemini-cli) fed to the hook command for a
replace of every occurrence in a CRLF file and a failed replace."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hookjournal_helpers import make_repo
from npm_agents import (
    agent_bin,
    assert_files_journaled,
    base_env,
    commit_of,
    crash_before_the_tool,
    hook,
    hooks_cli,
    install_round_trip,
    of,
    payload,
    refuses_malformed,
    run_agent,
    session_journal,
    sha,
)
from scripted_gemini import ScriptedGemini, call, text

SYNTHESIZED = re.compile(r"^\d+:[0-9a-f]{16}$")
"""A call id the core makes for an agent that gives none: ``<lsn>:<input digest>``."""


@pytest.fixture
def model() -> Iterator[ScriptedGemini]:
    server = ScriptedGemini([])
    yield server
    server.close()


def install_hooks(ws: Path) -> None:
    """``walkback hooks install --agent gemini-cli``: the project's ``.gemini/settings.json``."""
    hooks_cli("install", "--agent", "gemini-cli", "--workspace", str(ws))


def gemini(tmp_path: Path, ws: Path, model: ScriptedGemini, *more: str) -> str:
    """``gemini -p`` in ``ws`` (trusted, API-key auth against the scripted server), to its end;
    returns the session id."""
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    auth = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    (home / ".gemini" / "settings.json").write_text(json.dumps(auth))
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(ws): "TRUST_FOLDER"}))
    env = {
        **base_env(home, tmp_path / "wb"),
        "GEMINI_API_KEY": "scripted",
        "GOOGLE_GEMINI_BASE_URL": model.base_url,
        "GEMINI_CLI_NO_RELAUNCH": "true",  # one node process, not a second one with more heap
    }
    cmd = [
        str(agent_bin("gemini")),
        "-p",
        "edit the notes",
        "--yolo",
        "-m",
        "gemini-2.5-flash",
        "-o",
        "json",
        *more,
    ]
    return str(json.loads(run_agent(cmd, ws, env))["session_id"])


def test_a_gemini_session_is_journaled_with_the_files_hashes(tmp_path: Path, model: ScriptedGemini) -> None:
    ws = tmp_path / "ws"
    make_repo(ws, {"notes.txt": b"one\ntwo\n", "sub/keep.txt": b"k\n"})
    install_hooks(ws)
    model.turns = [
        [call("write_file", {"file_path": "new.txt", "content": "fresh\n"})],
        [
            call(
                "replace",
                {"file_path": "notes.txt", "old_string": "two", "new_string": "three", "instruction": "x"},
            )
        ],
        [call("run_shell_command", {"command": "ls; exit 3", "dir_path": "sub"})],
        [text("done")],
    ]
    gemini(tmp_path, ws, model)

    assert (ws / "notes.txt").read_bytes() == b"one\nthree\n"
    _, records = session_journal(tmp_path / "wb", "gemini-cli")
    assert records[0]["workspace"] == str(ws) and Path(records[0]["hooked"]["transcript"]).is_file()
    intents = of(records, "intent")
    assert [(r["tool"], r.get("target"), r["effect"]) for r in intents] == [
        ("write_file", "new.txt", "fs"),
        ("replace", "notes.txt", "fs"),
        ("run_shell_command", None, "command"),
    ]
    assert all(SYNTHESIZED.match(r["call"]) for r in intents)
    assert len({r["call"] for r in intents}) == 3
    assert intents[0]["pre"] == "absent" and intents[1]["pre"] == sha(b"one\ntwo\n")
    assert_files_journaled(records, ws)
    shell = intents[2]
    assert shell["cwd"] == str(ws / "sub") and "git_tree" in shell["snapshot"]
    result = commit_of(records, shell)["result"]
    assert result["exit_code"] == 3 and "keep.txt" in result["output_tail"]
    assert [commit_of(records, r)["call"] for r in intents] == [r["call"] for r in intents]


def test_a_write_that_cannot_be_journaled_is_blocked(tmp_path: Path, model: ScriptedGemini) -> None:
    ws = tmp_path / "ws"
    make_repo(ws, {"notes.txt": b"one\n"})
    install_hooks(ws)
    model.turns = [[call("write_file", {"file_path": "new.txt", "content": "fresh\n"})], [text("stopped")]]
    (tmp_path / "wb").write_text("a file where the journals' folder should be\n")
    gemini(tmp_path, ws, model)

    assert not (ws / "new.txt").exists()
    told = json.dumps(model.requests[-1]["body"]["contents"][-1])
    assert "walkback: not journaled" in told


def _fields(tmp_path: Path) -> tuple[Path, dict[str, str], dict[str, str]]:
    ws = tmp_path / "ws"
    fields = {"cwd": str(ws), "transcript_path": str(tmp_path / "chat.jsonl"), "session_id": "g-1"}
    return ws, fields, {"WALKBACK_HOME": str(tmp_path / "wb")}


def test_replace_of_every_occurrence_keeps_crlf_line_ends(tmp_path: Path) -> None:
    """Captured replace payloads (before_replace, after_replace) with ``allow_multiple``."""
    ws, fields, env = _fields(tmp_path)
    make_repo(ws, {"notes.txt": b"a\r\nb\r\na\r\n"})
    args = {
        "file_path": "notes.txt",
        "old_string": "a",
        "new_string": "c",
        "allow_multiple": True,
        "instruction": "x",
    }
    assert (
        hook("gemini-cli", payload("gemini-cli", "before_replace", **fields, tool_input=args), env).returncode
        == 0
    )
    (ws / "notes.txt").write_bytes(b"c\r\nb\r\nc\r\n")
    assert (
        hook("gemini-cli", payload("gemini-cli", "after_replace", **fields, tool_input=args), env).returncode
        == 0
    )
    _, records = session_journal(tmp_path / "wb", "gemini-cli")
    (intent,) = of(records, "intent")
    assert intent["post"] == sha(b"c\r\nb\r\nc\r\n")
    assert_files_journaled(records, ws)


def test_an_after_tool_with_an_error_closes_the_intent_as_failed(tmp_path: Path) -> None:
    """Captured payloads before_replace_missing_file and after_replace_missing_file."""
    ws, fields, env = _fields(tmp_path)
    make_repo(ws, {"other.txt": b"x\n"})
    for name in ("before_replace_missing_file", "after_replace_missing_file"):
        assert hook("gemini-cli", payload("gemini-cli", name, **fields), env).returncode == 0
    _, records = session_journal(tmp_path / "wb", "gemini-cli")
    (intent,) = of(records, "intent")
    assert intent["pre"] == "absent" and "post" not in intent
    closing = commit_of(records, intent)
    assert closing["type"] == "fail" and "File not found" in closing["error"]
    assert closing["call"] == intent["call"]


USERS = {
    "general": {"vimMode": True},
    "hooks": {
        "BeforeTool": [
            {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "./guard.sh"}]}
        ],
        "AfterAgent": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
}


def test_install_merges_into_the_users_settings_and_uninstall_gives_them_back(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    installed = install_round_trip("gemini-cli", ws, ws / ".gemini" / "settings.json", USERS)
    assert installed["general"] == USERS["general"]
    assert installed["hooks"]["BeforeTool"][0] == USERS["hooks"]["BeforeTool"][0]
    ours = installed["hooks"]["BeforeTool"][1]
    assert ours["matcher"] == "write_file|replace|run_shell_command" and ours["hooks"][0]["timeout"] == 60_000
    assert sorted(installed["hooks"]) == [
        "AfterAgent",
        "AfterTool",
        "BeforeTool",
        "PreCompress",
        "SessionStart",
    ]
    refuses_malformed("gemini-cli", ws, ws / ".gemini" / "settings.json")


def test_user_scope_writes_the_home_settings(tmp_path: Path) -> None:
    hooks_cli("install", "--agent", "gemini-cli", "--scope", "user", env={"HOME": str(tmp_path)})
    assert "BeforeTool" in json.loads((tmp_path / ".gemini" / "settings.json").read_text())["hooks"]


def test_a_resumed_session_gets_its_torn_file_restored_and_the_brief(
    tmp_path: Path, model: ScriptedGemini
) -> None:
    """A real Gemini CLI session, then a crash of it faked after its BeforeTool hook (the captured
    before_replace payload through the hook command) with the file torn; ``gemini --resume``."""
    ws = tmp_path / "ws"
    make_repo(ws, {"notes.txt": b"one\ntwo\n"})
    install_hooks(ws)
    model.turns = [[text("first")]]
    session = gemini(tmp_path, ws, model)
    pre = payload("gemini-cli", "before_replace", cwd=str(ws), session_id=session)
    crash_before_the_tool("gemini-cli", pre, ws / "notes.txt", {"WALKBACK_HOME": str(tmp_path / "wb")})
    model.turns, asked = [[text("continuing")]], len(model.requests)
    gemini(tmp_path, ws, model, "--resume", session)

    assert (ws / "notes.txt").read_bytes() == b"one\nthree\n"  # restored from the pre-image, then redone
    assert "walkback recovered this session" in json.dumps([r["body"] for r in model.requests[asked:]])
