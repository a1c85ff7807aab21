"""Where a run's journal lives: the one name every part looks for in a run directory."""

from __future__ import annotations

from pathlib import Path

JOURNAL_NAME = "journal.jsonl"


def journal_path(path: str | Path) -> Path:
    """Accept a run directory or a journal file and return the journal file's path."""
    p = Path(path)
    return p / JOURNAL_NAME if p.is_dir() else p
