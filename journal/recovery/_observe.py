"""Observe each pending item (hash its target, look for images; for a command with a snapshot, what
changed since) and classify it: no side effects."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ._classify import Observation, classify
from ._dialect import Pending
from ._images import Image, Images, read_current, resolve_target
from ._plan import Finding
from ._snapshot import changed_since, describe


@dataclass
class Step:
    """One pending item, its finding, and what acting on it needs."""

    pending: Pending
    finding: Finding
    path: Path | None = None
    """The target inside the workspace (file intents)."""
    pre: Image | None = None
    post: Image | None = None


def observe(p: Pending, workspace: Path | None, images: Images | None, agent: str) -> Step:
    """Hash the target of a file intent, find its images, and decide."""
    step = Step(p, Finding(p.lsn, p.target, p.tool, "", "", "", agent=agent, step=p.step))
    obs = Observation()
    if p.kind == "intent" and p.effect == "fs" and workspace is not None and images is not None:
        step.path = resolve_target(workspace, p.target)
        if step.path is None:
            obs = Observation(target_ok=False)
        else:
            cur = read_current(step.path)
            if isinstance(cur, str):
                obs = Observation(unreadable=cur)
            elif cur.hash == p.post:
                obs = Observation(h=cur.hash)
            elif cur.hash == p.pre:
                step.post = images.post(p, cur)
                obs = Observation(h=cur.hash, post_source=_source(step.post))
            else:
                step.pre = images.find(p, "pre")
                step.post = images.post(p, step.pre)
                obs = Observation(
                    h=cur.hash,
                    pre_source=_source(step.pre),
                    post_source=_source(step.post),
                )
    d = classify(p, obs)
    detail = d.detail
    snapshot = p.record.get("snapshot")
    if p.effect == "command" and d.finding == "in_doubt" and isinstance(snapshot, dict) and images:
        assert workspace is not None  # images are had for a workspace only
        detail += "; " + describe(changed_since(snapshot, workspace, images.blobs))
    step.finding.finding, step.finding.action, step.finding.detail = d.finding, d.action, detail
    call = p.record.get("call")
    step.finding.call = call if isinstance(call, str) else ""
    return step


def _source(img: Image | None) -> str | None:
    return img.source if img is not None else None
