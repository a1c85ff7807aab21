"""The timeline model: one Session shape for every source, compact enough for 1M events."""

from .model import (
    KINDS,
    PROBLEM_STATUSES,
    STATUSES,
    Agent,
    Approval,
    Event,
    EventTable,
    FileChange,
    IntegrityReport,
    RecoveryFinding,
    Session,
    parse_time,
)

__all__ = [
    "KINDS",
    "PROBLEM_STATUSES",
    "STATUSES",
    "Agent",
    "Approval",
    "Event",
    "EventTable",
    "FileChange",
    "IntegrityReport",
    "RecoveryFinding",
    "Session",
    "parse_time",
]
