"""``walkback sessions``: a hooked session is one row, the agent's transcript's, naming its hook journal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hookjournal_helpers import HookJournal, Transcript, make_repo

from walkback.cli import cli


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Every agent's root moved into ``tmp_path`` (nothing of the real machine is listed)."""
    places = {
        k: tmp_path / k.lower() for k in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME", "WALKBACK_HOME")
    }
    places["GEMINI_CLI_HOME"] = tmp_path / "gemini"
    for name, p in places.items():
        p.mkdir()
        monkeypatch.setenv(name, str(p))
    return places


def test_a_hooked_session_is_listed_once_with_its_journal(tmp_path: Path, machine: dict[str, Path]) -> None:
    ws = tmp_path / "ws"
    make_repo(ws, {"a": b"a\n"})
    project = machine["CLAUDE_CONFIG_DIR"] / "projects" / "-ws"
    project.mkdir(parents=True)
    hooked = Transcript(project / "placeholder.jsonl", ws)
    hooked.path = project / f"{hooked.session}.jsonl"
    hooked.prompt("hooked work")
    plain = Transcript(project / "plain.jsonl", ws)
    plain.path = project / f"{plain.session}.jsonl"
    plain.prompt("not hooked")
    home = machine["WALKBACK_HOME"]
    hj = HookJournal.create(home, hooked.session, ws, transcript=None)  # found by the session id alone
    hj.close()
    gone = HookJournal.create(
        home, "0f0f0f0f-dead-beef-0000-000000000000", ws, transcript=tmp_path / "gone.jsonl"
    )
    gone.close()
    r = CliRunner().invoke(cli, ["sessions", "--json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    by_path = {row["path"]: row for row in rows}
    assert len(rows) == 3, "the hooked transcript and its journal are one row; the orphan journal one more"
    assert by_path[str(hooked.path)]["journal"] == str(hj.path)
    assert by_path[str(hooked.path)]["task"] == "hooked work"
    assert by_path[str(plain.path)]["journal"] is None
    orphan = by_path[str(gone.dir)]
    assert orphan["agent"] == "claude-code" and orphan["journal"] == str(gone.path)
    text = CliRunner().invoke(cli, ["sessions"]).stdout
    assert f"{hooked.path}  (hooked: {hj.path})" in text


def test_the_journal_is_joined_by_the_transcript_it_names(tmp_path: Path, machine: dict[str, Path]) -> None:
    """A transcript whose name is not its session id: the header's ``hooked.transcript`` joins them."""
    ws = tmp_path / "ws"
    ws.mkdir()
    project = machine["CLAUDE_CONFIG_DIR"] / "projects" / "-ws"
    project.mkdir(parents=True)
    t = Transcript(project / "renamed.jsonl", ws)
    t.prompt("renamed")
    hj = HookJournal.create(machine["WALKBACK_HOME"], t.session, ws, transcript=t.path)
    hj.close()
    rows = json.loads(CliRunner().invoke(cli, ["sessions", "--json"]).stdout)
    assert [(r["path"], r["journal"]) for r in rows] == [(str(t.path), str(hj.path))]
