"""The session header, one line in the top bar: task, status, integrity, signer, counts.

Details that would take lines of their own (which records are damaged, each bundle check) are the
badges' hover texts; the damaged records themselves are rows of the step list.
"""

from __future__ import annotations

from typing import Any

from walkback.timeline.session import Session

from .common import Component, plural, status_color


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


def signed(v: Any) -> dict[str, str] | None:
    """Who signed a bundle (or that nobody did) and whether every check passed (the hover: each check)."""
    if v is None:
        return None
    keyid = str(getattr(v, "keyid", "") or "")
    ok = bool(getattr(v, "ok", False))
    checks = [f"{'✓' if c.ok else '✗'} {c.name}: {c.reason}" for c in getattr(v, "checks", [])]
    if getattr(v, "unsigned", False):
        intact = all(c.ok for c in getattr(v, "checks", []) if c.name not in ("signature", "trust"))
        label = "unsigned · " + ("intact, but nobody vouches for it" if intact else "verification failed")
    elif getattr(v, "signer", None):
        label = f"signed by {v.signer} · " + ("verified" if ok else "verification failed")
    elif keyid:
        label = f"signed by an untrusted key {keyid[:16]} · verification failed"
    else:
        label = "the signature does not verify · verification failed"
    return {
        "label": label,
        "color": "positive" if ok else "negative",
        "checks": "\n".join(checks) or "no checks",
    }


class SessionHead(Component, component="session_head.js"):
    """The header as one element (its hovers are ``title`` attributes)."""

    def __init__(self, session: Session, *, files: int, problems: int, loading: bool = False) -> None:
        super().__init__()
        badge = session.integrity.badge
        counts = [
            plural(len(session), "event"),
            plural(len(session.agents), "agent"),
            plural(files, "file"),
            plural(problems, "problem"),
            session.format,
        ]
        self._props["head"] = {
            "task": session.task or "(no task)",
            "status": session.status,
            "color": status_color(session.status),
            "recovered": session.recovered,
            "integrity": badge,
            "integrity_color": integrity_color(badge),
            "notes": "\n".join(integrity_notes(session)),
            "signed": signed(session.verification),
            "counts": " · ".join(counts),
        }
        self._props["loading"] = loading_text(len(session)) if loading else ""

    def show_loading(self, events: int) -> None:
        """Count the events read so far (while the first read goes on)."""
        self.send(loading=loading_text(events))

    def texts(self) -> list[Any]:
        head = self._props["head"]
        texts = [head["task"], head["status"], head["integrity"], head["counts"], self._props["loading"]]
        texts += ["recovered"] if head["recovered"] else []
        return texts + ([head["signed"]["label"]] if head["signed"] else [])


def loading_text(events: int) -> str:
    return f"loading… {events:,} events so far (status and integrity pending until the whole journal is read)"
