"""The few git plumbing calls the agent needs (base ref, scratch repos, checkpoints).

Every call that writes objects or refs runs with ``core.fsync=all`` and ``core.fsyncMethod=fsync``:
git does not fsync loose objects or refs by default, and a checkpoint that a power loss can erase
is not a checkpoint.
"""

from __future__ import annotations

import os
import shutil
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


def write_tree(top: Path, index: Path, *, seed: Path | None = None) -> str:
    """The tree of ``top``'s files as ``git add -A`` sees them (tracked and untracked, not ignored).

    Built in ``index``, a temporary index file (``GIT_INDEX_FILE``), removed afterwards: the
    user's index, branch and stash are untouched. ``seed``: an index to start from (the user's),
    whose stat data spares git hashing the files that did not change.
    """
    for stale in (index, index.with_name(index.name + ".lock")):  # left by a kill
        if stale.exists():
            os.unlink(stale)
    env = {"GIT_INDEX_FILE": str(index.resolve())}
    try:
        if seed is not None and seed.is_file():
            # with its mtime: git trusts an entry's stat data only when the index is newer than the
            # file ("racy git"), so a fresh mtime would hide an edit made as the index was written
            shutil.copy2(seed, index)
        git(top, "add", "-A", env=env)
        return git(top, "write-tree", env=env)
    finally:
        if index.exists():
            os.unlink(index)


def head(workspace: Path) -> str | None:
    """The commit sha the workspace's HEAD points at, or None outside a git repository."""
    p = subprocess.run(
        ["git", "rev-parse", "--verify", "-q", "HEAD^{commit}"], cwd=workspace, capture_output=True, text=True
    )
    return p.stdout.strip() if p.returncode == 0 else None


def is_repo(workspace: Path) -> bool:
    p = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=workspace, capture_output=True, text=True)
    return p.returncode == 0 and Path(p.stdout.strip()).resolve() == workspace.resolve()
