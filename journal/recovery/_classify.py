"""Classification: what the hash of a target says about an unfinished intent. Pure; no I/O.

For an intent without a terminal record, H is the current hash of its target
(docs/journal-format.md, record ``recovery``; the research notes §6.5):

=====================================  ======================  ===============
observation                            finding                 action
=====================================  ======================  ===============
file, H == post                        applied                 commit
file, H == pre                         not_applied             redo
file, H neither                        torn                    restore_redo
keyed HTTP call (method and url)       in_doubt                reissue
other keyed external effect            in_doubt                ask_human
external effect without a key          in_doubt                ask_human
command (``idempotent: true``)         not_applied             redo
command                                in_doubt                ask_human
approval request without decision      unanswered_approval     ask_again
intent lost in a torn tail             never_started           none
=====================================  ======================  ===============

When an image the action needs cannot be had (no blob, no checkpoint copy that hashes right), the
action becomes ``ask_human``: recovery never guesses.
"""

from __future__ import annotations

from dataclasses import dataclass

from walkback.journal.effects import http_request

from ._dialect import Pending


@dataclass(frozen=True)
class Observation:
    """What was observed about a file intent's target and the images that can be had for it."""

    h: str | None = None
    """Current hash of the target (``sha256:<hex>`` or ``absent``); None when not a file intent."""
    target_ok: bool = True
    """False when the target escapes the workspace (it is never touched then)."""
    unreadable: str | None = None
    """Why the target's content cannot be read as a file (a directory now, not a regular file)."""
    pre_source: str | None = None
    """Where a pre image that hashes to ``pre`` was found (None: nowhere)."""
    post_source: str | None = None
    """Where a post image that hashes to ``post`` can come from, given the base a redo starts from."""


@dataclass(frozen=True)
class Decision:
    finding: str
    action: str
    detail: str


def _short(h: str | None) -> str:
    if h is None:
        return "unknown"
    return h if not h.startswith("sha256:") else h[:19] + "…"


def classify(p: Pending, obs: Observation) -> Decision:
    """Decide about one pending item from facts only."""
    if p.kind == "lost":
        return Decision(
            "never_started", "none", "the intent was lost in a torn tail: never fsynced, so never applied"
        )
    if p.kind == "approval":
        return Decision(
            "unanswered_approval", "ask_again", "approval request without a decision: ask again, never infer"
        )
    if p.effect == "fs":
        return _file(p, obs)
    if p.effect == "command":
        if p.idempotent:
            return Decision("not_applied", "redo", "command declared idempotent: run it again")
        return Decision("in_doubt", "ask_human", "command may or may not have run and is not idempotent")
    if p.effect == "external":
        if not p.key:
            return Decision(
                "in_doubt", "ask_human", "external call may or may not have happened; no idempotency key"
            )
        req = http_request(p.tool, p.args)
        if req is None:
            return Decision(
                "in_doubt",
                "ask_human",
                f"external effect keyed {p.key}, but walkback cannot reissue tool {p.tool!r} (it reissues "
                "http_get/post/put/patch/delete, or a method and an http(s) url): ask a human",
            )
        call = f"{req.method} {req.url}"
        return Decision("in_doubt", "reissue", f"external call {call}: reissue with Idempotency-Key {p.key}")
    return Decision(
        "in_doubt", "ask_human", f"unknown effect of tool {p.tool!r}: cannot tell whether it happened"
    )


def _file(p: Pending, obs: Observation) -> Decision:
    if not obs.target_ok:
        return Decision("in_doubt", "ask_human", "target is outside the workspace: not touched")
    if obs.unreadable:
        return Decision("in_doubt", "ask_human", f"target {obs.unreadable}: cannot tell; not touched")
    seen = f"target is {_short(obs.h)}"
    if obs.h is not None and obs.h == p.post:
        return Decision("applied", "commit", f"{seen} = post: the effect landed; re-verify and commit")
    if p.pre is None:
        return Decision("in_doubt", "ask_human", f"{seen}, not post, and the intent records no pre hash")
    if obs.h == p.pre:
        if obs.post_source is None:
            return Decision("not_applied", "ask_human", f"{seen} = pre; no post image to redo from")
        return Decision("not_applied", "redo", f"{seen} = pre: not applied; redo from {obs.post_source}")
    torn = f"{seen}, neither pre {_short(p.pre)} nor post {_short(p.post)}"
    if obs.post_source is None:
        return Decision("torn", "ask_human", f"{torn}; no image to restore and redo from")
    restore = f"restore pre from {obs.pre_source}" if obs.pre_source else "no pre image; redo overwrites"
    return Decision("torn", "restore_redo", f"{torn}: {restore}, redo from {obs.post_source}")
