"""What every typed detail shares: immutable, no unknown fields, built at the importer edge."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class BaseDetail(BaseModel):
    """The content of one event, built lazily from its raw record by the importer that read it.

    Details never hold event indices: links between events are the table's ``ref`` column and the
    session's agent links, so reordering a session never invalidates a detail.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
