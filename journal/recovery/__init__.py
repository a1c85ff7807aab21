"""Crash recovery: classify every unfinished intent against the workspace, decide, journal, act.

The harness recovers, not the model: a finding is a hash comparison, a decision is journaled
(fsynced) before it is acted on, and the resume brief is built from facts. See ``_classify`` for
the rules and ``_act`` for the crash-safety argument.
"""

from ._api import analyze, recover
from ._plan import ACTIONS, FINDINGS, Finding, RecoveryPlan

__all__ = ["ACTIONS", "FINDINGS", "Finding", "RecoveryPlan", "analyze", "recover"]
