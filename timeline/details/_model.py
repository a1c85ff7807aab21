"""A model call and its result: which model, what it cost in tokens, why it stopped."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._base import BaseDetail


class Usage(BaseDetail):
    """Token usage of one model response (None: the source does not say)."""

    input_tokens: int | None = None
    """Prompt tokens, cache reads excluded where the source separates them."""
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None
    total_tokens: int | None = None


class ModelCall(BaseDetail):
    """A request to a model."""

    kind: Literal["model_call"] = Field(default="model_call")
    """Event kind."""
    model: str = ""
    """The model asked."""
    summary: str = ""
    """What was asked, in a line (the last prompt), when the source records the request."""


class ModelResult(BaseDetail):
    """A model's response: the model, its token usage, its stop reason."""

    kind: Literal["model_result"] = Field(default="model_result")
    """Event kind."""
    model: str = ""
    """The model that answered."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens of this response (streamed duplicates of one response counted once)."""
    stop_reason: str = ""
    """``end_turn``, ``tool_use``, ``max_tokens`` ... as the provider says."""
    cost: float | None = None
    """Cost in US dollars, when the source records it."""
    response_id: str = ""
    """The provider's id of the response (a message id, a response id)."""
    text: str = ""
    """What the model answered, when the result record carries it (else see its messages)."""
