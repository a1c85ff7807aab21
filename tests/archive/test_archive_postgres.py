"""The same archive in a real PostgreSQL server (started here on 127.0.0.1): two machines index
into it, search answers as SQLite's does (tsvector for FTS5), blame reads it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from archive_helpers import prompt, tool, transcript
from postgres_server import postgres_server
from walkback.importers.archive.blame import blame
from walkback.importers.archive.index import index
from walkback.importers.archive.store import Archive, ArchiveError, Filters

ROOT = Path(__file__).resolve().parents[2]
CODEX = ROOT.parent / "shared" / "corpus" / "codex"


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with postgres_server() as url:
        yield url


def test_two_machines_index_into_one_server_and_search_as_sqlite_does(server: str, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    target = ws / "billing.py"
    target.write_text("def tax(amount):\n    return amount * 0.2\n")
    laptop = transcript(
        tmp_path / "laptop" / "s.jsonl",
        [
            prompt("l", str(ws), "2026-11-01T10:00:00Z", "write the billing module"),
            tool(
                "l",
                str(ws),
                "2026-11-01T10:01:00Z",
                "w1",
                "Write",
                {"file_path": str(target), "content": target.read_text()},
            ),
            tool(
                "l",
                str(ws),
                "2026-11-01T10:02:00Z",
                "b1",
                "Bash",
                {"command": "git push --force origin main"},
            ),
        ],
    )
    with Archive.open(server) as one:
        assert len(index(one, [laptop.parent]).indexed) == 1
    with Archive.open(server) as two:  # another machine, the same server
        assert len(index(two, [CODEX]).indexed) >= 3
        assert index(two, [CODEX]).indexed == []
    sqlite = Archive.open(str(tmp_path / "local.sqlite"))
    index(sqlite, [laptop.parent, CODEX])
    with Archive.open(server) as team:
        for query in ('"git push"', "apply_patch", "apply_pat*", "apply_patch NOT version", "billing OR tax"):
            pg = {(h.session, h.step) for h in team.search(query, limit=10_000)}
            lite = {(h.session, h.step) for h in sqlite.search(query, limit=10_000)}
            assert pg == lite and pg, query
        hit = team.search('"git push" force', Filters(tool="Bash"))
        assert len(hit) == 1 and "«" in hit[0].snippet
        assert team.search("apply_patch", Filters(agent="claude-code")) == []
        with pytest.raises(ArchiveError, match="malformed search"):
            team.search("AND")
        ranges = blame(team, target)
        assert ranges[0].change is not None and ranges[0].change["tool"] == "Write"
        assert {a for a, _ in team.facets()["agent"]} >= {"claude-code", "codex"}


def test_a_server_that_does_not_answer_is_one_clear_error() -> None:
    with pytest.raises(ArchiveError, match="cannot connect"):
        Archive.open("postgresql://nobody:secret@127.0.0.1:1/none")
