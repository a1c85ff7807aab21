"""Step detail: what one event was (content first), the intent→commit pair, the raw record folded.

The panel is built once and updated in place on every step: its card (``step_card.js``: head,
pair, raw record) takes one dict, the fields and the message their own. Creating NiceGUI elements
is what costs time, so stepping creates none unless a file change is shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from nicegui import events, ui
from walkback.journal.errors import WalkbackError
from walkback.timeline.changes import ChangeView, change_view
from walkback.timeline.details import (
    Detail,
    Message,
    ModelResult,
    ToolCall,
)
from walkback.timeline.session import Session
from walkback.timeline.step_card import detail_of, step_card
from walkback.timeline.story import lsn_is_shared

from .common import Component, as_text, fmt_when, status_color
from .conversation import prose_html
from .file_change import FileChangePanel
from .text import Fields, flatten

MAX_FIELDS = 60
SHOWN_ELSEWHERE = {"kind", "text", "thinking"}
"""Fields the panel shows above the list (a message's text as markdown, its thinking folded)."""
IN_THE_DIFF = {"edit.pre_text", "edit.post_text"}
"""A file change's whole images: the diff shows them (and the blobs download them)."""


@dataclass
class DetailContext:
    """What the detail panel needs besides the event: where files live and how to jump."""

    sid: str
    files: dict[str, np.ndarray]
    workspace: Path | None
    on_pick: Callable[[int], None]


def step_button(label: str, index: int, on_pick: Callable[[int], None]) -> ui.button:
    return ui.button(label, on_click=lambda: on_pick(index)).props("flat dense no-caps size=sm color=primary")


def field_pairs(detail: Detail) -> list[tuple[str, Any]]:
    """The fields the detail sets, nested ones as dotted keys (each string shown as text); an empty
    one says nothing (a commit's change knows its hashes, not the path its intent names)."""
    data = {k: v for k, v in detail.model_dump(exclude_defaults=True).items() if k not in SHOWN_ELSEWHERE}
    if isinstance(detail, ToolCall):
        data.pop("name", None)  # in the "what" line
    pairs = [(k, v) for k, v in flatten(data) if k not in IN_THE_DIFF and v not in ("", [], {})]
    if len(pairs) > MAX_FIELDS:
        pairs = pairs[:MAX_FIELDS] + [("…", f"{len(pairs) - MAX_FIELDS} more fields in the raw record")]
    return pairs


def _prose(detail: Detail) -> tuple[str, str]:
    """A message's (or a model answer's) text and thinking."""
    if isinstance(detail, Message):
        return detail.text, detail.thinking
    if isinstance(detail, ModelResult):
        return detail.text, ""
    return "", ""


class StepCard(Component, component="step_card.js"):
    """The card around a step (head, pair, raw record) as one element; children go in its middle."""

    def __init__(self) -> None:
        super().__init__()
        self._props["card"] = {}

    def texts(self) -> list[Any]:
        card = self._props["card"]
        pair = card.get("pair") or {}
        texts = [card.get(k) for k in ("title", "kind", "type", "status", "badge", "meta", "what", "damage")]
        texts += [pair.get(k) for k in ("head", "line", "status", "verify", "error")]
        return [*texts, *(label for label, _ in pair.get("links", [])), card.get("raw_label")]


class StepDetail:
    """One step's detail; :meth:`show` sends one card and the fields, and builds elements only
    for a file change it has not shown yet."""

    def __init__(self, session: Session, ctx: DetailContext) -> None:
        self.session = session
        self.ctx = ctx
        self.shared = lsn_is_shared(session)
        self.targets: list[int] = []
        with StepCard().classes("w-full gap-2").mark("step-detail") as self.card:
            self.changes = FileChangePanel(ctx.sid)
            self.prose = ui.html("", sanitize=True).classes("wb-md w-full").mark("prose")
            self.fields = Fields().classes("w-full").mark("fields")
        self.card.on("go", self._go)

    def set_session(self, session: Session, ctx: DetailContext) -> None:
        self.session = session
        self.ctx = ctx
        self.shared = lsn_is_shared(session)
        self.changes.forget()

    def _go(self, e: events.GenericEventArguments) -> None:
        k = e.args
        if isinstance(k, int) and 0 <= k < len(self.targets):
            self.ctx.on_pick(self.targets[k])

    def show(self, i: int) -> None:
        s = self.session
        if not len(s):
            self.card.send(card={"title": "this session has no events"})
            self.changes.show(None)
            return
        ev = s.event(i)
        detail = detail_of(s, i)
        card = step_card(s, i, shared=self.shared, detail=detail)
        self.changes.show(self._change(i, ev.kind, ev.ref))
        text, thinking = _prose(detail)
        self.prose.set_content(prose_html(text, thinking) if (text or thinking) else "")
        self.prose.set_visibility(bool(text or thinking))
        self.fields.show(field_pairs(detail))
        pair = card["pair"]
        self.targets = [target for _, target in pair["links"]]
        meta = [m for m in (card.pop("where"), fmt_when(card.pop("ts"))) if m]
        self.card.send(
            card={
                **card,
                "color": status_color(ev.status),
                "meta": " · ".join(meta),
                "pair": {
                    **pair,
                    "color": status_color(pair["status"] or ""),
                    "links": [[label, k] for k, (label, _) in enumerate(pair["links"])],
                    "error": as_text(pair["error"], 2000),
                },
                "raw": as_text(_raw(s, i)),
            }
        )

    def _change(self, i: int, kind: str, ref: int | None) -> ChangeView | None:
        call = i if kind == "tool_call" else (ref if kind == "tool_result" and ref is not None else None)
        if call is None:
            return None
        if self.changes.showing(call):
            return self.changes.view
        target = self.session.event(call).target
        try:
            return change_view(
                self.session, call, history=self.ctx.files.get(target), workspace=self.ctx.workspace
            )
        except (OSError, ValueError, WalkbackError):
            return None


def _raw(session: Session, i: int) -> Any:
    try:
        return session.raw(i)
    except (OSError, ValueError, WalkbackError):
        return {"_unreadable": "the record could not be read from its source"}
