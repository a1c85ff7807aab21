"""The session header, one line in the top bar: task, status, integrity, signer, counts.

Details that would take lines of their own (which records are damaged, each bundle check) are in
the badges' tooltips; the damaged records themselves are rows of the step list.
"""

from __future__ import annotations

from typing import Any

from nicegui import ui
from walkback.timeline.session import Session

from .common import hint, plural, status_color


def integrity_color(badge: str) -> str:
    if badge == "chain ok":
        return "positive"
    if badge in ("no hashes", "integrity pending"):
        return "grey-7"
    return "negative"


def integrity_notes(session: Session) -> list[str]:
    """What the reader found, one line each (the integrity badge's tooltip)."""
    integ = session.integrity
    notes = []
    if integ.torn_tail:
        t = integ.torn_tail
        notes.append(
            f"torn tail: {t.get('bytes', 0)} bytes at offset {t.get('offset', 0)} (its row is the last step)"
        )
    for d in integ.corrupt[:5]:
        notes.append(f"damaged line {d.get('line')} (lsn {d.get('lsn')}): {d.get('reason')}")
    for d in integ.skipped[:5]:
        notes.append(f"unreadable {d.get('file')}:{d.get('line')}: {d.get('reason')}")
    if integ.chain == "ok":
        notes.append("every record's hash and its link to the previous one check out")
    elif integ.chain == "absent":
        notes.append("this source has no hash chain: its records cannot be checked")
    return notes


def verification_badge(v: Any) -> None:
    """Who signed a bundle and whether every check passed (tooltip: each check)."""
    if v is None:
        return
    keyid = str(getattr(v, "keyid", "") or "")
    signer = getattr(v, "signer", None) or (f"key {keyid[:16]}" if keyid else "an unknown key")
    ok = bool(getattr(v, "ok", False))
    label = f"signed by {signer} · verified" if ok else f"signed by {signer} · verification failed"
    with ui.badge(label, color="positive" if ok else "negative").mark("verification-badge"):
        lines = [f"{'✓' if c.ok else '✗'} {c.name}: {c.reason}" for c in getattr(v, "checks", [])]
        ui.tooltip("\n".join(lines) or "no checks").classes("wb-pre")


def session_header(session: Session, *, files: int, problems: int, loading: bool = False) -> ui.label | None:
    """The header; while the session is still being read (``loading``), says so and returns the
    label that counts the events read so far."""
    progress = None
    with ui.row().classes("items-center gap-2 no-wrap wb-header min-w-0 grow").mark("session-header"):
        task = session.task or "(no task)"
        hint(ui.label(task).classes("wb-task").mark("task"), task)
        ui.badge(session.status, color=status_color(session.status)).mark("status")
        if session.recovered:
            ui.badge("recovered", color="purple").mark("recovered")
        badge = session.integrity.badge
        with ui.badge(badge, color=integrity_color(badge)).mark("integrity"):
            ui.tooltip("\n".join(integrity_notes(session))).classes("wb-pre")
        verification_badge(session.verification)
        if loading:
            ui.spinner(size="sm", color="white")
            progress = (
                ui.label(loading_text(len(session))).classes("text-xs text-amber-2").mark("loading-progress")
            )
        ui.space()
        parts = [
            plural(len(session), "event"),
            plural(len(session.agents), "agent"),
            plural(files, "file"),
            plural(problems, "problem"),
            session.format,
        ]
        ui.label(" · ".join(parts)).classes("text-xs wb-counts whitespace-nowrap").mark("counts")
    return progress


def loading_text(events: int) -> str:
    return f"loading… {events:,} events so far (status and integrity pending until the whole journal is read)"
