"""A message of the conversation: a prompt, a reply, a system note, with its thinking."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._base import BaseDetail


class Message(BaseDetail):
    """One message as the agent's conversation holds it."""

    kind: Literal["message"] = Field(default="message")
    """Event kind."""
    role: str = "assistant"
    """``user``, ``assistant``, ``system``, ``developer`` or ``tool`` (the source's word otherwise)."""
    text: str = ""
    """What was said (markdown as the model wrote it; viewers render it with HTML disabled)."""
    thinking: str = ""
    """Reasoning shown with the message (folded by viewers); empty when none or encrypted."""
    model: str = ""
    """The model that wrote an assistant message, when the source says."""
