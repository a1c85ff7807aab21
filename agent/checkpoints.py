"""Checkpoints: a git commit of the workspace on ``walkback/<run>``, without touching the user's HEAD.

The tree is built in a temporary index inside the run directory (``GIT_INDEX_FILE``), committed
with ``commit-tree`` and named with ``update-ref``: the user's branch, index and working tree are
left exactly as they were. Every git call fsyncs (see :mod:`agent.gitutil`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from walkback.journal import failpoints
from walkback.journal.segments import SEGMENTS_DIR, rotate_threshold

from .gitutil import git, write_tree

if TYPE_CHECKING:
    from .harness import Harness

INDEX_NAME = "checkpoint.index"


def make_checkpoint(workspace: Path, run_dir: Path, *, branch: str, parent: str | None, message: str) -> str:
    """Commit the workspace's current files (as ``git add -A`` sees them) and return the sha."""
    tree = write_tree(workspace, run_dir / INDEX_NAME)  # we hold the run lock: a stale index is a kill's
    parents = ["-p", parent] if parent else []
    sha = git(workspace, "commit-tree", tree, *parents, "-m", message)
    ref_lock = workspace / git(workspace, "rev-parse", "--git-path", f"refs/heads/{branch}.lock")
    if ref_lock.exists():  # an update-ref killed mid-way; the branch is this run's and we hold its lock
        os.unlink(ref_lock)
    git(workspace, "update-ref", "-m", "walkback checkpoint", f"refs/heads/{branch}", sha)
    return sha


def take_checkpoint(h: Harness) -> None:
    """A git commit of the workspace on ``walkback/<run>``, then a ``checkpoint`` record.

    Only the top-level agent checkpoints (its safe points see every subagent finished), and only
    in a git workspace; never twice in a row with nothing journaled between.
    """
    st = h.state
    base = st.header.get("base_ref")
    if not h.top_level or not base:
        return
    if st.checkpoint is not None and st.checkpoint.get("covers_lsn") == h.writer.next_lsn - 1:
        return
    parent = str(st.checkpoint["git"]) if st.checkpoint else str(base)
    covers = h.writer.next_lsn
    branch = f"walkback/{h.writer.run}"
    message = f"walkback checkpoint: run {h.writer.run}, lsn < {covers}"
    sha = make_checkpoint(h.workspace, h.run_dir, branch=branch, parent=parent, message=message)
    failpoints.failpoint("checkpoint.after_git_commit")
    h.append("checkpoint", git=sha, branch=branch, covers_lsn=covers)
    h.emit(f"checkpoint {sha[:10]} on {branch} (covers lsn < {covers})")
    segment = h.writer.rotate(rotate_threshold())  # a safe point: nothing open refers back past it
    if segment is not None:
        h.emit(f"journal archived as {SEGMENTS_DIR}/{segment.name}; continued at lsn {h.writer.first_lsn}")
