"""walkback's own importers, registered through the same hook as any plugin's."""

from __future__ import annotations

from typing import Any

from walkback.hookspecs import hookimpl

from . import (
    aider,
    claude_code,
    cline,
    codex,
    copilot_cli,
    gemini_cli,
    inspect,
    openhands,
    otel,
    swe_agent,
    walkback_journal,
)


@hookimpl
def register_importers() -> list[Any]:
    return [
        walkback_journal.IMPORTER,
        claude_code.IMPORTER,
        codex.IMPORTER,
        gemini_cli.IMPORTER,
        aider.IMPORTER,
        cline.IMPORTER,
        cline.ROO,
        inspect.IMPORTER,
        otel.IMPORTER,
        copilot_cli.IMPORTER,
        openhands.IMPORTER,
        swe_agent.IMPORTER,
        swe_agent.MINI,
    ]
