"""Exact recovery of a hooked session: walkback's own recovery, run on the session's hook journal.

A hooked agent wrote an intent (pre hash and image, expected post hash and image; for a command, a
snapshot of the working tree) durably before each tool call, so its crash is recovered as a walkback
run's is (``journal.recovery``), not guessed from the transcript: a file intent is applied (hash ==
post: committed), not applied (hash == pre: redone from the post image) or torn (neither: restored
from the pre image, then redone), each decision journaled and fsynced in the hook journal before it
is acted on; a command is in doubt and its finding lists the files changed since its snapshot. Every
finding names the agent's call id (the intent's ``call``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from walkback.journal.recovery import Finding, RecoveryPlan, recover

from ..session import Session


@dataclass
class HookedRecovery:
    """The recovery plan of a hooked session's journal, named after the session it belongs to."""

    source: str
    """The session as given (the agent's transcript)."""
    format: str
    journal: Path
    """The hook journal the findings and decisions are in."""
    plan: RecoveryPlan

    @property
    def brief(self) -> str:
        return self.plan.brief

    @property
    def needs_human(self) -> bool:
        return self.plan.needs_human

    def all_findings(self) -> list[Finding]:
        return self.plan.all_findings()

    def to_json(self) -> dict[str, Any]:
        """``{format, session, journal}`` and the journal recovery's shape (findings name their ``call``)."""
        head = {"format": self.format, "session": self.source, "journal": str(self.journal)}
        return {**head, **self.plan.to_json()}


def recover_hooked(session: Session, *, source: str, workspace: Path | None, apply: bool) -> HookedRecovery:
    """Recover ``session`` (merged with its hook journal) against ``workspace`` (default: the
    journal's recorded one); with ``apply``, act as ``walkback recover --apply`` does on a run.

    Raises:
        ValueError: the session has no hook journal.
    """
    if session.hooked is None:
        raise ValueError("the session has no hook journal")
    journal = Path(session.hooked.journal)
    plan = recover(journal.parent, workspace=workspace, apply=apply)
    return HookedRecovery(source=source, format=session.format, journal=journal, plan=plan)
