"""``run_command`` and verification checks: real subprocesses, exit code and output tail kept."""

from __future__ import annotations

from pathlib import Path

from walkback.journal.effects import CommandResult, run

from .base import resolve

__all__ = ["CommandResult", "run_check", "run_command"]


def run_command(argv: list[str], cwd: str, workspace: Path, *, timeout: float = 300.0) -> CommandResult:
    """Run ``argv`` (no shell) in ``workspace/cwd``."""
    return run(argv, resolve(workspace, cwd), timeout=timeout)


def run_check(cmd: str, workspace: Path, *, timeout: float = 300.0) -> CommandResult:
    """Run a task's verification command (a shell string) in the workspace."""
    return run(cmd, workspace, shell=True, timeout=timeout)
