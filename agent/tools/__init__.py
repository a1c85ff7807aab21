"""End-state tools: each says what the world should look like afterwards, so a redo is safe.

``prepare`` computes everything the intent needs *before* any effect (pre/post hashes and images
for file tools); ``apply`` performs the effect; the harness verifies and journals around them.
"""

from __future__ import annotations

from .base import Prepared, ToolError
from .command import CommandResult, run_check, run_command
from .external import ExternalResult, call_external
from .files import apply_file, new_content, observe, prepare

__all__ = [
    "CommandResult",
    "ExternalResult",
    "Prepared",
    "ToolError",
    "apply_file",
    "call_external",
    "new_content",
    "observe",
    "prepare",
    "run_check",
    "run_command",
]
