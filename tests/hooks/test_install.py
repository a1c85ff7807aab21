"""``walkback hooks install|uninstall|status`` on configs that already hold the user's own hooks."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from walkback.cli import cli

USERS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
}


def invoke(*args: str, home: Path | None = None) -> Any:
    env = {"HOME": str(home)} if home else None
    return CliRunner().invoke(cli, ["hooks", *args], env=env, catch_exceptions=False)


def settings(ws: Path) -> Path:
    return ws / ".claude" / "settings.json"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    settings(ws).write_text(json.dumps(USERS, indent=4))
    return ws


def test_install_twice_then_uninstall_gives_back_the_users_config(ws: Path) -> None:
    r = invoke("install", "--agent", "claude-code", "--workspace", str(ws))
    assert r.exit_code == 0, r.output
    config = json.loads(settings(ws).read_text())
    assert config["model"] == "opus" and config["permissions"] == USERS["permissions"]
    assert config["hooks"]["Stop"] == USERS["hooks"]["Stop"]
    assert config["hooks"]["PreToolUse"][0] == USERS["hooks"]["PreToolUse"][0]  # the user's, first
    ours = config["hooks"]["PreToolUse"][1]
    assert ours["matcher"] == "Write|Edit|MultiEdit|NotebookEdit|Bash"
    command = ours["hooks"][0]["command"]
    assert shlex.split(command)[1:] == ["-m", "walkback.agent.hooks", "claude-code"]
    assert os.path.isabs(shlex.split(command)[0])
    for event in (
        "PostToolUse",
        "PostToolUseFailure",
        "SubagentStart",
        "SubagentStop",
        "PreCompact",
        "SessionStart",
    ):
        assert [h["command"] for g in config["hooks"][event] for h in g["hooks"]] == [command]
    backup = settings(ws).with_name("settings.json.walkback-backup")
    assert json.loads(backup.read_text()) == USERS

    once = settings(ws).read_bytes()
    again = invoke("install", "--agent", "claude-code", "--workspace", str(ws))
    assert "already installed" in again.output and settings(ws).read_bytes() == once

    status = invoke("status", "--agent", "claude-code", "--workspace", str(ws), "--json")
    project = next(s for s in json.loads(status.output) if s["scope"] == "project")
    assert project["installed"] and project["missing"] == []

    r = invoke("uninstall", "--agent", "claude-code", "--workspace", str(ws))
    assert r.exit_code == 0 and "removed" in r.output
    assert json.loads(settings(ws).read_text()) == USERS
    assert invoke("uninstall", "--agent", "claude-code", "--workspace", str(ws)).output.endswith(
        "no walkback hooks to remove\n"
    )


def test_a_reinstall_with_another_failure_policy_replaces_the_entry(ws: Path) -> None:
    invoke("install", "--agent", "claude-code", "--workspace", str(ws), "--on-failure", "allow")
    commands = [
        h["command"] for g in json.loads(settings(ws).read_text())["hooks"]["PreToolUse"] for h in g["hooks"]
    ]
    assert commands[1].endswith("claude-code --on-failure allow")
    invoke("install", "--agent", "claude-code", "--workspace", str(ws))
    commands = [
        h["command"] for g in json.loads(settings(ws).read_text())["hooks"]["PreToolUse"] for h in g["hooks"]
    ]
    assert len(commands) == 2 and commands[1].endswith("claude-code")


def test_a_group_shared_with_the_users_hook_keeps_the_users_hook(ws: Path) -> None:
    invoke("install", "--agent", "claude-code", "--workspace", str(ws))
    config = json.loads(settings(ws).read_text())
    config["hooks"]["PreCompact"][0]["hooks"].append({"type": "command", "command": "./save-notes.sh"})
    settings(ws).write_text(json.dumps(config))
    invoke("uninstall", "--agent", "claude-code", "--workspace", str(ws))
    after = json.loads(settings(ws).read_text())
    assert after["hooks"]["PreCompact"] == [{"hooks": [{"type": "command", "command": "./save-notes.sh"}]}]
    assert set(after["hooks"]) == {"PreToolUse", "Stop", "PreCompact"}


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"hooks": {"PreToolUse": [', "not valid JSON"),
        ("[1]", "not a JSON object"),
        ('{"hooks": []}', '"hooks" is not an object'),
        ('{"hooks": {"PreToolUse": {"matcher": "x"}}}', '"hooks.PreToolUse" is not a list'),
    ],
)
def test_a_malformed_config_is_refused_with_one_line_and_left_untouched(
    ws: Path, text: str, why: str
) -> None:
    settings(ws).write_text(text)
    for action in ("install", "uninstall"):
        r = CliRunner().invoke(cli, ["hooks", action, "--agent", "claude-code", "--workspace", str(ws)])
        assert r.exit_code == 2 and why in r.output and len(r.output.splitlines()) == 1, r.output
        assert r.output.startswith(f"Error: {settings(ws)}")
        assert settings(ws).read_text() == text
    assert not settings(ws).with_name("settings.json.walkback-backup").exists()


def test_user_scope_writes_the_home_config(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    r = invoke("install", "--agent", "claude-code", "--scope", "user", home=home)
    assert r.exit_code == 0, r.output
    assert "PreToolUse" in json.loads((home / ".claude" / "settings.json").read_text())["hooks"]


def test_the_installed_command_works_from_any_directory(ws: Path, tmp_path: Path) -> None:
    invoke("install", "--agent", "claude-code", "--workspace", str(ws))
    command = json.loads(settings(ws).read_text())["hooks"]["PreToolUse"][1]["hooks"][0]["command"]
    payload = {
        "session_id": "anywhere",
        "cwd": str(ws),
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_use_id": "toolu_9",
        "tool_input": {"file_path": "n.txt", "content": "n"},
    }
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"PATH": "/usr/bin:/bin", "WALKBACK_HOME": str(tmp_path / "wb")}
    p = subprocess.run(command, shell=True, cwd=elsewhere, input=json.dumps(payload), text=True, env=env)
    assert p.returncode == 0
    assert (tmp_path / "wb" / "hooks" / "claude-code" / "anywhere" / "journal.jsonl").is_file()
