"""What changed in the workspace since a shell intent's snapshot (a hook journal's ``snapshot``).

A command that may or may not have run stays in doubt, but the files it could have touched are a
fact: the snapshot taken before it (docs/hooks.md) against the working tree now. A git snapshot is a
tree object; the working tree is written as a tree through a temporary index (``GIT_INDEX_FILE``),
so the user's index, branch and stash are never touched, and the two trees are compared. A manifest
snapshot is a blob (in the journal's store) of :func:`journal.manifest.manifest`, compared with
the manifest of the files as they are now.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
from walkback.journal.blobs import BlobStore
from walkback.journal.errors import BlobError
from walkback.journal.manifest import MANIFEST_MAX, manifest

GIT_TIMEOUT = 60


def changed_since(snapshot: Mapping[str, Any], workspace: Path, blobs: BlobStore) -> list[str] | str:
    """The paths (relative, sorted) that differ from the snapshot now, or why that cannot be told."""
    tree = snapshot.get("git_tree")
    if isinstance(tree, str):
        repo = snapshot.get("repo")
        return _git_changes(tree, Path(repo) if isinstance(repo, str) and Path(repo).is_dir() else workspace)
    manifest = snapshot.get("manifest")
    if isinstance(manifest, str):
        return _manifest_changes(manifest, workspace, blobs)
    return "the snapshot names neither a git tree nor a manifest"


def _git(repo: Path, env: dict[str, str], *args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, env=env, timeout=GIT_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.decode("utf-8", "surrogateescape") if out.returncode == 0 else None


def _git_changes(tree: str, repo: Path) -> list[str] | str:
    with tempfile.TemporaryDirectory(prefix="walkback-index-") as tmp:
        env = {**os.environ, "GIT_INDEX_FILE": str(Path(tmp) / "index")}
        if _git(repo, env, "add", "-A") is None:
            return f"git cannot read the working tree of {repo}"
        now = _git(repo, env, "write-tree")
        if now is None:
            return f"git cannot write the working tree of {repo} as a tree"
        diff = _git(repo, env, "diff-tree", "-r", "--name-only", "-z", "--no-renames", tree, now.strip())
    if diff is None:
        return f"git cannot compare the snapshot tree {tree[:12]} (not in {repo}?)"
    return sorted(p for p in diff.split("\0") if p)


def _manifest_changes(name: str, workspace: Path, blobs: BlobStore) -> list[str] | str:
    try:
        then = orjson.loads(blobs.get(name))
    except (BlobError, OSError, orjson.JSONDecodeError, ValueError):
        return f"the snapshot manifest {name[:19]}… cannot be read"
    listed = then.get("files") if isinstance(then, dict) else None
    if not isinstance(listed, dict):
        return "the snapshot manifest is not a mapping of paths to hashes"
    now = orjson.loads(manifest(workspace))
    if then.get("truncated") or now.get("truncated"):
        return f"the workspace has more than {MANIFEST_MAX} files: not compared"
    files = now["files"]
    return sorted(k for k in set(listed) | set(files) if listed.get(k) != files.get(k))


def describe(changed: list[str] | str, shown: int = 20) -> str:
    """The finding's words for :func:`changed_since`'s answer."""
    if isinstance(changed, str):
        return f"what changed since its snapshot cannot be told: {changed}"
    if not changed:
        return "nothing changed in the workspace since its snapshot"
    more = f" and {len(changed) - shown} more" if len(changed) > shown else ""
    return f"changed since its snapshot: {', '.join(changed[:shown])}{more}"
