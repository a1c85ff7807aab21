"""Scored detection: every real agent log in the corpus is claimed by exactly its importer, with
no other importer scoring as high (first-match-wins over yes/no sniffing would be fragile:
Claude Code, Codex and Copilot logs are all JSON lines)."""

from __future__ import annotations

from pathlib import Path

import pytest
from walkback.importers import detect, scores

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
FOLDER_FORMAT = {
    "claude-code": "claude-code",
    "codex": "codex",
    "copilot-cli": "copilot-cli",
    "gemini-cli": "gemini-cli",
    "inspect": "inspect",
    "openhands": "openhands",
    "otel": "otel",
    "swe-agent": "swe-agent",
    "aider": "aider",
    "cline": "cline",
}
FILES = sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.name != "SOURCES.md")


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_every_corpus_file_is_claimed_by_its_importer_alone(path: Path) -> None:
    expected = FOLDER_FORMAT[path.relative_to(CORPUS).parts[0]]
    ranked = scores(path)
    (best, name), *rest = ranked
    assert name == expected and best > 0, f"claimed by {name} ({best}), not {expected}: {ranked}"
    assert not rest or rest[0][0] < best, f"a tie: {ranked}"
    assert detect(path).name == expected


def test_the_corpus_is_there() -> None:
    assert len(FILES) > 40, f"../shared/corpus is missing or incomplete at {CORPUS}"
