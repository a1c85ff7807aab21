"""A record no mapping covers: kept, shown, never dropped."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._base import BaseDetail


class Other(BaseDetail):
    """A source record of a type the importer does not map (its raw record is the content)."""

    kind: Literal["other"] = Field(default="other")
    """Event kind."""
    type: str = ""
    """The source's own record type."""
    summary: str = ""
    """A line saying what it is, when the importer can tell."""
