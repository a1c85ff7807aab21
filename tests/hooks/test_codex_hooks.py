"""Codex CLI hooked by walkback: the real Codex (0.171.0, npm) run offline with ``codex exec``
against the scripted Responses API (scripted_openai.py), its project hooks running the real hook
command; and captured payload shapes (tests/hooks/payloads/codex) fed to the hook command for the
cases a scripted model does not reach cheaply (a patch given to the shell, a move)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hookjournal_helpers import git, make_repo
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

APP = b"def greet():\n    return 'hi'\n"
PATCH = (
    "*** Begin Patch\n*** Update File: app.py\n@@ def greet():\n-    return 'hi'\n+    return 'hello'\n"
    "*** Add File: notes.txt\n+one\n+two\n*** End Patch\n"
)


@pytest.fixture
def model() -> Iterator[ScriptedResponses]:
    server = ScriptedResponses([])
    yield server
    server.close()


def codex_home(home: Path, ws: Path, base_url: str) -> Path:
    """Codex's config: the scripted provider, and the workspace trusted (a project's hooks load
    only in a trusted project)."""
    conf = home / ".codex"
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "config.toml").write_text(
        f'model = "gpt-5.5"\nmodel_provider = "scripted"\n\n[model_providers.scripted]\nname = "scripted"\n'
        f'base_url = "{base_url}"\nenv_key = "SCRIPTED_API_KEY"\nwire_api = "responses"\n\n'
        f'[projects."{ws}"]\ntrust_level = "trusted"\n'
    )
    return conf


def install_hooks(ws: Path) -> None:
    """``walkback hooks install --agent codex``: the project's ``.codex/hooks.json``."""
    hooks_cli("install", "--agent", "codex", "--workspace", str(ws))


def codex(tmp_path: Path, ws: Path, model: ScriptedResponses, *more: str) -> None:
    """``codex exec`` in ``ws`` (``more``: its arguments after the options, default a prompt)."""
    home = tmp_path / "home"
    env = {**base_env(home, tmp_path / "wb"), "CODEX_HOME": str(codex_home(home, ws, model.base_url))}
    env["SCRIPTED_API_KEY"] = "sk-scripted"
    # Codex refuses to make its sandbox helpers (codex-linux-sandbox, apply_patch) in a CODEX_HOME
    # under the temporary folder, and with a system bwrap on PATH the sandbox then cannot start
    # (openai/codex#24341): the scratch CODEX_HOME lives in tmp_path, so the temporary folder moves.
    env["TMPDIR"] = str(tmp_path / "tmpdir")
    (tmp_path / "tmpdir").mkdir(exist_ok=True)
    cmd = [str(agent_bin("codex")), "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust"]
    run_agent([*cmd, "-s", "workspace-write", *(more or ("edit the app",))], ws, env)


def test_a_codex_session_is_journaled_with_the_files_hashes(tmp_path: Path, model: ScriptedResponses) -> None:
    ws = tmp_path / "ws"
    make_repo(ws, {"app.py": APP, "sub/keep.txt": b"k\n"})
    install_hooks(ws)
    model.turns = [
        [custom_call("call_patch", "apply_patch", PATCH)],
        [function_call("call_sh", "exec_command", {"cmd": "echo made > made.txt; ls", "workdir": "sub"})],
        [message("done")],
    ]
    codex(tmp_path, ws, model)

    assert (ws / "app.py").read_text() == "def greet():\n    return 'hello'\n"
    path, records = session_journal(tmp_path / "wb", "codex")
    start = records[0]
    assert start["type"] == "run.start" and start["workspace"] == str(ws)
    assert start["hooked"]["agent"] == "codex" and Path(start["hooked"]["transcript"]).is_file()
    files = [r for r in of(records, "intent") if r["effect"] == "fs"]
    assert [(r["target"], r["call"], r["part"]) for r in files] == [
        ("app.py", "call_patch", [0, 2]),
        ("notes.txt", "call_patch", [1, 2]),
    ]
    assert files[0]["pre"] == sha(APP) and files[1]["pre"] == "absent"
    assert files[0]["pre_image"] == {"text": APP.decode()}
    assert_files_journaled(records, ws)

    (shell,) = [r for r in of(records, "intent") if r["effect"] == "command"]
    assert shell["call"] == "call_sh" and shell["cwd"] == str(ws / "sub")
    assert shell["snapshot"]["repo"] == str(ws)
    listed = git(ws, "ls-tree", "-r", "--name-only", shell["snapshot"]["git_tree"]).split()
    assert "notes.txt" in listed and "sub/made.txt" not in listed  # after the patch, before the command
    assert "keep.txt" in commit_of(records, shell)["result"]["output_tail"]
    assert git(ws, "status", "--porcelain", "--untracked-files=no").split() == ["M", "app.py"]


def test_a_patch_that_cannot_be_journaled_is_blocked(tmp_path: Path, model: ScriptedResponses) -> None:
    ws = tmp_path / "ws"
    make_repo(ws, {"app.py": APP})
    install_hooks(ws)
    model.turns = [[custom_call("call_patch", "apply_patch", PATCH)], [message("stopped")]]
    (tmp_path / "wb").write_text("a file where the journals' folder should be\n")
    codex(tmp_path, ws, model)

    assert (ws / "app.py").read_bytes() == APP and not (ws / "notes.txt").exists()
    told = json.dumps(model.requests[-1]["body"]["input"])
    assert "blocked by PreToolUse hook" in told and "walkback: not journaled" in told


def _session(tmp_path: Path) -> tuple[Path, dict[str, str], dict[str, str]]:
    ws = tmp_path / "ws"
    rollout = tmp_path / "rollout.jsonl"
    rollout.write_text(json.dumps({"type": "session_meta", "payload": {"cwd": str(ws)}}) + "\n")
    fields = {"cwd": str(ws), "transcript_path": str(rollout), "session_id": "s-1"}
    return ws, fields, {"WALKBACK_HOME": str(tmp_path / "wb")}


def test_a_patch_given_to_the_shell_is_a_file_intent(tmp_path: Path) -> None:
    """Captured Bash payload shape (codex/pre_bash.json) with an ``apply_patch <<'EOF'`` command."""
    ws, fields, env = _session(tmp_path)
    make_repo(ws, {"x.txt": b"a\n"})
    command = "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: x.txt\n@@\n-a\n+b\n*** End Patch\nEOF"
    for name in ("pre_bash", "post_bash"):
        data = payload("codex", name, **fields, tool_input={"command": command})
        if name == "post_bash":
            (ws / "x.txt").write_bytes(b"b\n")
        assert hook("codex", data, env).returncode == 0
    _, records = session_journal(tmp_path / "wb", "codex")
    (intent,) = of(records, "intent")
    assert (intent["effect"], intent["target"], intent["post"]) == ("fs", "x.txt", sha(b"b\n"))
    assert_files_journaled(records, ws)


def test_a_move_is_the_source_deleted_and_the_destination_written(tmp_path: Path) -> None:
    """Captured apply_patch payload shape (codex/pre_apply_patch_add.json) with a ``Move to``."""
    ws, fields, env = _session(tmp_path)
    make_repo(ws, {"old.txt": b"keep\nold\n"})
    patch = "*** Begin Patch\n*** Update File: old.txt\n*** Move to: new.txt\n"
    patch += "@@\n keep\n-old\n+new\n*** End Patch\n"
    pre = payload("codex", "pre_apply_patch_add", **fields, tool_input={"command": patch})
    assert hook("codex", pre, env).returncode == 0
    os.rename(ws / "old.txt", ws / "new.txt")
    (ws / "new.txt").write_bytes(b"keep\nnew\n")
    post = payload("codex", "post_apply_patch_add", **fields, tool_input={"command": patch})
    assert hook("codex", post, env).returncode == 0
    _, records = session_journal(tmp_path / "wb", "codex")
    intents = of(records, "intent")
    assert [(r["target"], r["pre"], r["post"]) for r in intents] == [
        ("old.txt", sha(b"keep\nold\n"), "absent"),
        ("new.txt", "absent", sha(b"keep\nnew\n")),
    ]
    assert [commit_of(records, r)["verified"] for r in intents] == [{"post": True}, {"post": True}]


def test_a_patch_that_does_not_apply_has_no_expected_hash(tmp_path: Path) -> None:
    """Captured payload codex/pre_apply_patch_not_applying.json (Codex sends no PostToolUse for it)."""
    ws, fields, env = _session(tmp_path)
    make_repo(ws, {"missing.txt": b"something else\n"})
    assert hook("codex", payload("codex", "pre_apply_patch_not_applying", **fields), env).returncode == 0
    _, records = session_journal(tmp_path / "wb", "codex")
    (intent,) = of(records, "intent")
    assert intent["pre"] == sha(b"something else\n") and "post" not in intent


USERS = {
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    }
}


def test_install_merges_into_the_users_hooks_json_and_uninstall_gives_it_back(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    installed = install_round_trip("codex", ws, ws / ".codex" / "hooks.json", USERS)
    assert installed["hooks"]["Stop"] == USERS["hooks"]["Stop"]
    assert installed["hooks"]["PreToolUse"][0] == USERS["hooks"]["PreToolUse"][0]
    assert installed["hooks"]["PreToolUse"][1]["matcher"] == "apply_patch|Bash"
    assert sorted(installed["hooks"]) == ["PostToolUse", "PreCompact", "PreToolUse", "SessionStart", "Stop"]
    refuses_malformed("codex", ws, ws / ".codex" / "hooks.json")


def test_user_scope_writes_codex_home(tmp_path: Path) -> None:
    out = hooks_cli(
        "install", "--agent", "codex", "--scope", "user", env={"CODEX_HOME": str(tmp_path / "cx")}
    )
    assert "trust them" in out  # the install says the hooks must be trusted before Codex runs them
    assert "PreToolUse" in json.loads((tmp_path / "cx" / "hooks.json").read_text())["hooks"]


def test_a_resumed_session_gets_its_torn_file_restored_and_the_brief(
    tmp_path: Path, model: ScriptedResponses
) -> None:
    """A real Codex session, then a crash of it faked after its PreToolUse hook (the captured
    apply_patch payload shape through the hook command) with the file torn; ``codex exec resume``."""
    ws = tmp_path / "ws"
    make_repo(ws, {"app.py": APP})
    install_hooks(ws)
    model.turns = [[message("first")]]
    codex(tmp_path, ws, model)
    (rollout,) = (tmp_path / "home" / ".codex" / "sessions").rglob("rollout-*.jsonl")
    session = json.loads(rollout.read_text().splitlines()[0])["payload"]["id"]
    fields = {"cwd": str(ws), "transcript_path": str(rollout), "session_id": session}
    pre = payload("codex", "pre_apply_patch_add", **fields, tool_input={"command": PATCH})
    crash_before_the_tool("codex", pre, ws / "app.py", {"WALKBACK_HOME": str(tmp_path / "wb")})
    model.turns, asked = [[message("continuing")]], len(model.requests)
    codex(tmp_path, ws, model, "resume", session, "continue")

    assert (ws / "app.py").read_text() == "def greet():\n    return 'hello'\n"  # restored, then redone
    assert (ws / "notes.txt").read_text() == "one\ntwo\n"
    brief = json.dumps(model.requests[asked]["body"]["input"])
    assert "walkback recovered this session" in brief and "call_p1" in brief
