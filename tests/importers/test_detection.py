"""Scored detection: every real agent log in the corpus is claimed by exactly its importer, with
no other importer scoring as high (first-match-wins over yes/no sniffing would be fragile:
Claude Code, Codex and Copilot logs are all JSON lines)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from walkback.importers import detect, scores
from walkback.importers.registry import break_tie

from walkback.cli import cli

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
    parts = path.relative_to(CORPUS).parts
    expected = "mini-swe-agent" if "mini-swe-agent" in parts else FOLDER_FORMAT[parts[0]]
    ranked = scores(path)
    (best, name), *rest = ranked
    assert name == expected and best > 0, f"claimed by {name} ({best}), not {expected}: {ranked}"
    assert not rest or rest[0][0] < best, f"a tie: {ranked}"
    assert detect(path).name == expected


def test_the_corpus_is_there() -> None:
    assert len(FILES) > 40, f"../shared/corpus is missing or incomplete at {CORPUS}"


# -- a tie: walkback's own journal reads as walkback, whatever it carries ------------------------
HERE = Path(__file__).parent
ONE_PER_FORMAT = {
    "claude-code": CORPUS / "claude-code" / "spotter" / "short.jsonl",
    "codex": next((CORPUS / "codex" / "codemie").glob("rollout-2026-01-02*.jsonl")),
    "copilot-cli": CORPUS / "copilot-cli" / "vibecodingtracker" / "copilot-events.jsonl",
    "gemini-cli": CORPUS / "gemini-cli" / "vibecodingtracker" / "gemini.jsonl",
    "inspect": CORPUS / "inspect" / "2025-05-12T20-27-36-04-00_browser.json",
    "openhands": CORPUS / "openhands" / "v1-sdk-conversation-cd945624",
    "otel": CORPUS / "otel" / "otlp-proto-examples" / "trace.json",
    "swe-agent": CORPUS / "swe-agent" / "swe-agent__test-repo-i1.traj",
    "mini-swe-agent": CORPUS / "swe-agent" / "mini-swe-agent" / "astropy__astropy-12907.traj.json",
    "mini-swe-agent-1": HERE / "test_mini_swe_agent" / "calc__calc-1.traj.json",
    "aider": CORPUS / "aider" / "aider-repo-fixture" / "chat-history.EXCERPT.md",
    "cline": HERE / "test_cline" / "1733145600000",
    "roo-code": HERE / "test_roo_code" / "tasks" / "0199c3a0-0000-7000-8000-00000000a001",
}
"""One input per importer (Cline has no corpus file: its fixture folder)."""


@pytest.mark.parametrize("into", ["o.jsonl", "run"], ids=["file", "run folder"])
@pytest.mark.parametrize("fmt", sorted(ONE_PER_FORMAT))
def test_every_importers_output_reads_back_as_walkback(fmt: str, into: str, tmp_path: Path) -> None:
    """An imported journal keeps each source record under its own type, so the source's importer
    is as sure of it as walkback's: the header on its first line breaks the tie, in a file or in
    the run folder that holds it."""
    source = ONE_PER_FORMAT[fmt]
    assert detect(source).name == fmt.removesuffix("-1")
    out = tmp_path / into
    runner = CliRunner()
    done = runner.invoke(cli, ["import", str(source), "-o", str(out)])
    assert done.exit_code == 0, done.output
    assert detect(out).name == "walkback"
    shown = runner.invoke(cli, ["show", "--json", str(out)])
    assert shown.exit_code == 0, shown.output
    assert orjson.loads(shown.output)["format"] == "walkback"
    checked = runner.invoke(cli, ["check", str(out)])
    assert checked.exit_code == 0, checked.output


def test_the_first_record_breaks_a_tie_and_nothing_else(tmp_path: Path) -> None:
    cc = b'{"type":"user","parentUuid":null,"uuid":"u1","sessionId":"s1","message":{"role":"user"}}'
    wb = b'{"v":1,"lsn":0,"type":"run.start","run":"r","agent":"main"}'
    carried = tmp_path / "carried.jsonl"
    carried.write_bytes(cc + b"\n" + wb + b"\n")  # walkback scores its first line only: no tie
    assert detect(carried).name == "claude-code"
    assert break_tie(carried, ["walkback", "claude-code"]) == ["claude-code"]
    header_first = tmp_path / "journal.jsonl"
    header_first.write_bytes(b"\xef\xbb\xbf" + wb + b"\n" + cc + b"\n")
    assert break_tie(header_first, ["claude-code", "walkback"]) == ["walkback"]
    neither = tmp_path / "neither.jsonl"
    neither.write_bytes(b"[]\n" + cc + b"\n")
    assert break_tie(neither, ["claude-code", "walkback"]) == ["claude-code", "walkback"]
    run = tmp_path / "run"
    run.mkdir()
    (run / "journal.jsonl").write_bytes(wb + b"\n" + cc + b"\n")
    assert break_tie(run, ["claude-code", "walkback"]) == ["walkback"]  # by the file it holds
    (run / "other.jsonl").write_bytes(cc + b"\n")
    assert break_tie(run, ["claude-code", "walkback"]) == ["claude-code", "walkback"]  # files disagree
    empty = tmp_path / "empty"
    empty.mkdir()
    assert break_tie(empty, ["claude-code", "walkback"]) == ["claude-code", "walkback"]
