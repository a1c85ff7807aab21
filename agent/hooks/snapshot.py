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

ASK_GIT = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
)
"""Environment variables that change where git finds a repository: with one set, git is asked."""


def repo_of(cwd: str) -> tuple[Path, Path] | None:
    """The repository's top folder and its git dir, when ``cwd`` is inside a work tree.

    Found as git finds it, by the first ``.git`` (a folder, or a file naming one: a worktree, a
    submodule) from ``cwd`` upwards: a git process less per shell hook. git itself is asked
    whenever its answer could differ: a discovery variable set, a config that moves the work tree
    or says bare, a repository of another owner (``safe.directory``), ``cwd`` inside a git dir.
    """
    if any(k in os.environ for k in ASK_GIT):
        return _ask_git(cwd)
    here = Path(cwd).resolve()
    for top in (here, *here.parents):
        gitdir = _gitdir(top / ".git")
        if gitdir is None:
            continue
        try:
            own = gitdir.stat().st_uid == os.geteuid()
            config = (gitdir / "config").read_text(errors="replace") if (gitdir / "config").exists() else ""
        except OSError:
            return _ask_git(cwd)
        if not own or "worktree" in config or "bare = true" in config or here.is_relative_to(gitdir):
            return _ask_git(cwd)
        return top, gitdir
    return None


def _gitdir(dot: Path) -> Path | None:
    """The git dir a ``.git`` entry stands for (None when it is neither a git dir nor a link to one)."""
    if dot.is_file():
        try:
            line = dot.read_text(errors="replace").strip()
        except OSError:
            return None
        if not line.startswith("gitdir: "):
            return None
        dot = (dot.parent / line[len("gitdir: ") :]).resolve()
    return dot if (dot / "HEAD").is_file() else None


def _ask_git(cwd: str) -> tuple[Path, Path] | None:
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
