"""What the working tree held before a shell command, and checkpoints before a compaction.

In a git workspace: a tree object of its tracked and untracked (not ignored) files, built in a
temporary index seeded from the user's (so only changed files are hashed) and never touching the
user's index, branch or stash (:func:`agent.gitutil.write_tree`). Elsewhere: a manifest (path ->
sha256) stored as a blob. A checkpoint commits such a tree with HEAD as parent under
``refs/walkback/<session>/<lsn>``, never on a branch.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from walkback.journal.blobs import BlobStore
from walkback.journal.manifest import manifest

from ..gitutil import git, head, write_tree


def repo_of(cwd: str) -> tuple[Path, Path] | None:
    """The repository's top folder and its git dir, when ``cwd`` is inside a work tree."""
    p = subprocess.run(
        ["git", "rev-parse", "--show-toplevel", "--absolute-git-dir"], cwd=cwd, capture_output=True, text=True
    )
    lines = p.stdout.split("\n")
    if p.returncode != 0 or len(lines) < 2 or not lines[0]:
        return None
    return Path(lines[0]), Path(lines[1])


def snapshot(cwd: str, scratch: Path, blobs: BlobStore) -> dict[str, Any]:
    """``{"git_tree", "repo"}`` in a git work tree, else ``{"manifest": "sha256:..."}``.

    ``scratch``: a folder of walkback's own for the temporary index (the session's run directory).
    """
    repo = repo_of(cwd)
    if repo is None:
        return {"manifest": blobs.put(manifest(Path(cwd)))}
    top, gitdir = repo
    return {"git_tree": _tree(top, gitdir, scratch), "repo": str(top)}


def checkpoint(cwd: str, scratch: Path, *, ref: str, message: str) -> dict[str, Any] | None:
    """Commit the work tree (parent: HEAD) under ``ref``; None outside git. Returns the record's
    fields: ``git`` (the commit), ``ref``, ``repo``."""
    repo = repo_of(cwd)
    if repo is None:
        return None
    top, gitdir = repo
    tree = _tree(top, gitdir, scratch)
    parent = head(top)
    sha = git(top, "commit-tree", tree, *(["-p", parent] if parent else []), "-m", message)
    git(top, "update-ref", "-m", "walkback checkpoint", ref, sha)
    return {"git": sha, "ref": ref, "repo": str(top)}


def _tree(top: Path, gitdir: Path, scratch: Path) -> str:
    return write_tree(top, scratch / f"snapshot.{os.getpid()}.index", seed=gitdir / "index")
