"""What the viewer keeps per session: the loaded session, its list summary and derived views."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from walkback.journal.recovery import RecoveryPlan
from walkback.timeline import query
from walkback.timeline.session import Session
from walkback.timeline.story import AgentStory, Crash, agent_stories, crashes
from walkback.timeline.views import Approval


@dataclass
class Summary:
    """One row of the session list."""

    task: str
    format: str
    agents: int
    events: int
    status: str
    recovered: bool
    integrity: str
    start: float | None
    end: float | None
    problems: int = 0

    @property
    def duration(self) -> float | None:
        return self.end - self.start if self.start is not None and self.end is not None else None


def summarize(session: Session, problems: np.ndarray) -> Summary:
    """The list row of ``session`` (``problems``: its problems mask, already in its :class:`Derived`)."""
    c = query.columns(session)
    finite = c.ts[np.isfinite(c.ts)]
    return Summary(
        task=session.task,
        format=session.format,
        agents=len(session.agents),
        events=len(session),
        status=session.status,
        recovered=session.recovered,
        integrity=session.integrity.badge,
        start=float(finite.min()) if len(finite) else None,
        end=float(finite.max()) if len(finite) else None,
        problems=int(problems.sum()),
    )


@dataclass
class Derived:
    """Views computed once per loaded session, off the event loop, and shared by its pages (a page
    view builds only its elements)."""

    facets: query.Facets
    files: dict[str, np.ndarray]
    problems: np.ndarray
    crashes: list[Crash]
    stories: list[AgentStory]
    approvals: list[Approval] | None = None
    """Filled by the second, slower pass (None until then)."""
    rows: dict[int, dict[str, Any]] = field(default_factory=dict)
    """The step list's row of each step shown so far (read-only: pages copy a row to mark it)."""

    @classmethod
    def of(cls, session: Session) -> Derived:
        found = crashes(session)
        return cls(
            facets=query.facets(session),
            files=query.file_rows(session),
            problems=query.problems_mask(session),
            crashes=found,
            stories=agent_stories(session, found),
        )


@dataclass
class Analysis:
    """What ``journal.recovery.analyze`` would do for a crashed run (no side effects), or why it
    could not say."""

    plan: RecoveryPlan | None = None
    error: str = ""


@dataclass
class Entry:
    """A session the viewer can show. ``session`` is None until loaded (or after a failure)."""

    id: str
    path: Path
    label: str
    session: Session | None = None
    derived: Derived | None = None
    summary: Summary | None = None
    analysis: Analysis | None = None
    error: str = ""
    progress: int = 0
    version: int = 0
    load_seconds: float = 0.0
    """Time of the last first pass: the importer plus the views derived for the page."""
    import_seconds: float = 0.0
    """The importer's share of it."""
    loading: bool = False
    partial: bool = False
    """``session`` is a snapshot of a first read still in progress (status and integrity pending)."""
    first_seconds: float = 0.0
    """Time of the last first pass until the page could show something (a first chunk, or all)."""
    signature: tuple[Any, ...] = ()
    last_load: float = 0.0
    viewed: bool = False
    """A page asked for this session: keep it in memory."""

    def drop_partial(self) -> None:
        """A first read failed after showing part of the session: show the error instead."""
        if self.partial:
            self.session = self.derived = self.summary = None
            self.partial = False
