"""Copilot CLI hooked by walkback: the real Copilot CLI (1.0.102, npm) run offline with
``copilot -p`` (``COPILOT_OFFLINE``, a BYOK provider on the scripted Responses API,
scripted_openai.py), its repository hooks (``.github/hooks/``) running the real hook command; and
captured PascalCase payloads (tests/hooks/payloads/copilot-cli/pascal_*) fed to the hook command."""

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
from scripted_openai import ScriptedResponses, custom_call, function_call, message

SYNTHESIZED = re.compile(r"^\d+:[0-9a-f]{16}$")
"""A call id the core makes for an agent that gives none: ``<lsn>:<input digest>``."""


@pytest.fixture
def model() -> Iterator[ScriptedResponses]:
    server = ScriptedResponses([])
    yield server
    server.close()


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Copilot unpacks its package into a cache on first start: once for the module."""
    return tmp_path_factory.mktemp("copilot-cache")


def install_hooks(ws: Path) -> None:
    """``walkback hooks install --agent copilot-cli``: the repository's ``.github/hooks/walkback.json``."""
    hooks_cli("install", "--agent", "copilot-cli", "--workspace", str(ws))


def copilot(tmp_path: Path, ws: Path, model: ScriptedResponses, cache: Path, name: str, *more: str) -> None:
    """``copilot -p`` in ``ws`` with model ``name`` (gpt-4.1: create/edit; gpt-5.5: apply_patch)."""
    env = {
        **base_env(tmp_path / "home", tmp_path / "wb"),
        "COPILOT_CACHE_HOME": str(cache),
        "COPILOT_OFFLINE": "true",
        "COPILOT_AUTO_UPDATE": "false",
        "COPILOT_ALLOW_ALL": "true",
        "COPILOT_PROVIDER_BASE_URL": model.base_url,
        "COPILOT_PROVIDER_API_KEY": "sk-scripted",
        "COPILOT_PROVIDER_WIRE_API": "responses",
        "COPILOT_MODEL": name,
    }
    run_agent([str(agent_bin("copilot")), "-p", "edit the notes", "--allow-all-tools", "-s", *more], ws, env)


def only_session(tmp_path: Path) -> str:
    """The id of the one session Copilot kept (its ``session-state`` folder)."""
    (state,) = (tmp_path / "home" / ".copilot" / "session-state").glob("*/events.jsonl")
    return state.parent.name


def test_a_copilot_session_is_journaled_with_the_files_hashes(
    tmp_path: Path, model: ScriptedResponses, cache: Path
) -> None:
    ws = tmp_path / "ws"
    make_repo(ws, {"notes.txt": b"one\ntwo\n"})
    install_hooks(ws)
    new, notes, gone = ws / "new.txt", ws / "notes.txt", ws / "gone.txt"
    model.turns = [
        [function_call("c1", "create", {"path": str(new), "file_text": "fresh\n"})],
        [function_call("c2", "edit", {"path": str(notes), "old_str": "two", "new_str": "three"})],
        [function_call("c3", "bash", {"command": "ls; exit 3", "description": "list"})],
        [function_call("c4", "edit", {"path": str(gone), "old_str": "a", "new_str": "b"})],
        [message("done")],
    ]
    copilot(tmp_path, ws, model, cache, "gpt-4.1")

    assert notes.read_bytes() == b"one\nthree\n"
    _, records = session_journal(tmp_path / "wb", "copilot-cli")
    assert records[0]["workspace"] == str(ws) and Path(records[0]["hooked"]["transcript"]).is_file()
    intents = of(records, "intent")
    assert [(r["tool"], r.get("target"), r["effect"]) for r in intents] == [
        ("create", "new.txt", "fs"),
        ("edit", "notes.txt", "fs"),
        ("bash", None, "command"),
        ("edit", "gone.txt", "fs"),
    ]
    assert all(SYNTHESIZED.match(r["call"]) for r in intents)
    assert_files_journaled(records[: records.index(intents[3])], ws)
    assert commit_of(records, intents[2])["result"]["exit_code"] == 3
    failed = commit_of(records, intents[3])
    assert failed["type"] == "fail" and "ENOENT" in failed["error"]


def test_an_apply_patch_of_copilot_is_one_intent_per_file(
    tmp_path: Path, model: ScriptedResponses, cache: Path
) -> None:
    ws = tmp_path / "ws"
    make_repo(ws, {"notes.txt": b"one\ntwo\n"})
    install_hooks(ws)
    patch = "*** Begin Patch\n*** Update File: notes.txt\n@@\n one\n-two\n+2\n"
    patch += "*** Add File: b.txt\n+bee\n*** End Patch\n"
    model.turns = [[custom_call("p1", "apply_patch", patch)], [message("done")]]
    copilot(tmp_path, ws, model, cache, "gpt-5.5")

    assert (ws / "notes.txt").read_bytes() == b"one\n2\n"
    _, records = session_journal(tmp_path / "wb", "copilot-cli")
    intents = of(records, "intent")
    assert [(r["target"], r["part"]) for r in intents] == [("notes.txt", [0, 2]), ("b.txt", [1, 2])]
    assert intents[0]["call"] == intents[1]["call"]
    assert_files_journaled(records, ws)


def test_a_create_that_cannot_be_journaled_is_denied(
    tmp_path: Path, model: ScriptedResponses, cache: Path
) -> None:
    ws = tmp_path / "ws"
    make_repo(ws, {"notes.txt": b"one\n"})
    install_hooks(ws)
    model.turns = [
        [function_call("c1", "create", {"path": str(ws / "new.txt"), "file_text": "x\n"})],
        [message("ok")],
    ]
    (tmp_path / "wb").write_text("a file where the journals' folder should be\n")
    copilot(tmp_path, ws, model, cache, "gpt-4.1")

    assert not (ws / "new.txt").exists()
    assert "walkback: not journaled" in json.dumps(model.requests[-1]["body"]["input"])


def test_pascal_case_payloads_are_journaled_the_same(tmp_path: Path) -> None:
    """Captured payloads pascal_pre_write, pascal_post_write (a config with PascalCase events)."""
    ws = tmp_path / "ws"
    make_repo(ws, {"keep.txt": b"k\n"})
    env = {"WALKBACK_HOME": str(tmp_path / "wb"), "COPILOT_HOME": str(tmp_path / "copilot")}
    args = {"path": str(ws / "notes.txt"), "file_text": "one\ntwo\n"}
    fields = {"cwd": str(ws), "session_id": "c-1", "tool_input": args}
    assert hook("copilot-cli", payload("copilot-cli", "pascal_pre_write", **fields), env).returncode == 0
    (ws / "notes.txt").write_bytes(b"one\ntwo\n")
    assert hook("copilot-cli", payload("copilot-cli", "pascal_post_write", **fields), env).returncode == 0
    _, records = session_journal(tmp_path / "wb", "copilot-cli")
    (intent,) = of(records, "intent")
    assert (intent["tool"], intent["target"], intent["post"]) == ("Write", "notes.txt", sha(b"one\ntwo\n"))
    assert_files_journaled(records, ws)


USERS = {
    "version": 1,
    "hooks": {
        "preToolUse": [{"type": "command", "bash": "./guard.sh", "timeoutSec": 5}],
        "sessionEnd": [{"type": "command", "bash": "notify-send done"}],
    },
}


def test_install_merges_into_a_hooks_file_and_uninstall_gives_it_back(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    installed = install_round_trip("copilot-cli", ws, ws / ".github" / "hooks" / "walkback.json", USERS)
    assert installed["hooks"]["preToolUse"][0] == USERS["hooks"]["preToolUse"][0]
    assert installed["hooks"]["preToolUse"][1]["timeoutSec"] == 60
    events = ["postToolUse", "postToolUseFailure", "preToolUse", "sessionEnd", "sessionStart"]
    assert sorted(installed["hooks"]) == events and installed["version"] == 1
    refuses_malformed("copilot-cli", ws, ws / ".github" / "hooks" / "walkback.json")


def test_user_scope_writes_copilot_home(tmp_path: Path) -> None:
    hooks_cli(
        "install", "--agent", "copilot-cli", "--scope", "user", env={"COPILOT_HOME": str(tmp_path / "cp")}
    )
    assert "preToolUse" in json.loads((tmp_path / "cp" / "hooks" / "walkback.json").read_text())["hooks"]


def test_a_resumed_session_gets_its_torn_file_restored_and_the_brief(
    tmp_path: Path, model: ScriptedResponses, cache: Path
) -> None:
    """A real Copilot session, then a crash of it faked after its preToolUse hook (the captured
    camelCase pre_edit payload through the hook command) with the file torn; ``copilot --resume``."""
    ws = tmp_path / "ws"
    make_repo(ws, {"notes.txt": b"one\ntwo\n"})
    install_hooks(ws)
    model.turns = [[message("first")]]
    copilot(tmp_path, ws, model, cache, "gpt-4.1")
    session = only_session(tmp_path)
    args = {"path": str(ws / "notes.txt"), "old_str": "two", "new_str": "three"}
    pre = payload("copilot-cli", "pre_edit", cwd=str(ws), sessionId=session, toolArgs=args)
    env = {"WALKBACK_HOME": str(tmp_path / "wb"), "COPILOT_HOME": str(tmp_path / "home" / ".copilot")}
    crash_before_the_tool("copilot-cli", pre, ws / "notes.txt", env)
    model.turns, asked = [[message("continuing")]], len(model.requests)
    copilot(tmp_path, ws, model, cache, "gpt-4.1", f"--resume={session}")

    assert (ws / "notes.txt").read_bytes() == b"one\nthree\n"  # restored from the pre-image, then redone
    assert "walkback recovered this session" in json.dumps(model.requests[asked]["body"]["input"])
