"""A change of one file, as much of it as the source knows: hashes, texts, patch, strings."""

from __future__ import annotations

import hashlib

from pydantic import Field
from walkback.journal.record import ABSENT

from ._base import BaseDetail

__all__ = ["ABSENT", "FileEdit", "text_hash"]


def text_hash(text: str | bytes | None) -> str | None:
    """``sha256:<hex>`` of a file's text (UTF-8), or None when the text is unknown."""
    if text is None:
        return None
    data = text.encode("utf-8") if isinstance(text, str) else text
    return "sha256:" + hashlib.sha256(data).hexdigest()


class FileEdit(BaseDetail):
    """One file change. ``pre``/``post`` are hash names (``sha256:<hex>``, ``absent``) or None when
    the source does not say; an importer computes them from the texts when it knows them."""

    path: str
    """The file, as the source names it (relative to the workspace when it can be)."""
    operation: str = "update"
    """``create``, ``update``, ``delete`` or ``move``."""
    pre: str | None = None
    """Hash of the file before."""
    post: str | None = None
    """Hash of the file after."""
    pre_text: str | None = None
    """The whole file before, when the source carries it (else fetched from a blob by ``pre``)."""
    post_text: str | None = None
    """The whole file after, when known."""
    patch: str | None = None
    """A unified diff, when that is what the source has."""
    old_string: str | None = None
    """For a string replacement: the text replaced."""
    new_string: str | None = None
    """For a string replacement: the text put in its place."""
    moved_to: str | None = None
    """For a move: the new path."""
    edits: list[tuple[str, str]] = Field(default_factory=list)
    """Several string replacements applied in order (MultiEdit, SEARCH/REPLACE blocks)."""
