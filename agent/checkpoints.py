"""Checkpoints: a git commit of the workspace on ``walkback/<run>``, without touching the user's HEAD.

The tree is built in a temporary index inside the run directory (``GIT_INDEX_FILE``), committed
with ``commit-tree`` and named with ``update-ref``: the user's branch, index and working tree are
left exactly as they were. Every git call fsyncs (see :mod:`agent.gitutil`).
"""

from __future__ import annotations

import os
from pathlib import Path

from .gitutil import git

INDEX_NAME = "checkpoint.index"


def make_checkpoint(workspace: Path, run_dir: Path, *, branch: str, parent: str | None, message: str) -> str:
    """Commit the workspace's current files (as ``git add -A`` sees them) and return the sha."""
    index = run_dir / INDEX_NAME
    env = {"GIT_INDEX_FILE": str(index.resolve())}
    for stale in (index, index.with_name(INDEX_NAME + ".lock")):  # left by a kill; we hold the run lock
        if stale.exists():
            os.unlink(stale)
    try:
        git(workspace, "add", "-A", env=env)
        tree = git(workspace, "write-tree", env=env)
    finally:
        if index.exists():
            os.unlink(index)
    parents = ["-p", parent] if parent else []
    sha = git(workspace, "commit-tree", tree, *parents, "-m", message)
    git(workspace, "update-ref", "-m", "walkback checkpoint", f"refs/heads/{branch}", sha)
    return sha
