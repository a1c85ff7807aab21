"""The real Codex, Gemini CLI and Copilot CLI (npm packages, pinned), run offline in a scratch HOME.

``./run test`` installs them into ``.venv/node`` beside Claude Code (:data:`PINNED`). A machine
without node or without them skips the tests that run them, except under CI=true, where that
fails. Every agent talks only to a scripted model server on 127.0.0.1, and its hooks run the
real hook command of this checkout (``python -m walkback.agent.hooks AGENT``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from walkback.journal.reader import read_records, scan

from walkback.cli import cli

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / ".venv" / "node" / "node_modules"
PINNED = {
    "codex": "@openai/codex@0.171.0",
    "gemini": "@google/gemini-cli@0.61.0",
    "copilot": "@github/copilot@1.0.102",
}
"""The agent's bin name -> the package ``./run`` installs (an edit here is an edit there)."""
PAYLOADS = Path(__file__).resolve().parent / "payloads"
PYTHON = sys.executable


def agent_bin(name: str) -> Path:
    """The pinned CLI, or a skip (a failure under CI) saying how to get it."""
    path = NODE / ".bin" / name
    if not path.exists() or shutil.which("node") is None:
        how = f"npm install --prefix .venv/node {PINNED[name]} (./run test does)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name} is not installed: {how}")
        pytest.skip(f"{name} is not installed: {how}")
    return path


def hook_command(agent: str) -> str:
    """The hook command an install writes, run from this checkout's interpreter."""
    return f"{PYTHON} -m walkback.agent.hooks {agent}"


def base_env(home: Path, walkback_home: Path) -> dict[str, str]:
    """A scratch HOME, the walkback journals under ``walkback_home``, nothing else inherited."""
    return {
        "PATH": f"{Path(PYTHON).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(home),
        "WALKBACK_HOME": str(walkback_home),
        "NO_COLOR": "1",
    }


def run_agent(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 90) -> str:
    """Run an agent to its end (asserting it exits 0); return its stdout."""
    p = subprocess.run(
        cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
    )
    assert p.returncode == 0, f"{cmd[0]} exited {p.returncode}: {p.stderr[-3000:]} {p.stdout[-2000:]}"
    return p.stdout


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def session_journal(walkback_home: Path, agent: str) -> tuple[Path, list[dict[str, Any]]]:
    """The one hook journal of ``agent`` under ``walkback_home``: its path and records, checked
    intact (hash chain and all) by the journal reader."""
    found = sorted((walkback_home / "hooks" / agent).glob("*/journal.jsonl"))
    assert len(found) == 1, found
    assert scan(found[0]).intact
    records, _ = read_records(found[0])
    return found[0], [r.data for r in records]


def of(records: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [r for r in records if r["type"] == kind]


def commit_of(records: list[dict[str, Any]], intent: dict[str, Any]) -> dict[str, Any]:
    (closing,) = [r for r in records if r.get("ref") == intent["lsn"] and r["type"] in ("commit", "fail")]
    return closing


def assert_files_journaled(records: list[dict[str, Any]], workspace: Path) -> None:
    """Every file intent's commit observed the hash the file has now, and it was the expected one."""
    for intent in of(records, "intent"):
        if intent["effect"] != "fs":
            continue
        commit = commit_of(records, intent)
        assert commit["type"] == "commit", commit
        assert commit["verified"] == {"post": True}, (intent, commit)
        assert commit["post"] == intent["post"] == sha((workspace / intent["target"]).read_bytes())


def payload(agent: str, name: str, **fields: Any) -> dict[str, Any]:
    """A captured payload (tests/hooks/payloads) with some fields replaced."""
    data: dict[str, Any] = json.loads((PAYLOADS / agent / f"{name}.json").read_text())
    data.update(fields)
    return data


def hook(agent: str, data: dict[str, Any], env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    """The real hook command run as the agent runs it: the payload on stdin."""
    return subprocess.run(
        [PYTHON, "-m", "walkback.agent.hooks", agent],
        input=json.dumps(data).encode(),
        env={**os.environ, **env},
        capture_output=True,
        timeout=30,
    )


def hooks_cli(*args: str, env: dict[str, str] | None = None) -> str:
    """``walkback hooks ARGS`` in process; asserts exit 0 and returns what it printed."""
    r = CliRunner().invoke(cli, ["hooks", *args], env=env, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return str(r.output)


def install_round_trip(agent: str, ws: Path, config: Path, users: dict[str, Any]) -> dict[str, Any]:
    """Install twice into a config holding the user's own hooks and keys, then uninstall: the
    second install changes nothing, the uninstall gives the user's config back, a backup stays.
    Returns the config as installed."""
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps(users, indent=4))
    where = ("--agent", agent, "--workspace", str(ws))
    assert "installed on" in hooks_cli("install", *where)
    installed: dict[str, Any] = json.loads(config.read_text())
    assert "already installed" in hooks_cli("install", *where)
    assert json.loads(config.read_text()) == installed
    (row,) = [r for r in json.loads(hooks_cli("status", *where, "--json")) if r["scope"] == "project"]
    assert row["installed"] and row["config"] == str(config) and not row["missing"]
    assert "removed" in hooks_cli("uninstall", *where)
    assert json.loads(config.read_text()) == users
    assert json.loads(config.with_name(config.name + ".walkback-backup").read_text()) == installed
    return installed


def refuses_malformed(agent: str, ws: Path, config: Path) -> None:
    """A config that is not JSON is refused with one line naming it, and left untouched."""
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('{"hooks": [')
    r = CliRunner().invoke(cli, ["hooks", "install", "--agent", agent, "--workspace", str(ws)])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1 and str(config) in r.output
    assert config.read_text() == '{"hooks": ['


def crash_before_the_tool(agent: str, pre: dict[str, Any], target: Path, env: dict[str, str]) -> None:
    """A session that died after its pre-tool hook, with the file left torn: the intent is
    journaled (by the real hook command), then the file is overwritten with junk."""
    assert hook(agent, pre, env).returncode == 0
    target.write_bytes(b"\x00torn half-written junk")
