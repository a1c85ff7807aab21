"""Points in the session's state: checkpoints, compaction, branches from rewinds."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._base import BaseDetail


class Checkpoint(BaseDetail):
    """A snapshot of the work (a git commit, a file-history backup) the session can go back to."""

    kind: Literal["checkpoint"] = Field(default="checkpoint")
    """Event kind."""
    git: str = ""
    """The commit that holds the snapshot, if it is one."""
    covers: int | None = None
    """The lsn through which the snapshot covers the journal."""
    label: str = ""
    """What the snapshot is (files backed up, a ref name)."""


class Compaction(BaseDetail):
    """The context was compacted: history replaced by a summary."""

    kind: Literal["compaction"] = Field(default="compaction")
    """Event kind."""
    trigger: str = ""
    """``auto`` or ``manual``."""
    summary: str = ""
    """The summary that replaced the history, when recorded."""
    tokens_before: int | None = None
    """Context size before compaction."""


class Branch(BaseDetail):
    """The conversation forked here (a rewind, an edited prompt): later events follow a new branch."""

    kind: Literal["branch"] = Field(default="branch")
    """Event kind."""
    parent: str = ""
    """The source id of the record the branch grows from."""
    reason: str = ""
    """What made the fork, when known."""
