"""What a tool knows before it acts (target, pre/post hashes and images), and what it may touch."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from walkback.journal.errors import AgentError

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
