"""Text of Inspect messages and contents, with ``attachment://`` references resolved.

Inspect replaces long strings in a sample by ``attachment://<hash>`` and keeps the text once in the
sample's ``attachments``; a message's ``content`` is a string or a list of parts (``text``,
``reasoning``, ``image`` ...).
"""

from __future__ import annotations

from typing import Any

from ..fields import TEXT_LIMIT, mapping, string

ATTACHMENT = "attachment://"
MAX_DEPTH = 32


class Attachments:
    """A sample's attachment table."""

    def __init__(self, table: object) -> None:
        self.table: dict[str, Any] = mapping(table)

    def resolve_text(self, value: str) -> str:
        """The text an ``attachment://`` reference stands for (other strings as they are)."""
        if value.startswith(ATTACHMENT):
            found = self.table.get(value[len(ATTACHMENT) :])
            if isinstance(found, str):
                return found
        return value

    def resolve(self, value: Any, depth: int = 0) -> Any:
        """``value`` with every reference inside it resolved (a copy; the original is untouched)."""
        if isinstance(value, str):
            return self.resolve_text(value)
        if depth > MAX_DEPTH:
            return value
        if isinstance(value, list):
            return [self.resolve(v, depth + 1) for v in value]
        if isinstance(value, dict):
            return {k: self.resolve(v, depth + 1) for k, v in value.items()}
        return value


def content_text(value: Any, depth: int = 0) -> str:
    """What a message, a content list or a sample input says, as text (reasoning left out)."""
    if isinstance(value, str):
        return value[:TEXT_LIMIT]
    if depth > MAX_DEPTH:
        return ""
    if isinstance(value, list):
        parts = [content_text(v, depth + 1) for v in value]
        return "\n".join(p for p in parts if p)[:TEXT_LIMIT]
    if not isinstance(value, dict):
        return ""
    if "content" in value:
        return content_text(value["content"], depth + 1)
    kind = value.get("type")
    if kind == "text":
        return string(value.get("text"))[:TEXT_LIMIT]
    if kind in ("image", "audio", "video", "document"):
        return f"[{kind}]"
    return ""


def reasoning_text(value: Any) -> str:
    """The reasoning parts of a message's content (shown folded as thinking)."""
    content = mapping(value).get("content") if isinstance(value, dict) else value
    if not isinstance(content, list):
        return ""
    parts = [string(mapping(c).get("reasoning")) for c in content if mapping(c).get("type") == "reasoning"]
    return "\n".join(p for p in parts if p)[:TEXT_LIMIT]
