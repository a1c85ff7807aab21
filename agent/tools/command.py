"""``run_command`` and verification checks: real subprocesses, exit code and output tail kept."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .base import resolve

TAIL = 2000
"""Characters of output kept in the journal."""


@dataclass(frozen=True)
class CommandResult:
    exit_code: int
    output_tail: str

    def to_json(self) -> dict[str, object]:
        return {"exit_code": self.exit_code, "output_tail": self.output_tail}


def clean_env() -> dict[str, str]:
    """The agent's environment minus its crash switches: a tool's subprocess must not die of them."""
    return {k: v for k, v in os.environ.items() if not k.startswith("WALKBACK_FAILPOINT")}


def _run(argv: list[str] | str, cwd: Path, timeout: float, shell: bool) -> CommandResult:
    try:
        p = subprocess.run(
            argv,
            cwd=cwd,
            shell=shell,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=clean_env(),
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError as e:
        return CommandResult(127, f"{e.strerror}: {e.filename}")
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode("utf-8", "replace")
        return CommandResult(-9, (out + f"\n[timed out after {timeout:g}s]")[-TAIL:])
    return CommandResult(p.returncode, p.stdout.decode("utf-8", "replace")[-TAIL:])


def run_command(argv: list[str], cwd: str, workspace: Path, *, timeout: float = 300.0) -> CommandResult:
    """Run ``argv`` (no shell) in ``workspace/cwd``."""
    return _run(argv, resolve(workspace, cwd), timeout, shell=False)


def run_check(cmd: str, workspace: Path, *, timeout: float = 300.0) -> CommandResult:
    """Run a task's verification command (a shell string) in the workspace."""
    return _run(cmd, workspace, timeout, shell=True)
