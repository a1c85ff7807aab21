"""The conversation: an agent's messages, thinking, model calls and tool calls as a transcript.

Foreign sessions (Claude Code, Codex, Gemini ...) are mostly conversation. This panel shows a
window of the current step's agent around the current step; every item is still a step with its
deep link (``#n`` is a real ``/s/<id>/step/<n>`` link that the page turns into a move), a tool call
sits beside its result, and a call that spawned a subagent links to that agent's transcript.

Markdown is rendered on the server with HTML disabled (markdown-it's CommonMark without raw HTML,
links or images: every ``<`` a model wrote arrives as text), then DOMPurify runs on it in the
browser as for any ``ui.html``; every other text is escaped here. No request leaves the origin.
"""

from __future__ import annotations

import html
from functools import lru_cache
from typing import Any

import numpy as np
from markdown_it import MarkdownIt
from nicegui import ui
from walkback.journal.errors import WalkbackError
from walkback.timeline.details import (
    Detail,
    Integrity,
    Message,
    ModelCall,
    ModelResult,
    ToolCall,
    ToolResult,
    Usage,
)
from walkback.timeline.kinds import KIND_INDEX, KINDS
from walkback.timeline.query import columns
from walkback.timeline.session import Agent, Session
from walkback.timeline.summary import summary

from .common import as_text, clip
from .text import flatten

BEFORE, AFTER = 12, 28
"""Items of the transcript shown before and after the current step."""
MAX_PROSE = 8000
MAX_TOOL_TEXT = 3000
ROLES = frozenset({"user", "assistant", "system", "developer", "tool"})
CONVERSATION_KINDS = frozenset({"message", "model_call", "model_result"})
IS_CONVERSATION = np.isin(np.arange(len(KINDS)), [KIND_INDEX[k] for k in CONVERSATION_KINDS])
"""By kind code: whether an event of that kind is conversation."""

_MD = MarkdownIt("commonmark", {"html": False, "linkify": False}).disable(["image", "link", "autolink"])
HIGHLIGHT_JS = (
    "setTimeout(() => { const box = getElement(%d); if (!box) return; const el = box.$el;"
    " el.querySelectorAll('.wb-current').forEach(x => x.classList.remove('wb-current'));"
    " const cur = el.querySelector('[data-step=\"%d\"]'); if (!cur) return; cur.classList.add('wb-current');"
    " const pane = el.closest('.wb-pane'); if (!pane) return;"
    " const b = pane.getBoundingClientRect(), r = cur.getBoundingClientRect();"
    " if (r.top < b.top + 40 || r.top > b.bottom - 60) pane.scrollTop += r.top - b.top - 80; }, 0)"
)
"""Moves the highlight and scrolls the transcript (never the page); only integers are interpolated."""


@lru_cache(maxsize=2048)
def markdown(text: str) -> str:
    """Markdown as HTML with raw HTML, links and images disabled (so it is text and formatting only)."""
    return _MD.render(clip(text, MAX_PROSE))


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def prose_html(text: str, thinking: str = "") -> str:
    """A message body: its thinking folded, then its text as markdown."""
    out = ""
    if thinking:
        out += (
            '<details class="wb-thinking"><summary>thinking</summary>'
            f'<div class="wb-pre">{_esc(clip(thinking, MAX_PROSE))}</div></details>'
        )
    return out + (markdown(text) if text else "")


def usage_text(u: Usage) -> str:
    """``1,204 in · 310 out · 900 cached tokens``."""
    parts = [
        f"{n:,} {w}"
        for n, w in (
            (u.input_tokens, "in"),
            (u.output_tokens, "out"),
            (u.cache_read_tokens, "cached"),
            (u.reasoning_tokens, "reasoning"),
        )
        if n
    ]
    return " · ".join(parts) + " tokens" if parts else ""


def is_conversation(session: Session) -> bool:
    """Whether the session is mostly conversation (then its page opens on this panel)."""
    c = columns(session)
    if not c.n:
        return False
    return bool(IS_CONVERSATION[c.kind].mean() >= 0.3)


class ConversationPanel:
    """The transcript window of the current step's agent; redrawn only when the window moves."""

    def __init__(self, session: Session, sid: str) -> None:
        self.session = session
        self.sid = sid
        self._key: tuple[int, int, int] | None = None
        self._rows: dict[int, np.ndarray] = {}
        self.box = ui.context.slot.parent  # the panel it is built in
        self.head: ui.label | None = None
        self.body: ui.html | None = None

    def _build(self) -> tuple[ui.label, ui.html]:
        """The heading and the transcript, built when first shown (most page views never are)."""
        if self.head is None or self.body is None:
            with self.box:
                self.head = ui.label().classes("text-xs text-grey-7").mark("conversation-head")
                self.body = ui.html("", sanitize=True).classes("w-full wb-conv").mark("conversation")
        return self.head, self.body

    def set_session(self, session: Session) -> None:
        self.session = session
        self._key = None
        self._rows = {}

    def _agent_rows(self, code: int) -> np.ndarray:
        rows = self._rows.get(code)
        if rows is None:
            rows = self._rows[code] = np.flatnonzero(columns(self.session).agent == code)
        return rows

    def show(self, index: int) -> None:
        s = self.session
        if not len(s):
            return
        c = columns(s)
        code = int(c.agent[index])
        rows = self._agent_rows(code)
        k = int(np.searchsorted(rows, index))
        lo, hi = max(0, k - BEFORE), min(len(rows), k + AFTER)
        key = (code, lo, hi)
        head, body = self._build()
        if key != self._key:
            self._key = key
            agent = s.table.pool.values[code]
            head.set_text(self._heading(agent, len(rows), lo, hi))
            body.set_content(self._render(rows[lo:hi]))
        ui.run_javascript(HIGHLIGHT_JS % (body.id, index + 1))

    def _heading(self, agent: str, total: int, lo: int, hi: int) -> str:
        a = self.session.agents.get(agent)
        head = f"agent {agent}"
        if a is not None and a.parent:
            head += f", subagent of {a.parent}"
            if a.spawned_by is not None:
                head += f" (spawned at step {a.spawned_by + 1})"
        return f"{head} · items {lo + 1}–{hi} of {total:,}"

    def _render(self, window: np.ndarray) -> str:
        s = self.session
        shown = {int(i) for i in window}
        out: list[str] = []
        for i in map(int, window):
            ev = s.event(i)
            if ev.kind == "tool_result" and ev.ref is not None and ev.ref in shown:
                continue  # drawn beside its call
            out.append(self._item(i, ev.kind, _detail(s, i)))
        return "".join(out)

    def _link(self, i: int) -> str:
        return f'<a class="wb-step-link" href="/s/{self.sid}/step/{i + 1}" data-pick="{i + 1}">#{i + 1}</a>'

    def _item(self, i: int, kind: str, d: Detail) -> str:
        link = self._link(i)
        if isinstance(d, Message):
            role = d.role if d.role in ROLES else "other"
            who = _esc(d.role) + (f" · {_esc(d.model)}" if d.model else "")
            return (
                f'<div class="wb-msg wb-role-{role}" data-step="{i + 1}">'
                f'<div class="wb-msg-head">{who} {link}</div>{prose_html(d.text, d.thinking)}</div>'
            )
        if isinstance(d, ModelResult):
            facts = " · ".join(p for p in (d.model, usage_text(d.usage), d.stop_reason) if p)
            cost = f" · ${d.cost:.4f}" if d.cost else ""
            body = markdown(d.text) if d.text else ""
            return (
                f'<div class="wb-model" data-step="{i + 1}"><div class="wb-msg-head">model answer · '
                f"{_esc(facts)}{cost} {link}</div>{body}</div>"
            )
        if isinstance(d, ModelCall):
            what = " · ".join(p for p in (d.model, d.summary) if p)
            what = _esc(clip(what, 300))
            return f'<div class="wb-note" data-step="{i + 1}">model call · {what} {link}</div>'
        if isinstance(d, ToolCall):
            return self._tool(i, d)
        ev = self.session.event(i)
        line = summary(ev, d, 240)
        return (
            f'<div class="wb-note" data-step="{i + 1}">{_esc(kind.replace("_", " "))} · '
            f"{_esc(line)} {link}</div>"
        )

    def _tool(self, i: int, call: ToolCall) -> str:
        s = self.session
        args = call.command or args_text(call.arguments)
        left = (
            f'<div class="wb-msg-head">{_esc(call.name)} {_esc(clip(call.target, 200))} {self._link(i)}</div>'
            f'<div class="wb-pre">{_esc(clip(str(args), MAX_TOOL_TEXT))}</div>'
        )
        done = s.completion_of(i)
        right = '<div class="wb-msg-head">no result recorded</div>'
        if done is not None:
            r = _detail(s, done)
            ev = s.event(done)
            text = (r.error or r.output) if isinstance(r, ToolResult) else summary(ev, r, MAX_TOOL_TEXT)
            right = (
                f'<div class="wb-msg-head">result · {_esc(ev.status)} {self._link(done)}</div>'
                f'<div class="wb-pre">{_esc(clip(text, MAX_TOOL_TEXT))}</div>'
            )
        sub = "".join(self._subagent(a) for a in s.agents.values() if a.spawned_by == i)
        return (
            f'<div class="wb-tool" data-step="{i + 1}"><div class="wb-tool-call">{left}{sub}</div>'
            f'<div class="wb-tool-result">{right}</div></div>'
        )

    def _subagent(self, agent: Agent) -> str:
        a_id = agent.id
        code = self.session.table.pool.find(a_id)
        rows = self._agent_rows(code) if code is not None else np.zeros(0, np.int64)
        if not len(rows):
            return f'<div class="wb-sub">subagent {_esc(a_id)}: no transcript in this session</div>'
        first = int(rows[0])
        return (
            f'<div class="wb-sub">subagent {_esc(a_id)}: '
            f'<a class="wb-step-link" href="/s/{self.sid}/step/{first + 1}" data-pick="{first + 1}">'
            f"its transcript ({len(rows):,} steps) →</a></div>"
        )


def args_text(args: Any) -> str:
    """A tool call's arguments as a person reads them: ``key: value`` a line, and a text of several
    lines indented on the lines under its key (as JSON, its line breaks would show as ``\\n``)."""
    if isinstance(args, str):
        return args
    if not isinstance(args, dict) or not args:
        return as_text(args)
    out: list[str] = []
    for key, value in flatten(args):
        if not isinstance(value, str):
            out.append(f"{key}: {as_text(value)}")
        elif "\n" in value:
            out += [f"{key}:", *("  " + line for line in value.rstrip("\n").split("\n"))]
        else:
            out.append(f"{key}: {value}")
    return "\n".join(out)


def _detail(session: Session, i: int) -> Detail:
    try:
        return session.detail(i)
    except (OSError, ValueError, WalkbackError) as e:
        return Integrity(what="unreadable record", reason=str(e))


__all__ = ["ConversationPanel", "args_text", "is_conversation", "markdown", "prose_html", "usage_text"]
