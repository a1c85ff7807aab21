"""The few git plumbing calls the agent needs (base ref, scratch repos, checkpoints).

Every call that writes objects or refs runs with ``core.fsync=all`` and ``core.fsyncMethod=fsync``:
git does not fsync loose objects or refs by default, and a checkpoint that a power loss can erase
is not a checkpoint.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from walkback.journal.errors import WRITE_ERRNOS, AgentError, WriteFailed

DISK_REFUSED = (*(os.strerror(code) for code in WRITE_ERRNOS), "Out of diskspace")
"""What git prints when the disk refuses a write ("No space left on device", "Out of diskspace")."""
DURABLE = ("-c", "core.fsync=all", "-c", "core.fsyncMethod=fsync")
IDENTITY = ("-c", "user.name=walkback", "-c", "user.email=agent@walkback.invalid")


def git(cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    """Run git in ``cwd`` and return its stdout (stripped). Raises AgentError on failure."""
    full_env = {**os.environ, **env} if env else None
    p = subprocess.run(
        ["git", *DURABLE, *IDENTITY, *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        check=False,
    )
    if p.returncode != 0:
        what = f"git {' '.join(args[:3])} failed"
        full = [line for line in p.stderr.splitlines() if any(m in line for m in DISK_REFUSED)]
        if full:
            raise WriteFailed(f"{what}: {full[-1].strip()[:300]}", path=cwd)
        raise AgentError(f"{what}: {p.stderr.strip()[:300]}", path=cwd)
    return p.stdout.strip()


def head(workspace: Path) -> str | None:
    """The commit sha the workspace's HEAD points at, or None outside a git repository."""
    p = subprocess.run(
        ["git", "rev-parse", "--verify", "-q", "HEAD^{commit}"], cwd=workspace, capture_output=True, text=True
    )
    return p.stdout.strip() if p.returncode == 0 else None


def is_repo(workspace: Path) -> bool:
    p = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=workspace, capture_output=True, text=True)
    return p.returncode == 0 and Path(p.stdout.strip()).resolve() == workspace.resolve()
