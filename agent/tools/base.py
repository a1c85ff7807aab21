"""What a tool knows before it acts: target, pre/post hashes and images."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from walkback.journal.errors import AgentError
from walkback.journal.record import ABSENT, FILE_TOOLS, sha256_bytes

from ..actions import Action


class ToolError(AgentError):
    """A tool cannot run as asked (missing file, not text, unreachable service)."""


@dataclass(frozen=True)
class Prepared:
    """An action made concrete against the workspace, ready to be journaled as an intent."""

    action: Action
    path: Path | None
    """Absolute target path for file tools (inside the workspace), else None."""
    pre: str | None
    post: str | None
    pre_data: bytes | None
    post_data: bytes | None
    """New content (None: the file is deleted)."""


def resolve(workspace: Path, rel: str) -> Path:
    """The absolute path of a workspace-relative one; refuses anything that escapes (symlinks too)."""
    root = workspace.resolve()
    p = (root / rel).resolve()
    if p != root and root not in p.parents:
        raise ToolError(f"{rel!r} resolves outside the workspace", path=workspace)
    return p


def prepare(action: Action, workspace: Path) -> Prepared:
    """Compute pre/post (file tools) before anything is written."""
    from .files import new_content, read

    if action.tool not in FILE_TOOLS:
        return Prepared(action, None, None, None, None, None)
    path = resolve(workspace, action.args["path"])
    old = read(path)
    new = new_content(action.tool, action.args, old)
    pre = sha256_bytes(old) if old is not None else ABSENT
    post = sha256_bytes(new) if new is not None else ABSENT
    return Prepared(action, path, pre, post, old, new)
