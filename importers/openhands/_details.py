"""Typed details of OpenHands events, for both layouts (the reader marks which in
``session.header["layout"]``)."""

from __future__ import annotations

from walkback.timeline.details import Detail
from walkback.timeline.session import Session

from . import _details_v0, _details_v1


def details(session: Session, i: int) -> Detail:
    """The detail of event ``i`` of an OpenHands session."""
    layout = _details_v1 if session.header.get("layout") == "v1" else _details_v0
    return layout.details(session, i)
