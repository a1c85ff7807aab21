"""The timeline model: one Session shape for every source, compact enough for 1M events."""

from .builder import SessionBuilder
from .details import Detail, DiscriminatedDetail, FileEdit
from .kinds import FILE, INFERRED, KIND_INDEX, KINDS, PLACEHOLDER, PROBLEM_STATUSES, STATUSES
from .session import Agent, Event, IntegrityReport, RecoveryFinding, Session, parse_time
from .sources import JsonItems, JsonItemSpans, JsonLines, JsonSpan, Source, TextSpans
from .table import EventTable, StringPool
from .views import Approval, FileChange, approval_counts, approvals, file_change, files_summary

__all__ = [
    "FILE",
    "INFERRED",
    "KINDS",
    "KIND_INDEX",
    "PLACEHOLDER",
    "PROBLEM_STATUSES",
    "STATUSES",
    "Agent",
    "Approval",
    "Detail",
    "DiscriminatedDetail",
    "Event",
    "EventTable",
    "FileChange",
    "FileEdit",
    "IntegrityReport",
    "JsonItemSpans",
    "JsonItems",
    "JsonLines",
    "JsonSpan",
    "RecoveryFinding",
    "Session",
    "SessionBuilder",
    "Source",
    "StringPool",
    "TextSpans",
    "approval_counts",
    "approvals",
    "file_change",
    "files_summary",
    "parse_time",
]
