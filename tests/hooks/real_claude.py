"""Running the real Claude Code (the npm package, pinned) offline against the scripted API.

``./run test`` installs it into ``.venv/node`` (CLAUDE_CODE_VERSION there); a machine without node
skips these tests, except under CI=true, where a missing Claude Code fails them.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLAUDE_CODE_VERSION = "2.1.197"
CLAUDE = ROOT / ".venv" / "node" / "node_modules" / ".bin" / "claude"
TOOLS = "Write Edit Bash Read"


def claude_bin() -> Path:
    """The pinned Claude Code, or a skip (a failure under CI) saying how to get it."""
    how = f"npm install --prefix .venv/node @anthropic-ai/claude-code@{CLAUDE_CODE_VERSION} (./run test does)"
    if not CLAUDE.exists() or shutil.which("node") is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Claude Code is not installed: {how}")
        pytest.skip(f"Claude Code is not installed: {how}")
    return CLAUDE


@dataclass
class Claude:
    """One scratch HOME and workspace in which the real Claude Code runs against ``base_url``."""

    home: Path
    workspace: Path
    walkback_home: Path
    base_url: str = ""
    extra_env: dict[str, str] = field(default_factory=dict)

    def env(self) -> dict[str, str]:
        return {
            "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(self.home),
            "ANTHROPIC_BASE_URL": self.base_url,
            "ANTHROPIC_API_KEY": "sk-ant-scripted",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "WALKBACK_HOME": str(self.walkback_home),
            **self.extra_env,
        }

    def trust(self) -> None:
        """Mark the workspace trusted (as root, --dangerously-skip-permissions is refused)."""
        state = {
            "hasCompletedOnboarding": True,
            "projects": {str(self.workspace): {"hasTrustDialogAccepted": True}},
        }
        (self.home / ".claude.json").write_text(json.dumps(state))

    def start(self, prompt: str, *more: str) -> subprocess.Popen[bytes]:
        """``claude -p PROMPT`` in the workspace, in its own process group."""
        cmd = [str(claude_bin()), "-p", prompt, "--output-format", "json", "--allowedTools", TOOLS, *more]
        return subprocess.Popen(
            cmd,
            cwd=self.workspace,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )

    def run(self, prompt: str, *more: str, timeout: float = 120) -> dict[str, Any]:
        """Run to the end; return Claude Code's JSON result (``session_id``, ``result``, ...)."""
        p = self.start(prompt, *more)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(p)
            raise
        assert p.returncode == 0, (
            f"claude exited {p.returncode}: {err.decode()[-2000:]} {out.decode()[-2000:]}"
        )
        result: dict[str, Any] = json.loads(out)
        return result

    def transcript(self, session: str) -> Path:
        """Where Claude Code writes a session's transcript."""
        key = "".join(c if c.isalnum() else "-" for c in str(self.workspace))
        return self.home / ".claude" / "projects" / key / f"{session}.jsonl"


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def kill_group(p: subprocess.Popen[bytes]) -> None:
    """SIGKILL the agent's process group, and every process it started: Claude Code runs each
    shell command and hook in a session of its own, which a kill of its group alone would miss."""
    for pid in _descendants(p.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait()
