"""The viewer's home page over the archive: search with facets, the sessions with their cost,
the dashboard, and each hit opening its session at its step."""

from __future__ import annotations

import sys
from pathlib import Path

from walkback.importers.archive.index import index
from walkback.importers.archive.store import Archive
from walkback.importers.folders import entry_id

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "archive"))
from archive_helpers import prompt, tool, transcript  # noqa: E402


def _sessions(tmp_path: Path) -> tuple[Path, Path, Path]:
    ws = "/work/shop"
    a = transcript(
        tmp_path / "s" / "a.jsonl",
        [
            prompt("a", ws, "2026-11-01T10:00:00Z", "make checkout faster"),
            tool("a", ws, "2026-11-01T10:01:00Z", "b1", "Bash", {"command": "git push --force origin main"}),
        ],
    )
    b = transcript(
        tmp_path / "s" / "b.jsonl",
        [
            prompt("b", "/work/blog", "2026-11-03T09:00:00Z", "<script>alert(1)</script> fix the blog"),
            tool(
                "b",
                "/work/blog",
                "2026-11-03T09:01:00Z",
                "w1",
                "Write",
                {"file_path": "/work/blog/post.md", "content": "hi"},
            ),
        ],
    )
    db = tmp_path / "archive.sqlite"
    index(Archive.open(str(db)), [tmp_path / "s"])
    return a, b, db


async def test_home_searches_filters_and_opens_the_step(viewer, tmp_path: Path) -> None:
    a, b, db = _sessions(tmp_path)
    async with viewer([a, b], archive=str(db), preload=False) as user:
        await user.open("/")
        await user.should_see(marker="archive-query")
        table = user.find(marker="archive-sessions").elements.pop()
        assert {r["id"] for r in table.rows} == {entry_id(a), entry_id(b)}
        assert all(r["cost"].endswith("(est.)") for r in table.rows)  # priced from the table, marked
        await user.should_see(marker="archive-dashboard")
        await user.should_see("most-edited files")
        await user.should_see(content="post.md · 1 changes in 1 sessions")

        await user.open('/?q="git push"')
        hits = user.find(marker="archive-hits").elements.pop()
        links = [e for e in hits.descendants() if e.__class__.__name__ == "Link"]
        assert len(links) == 1 and links[0].props["href"].startswith(f"/s/{entry_id(a)}/step/")
        await user.should_see(content="«git push»")

        await user.open('/?q="git push"&workspace=/work/blog')
        await user.should_see("0 matching steps")
        await user.open("/?agent=claude-code&workspace=/work/blog")
        table = user.find(marker="archive-sessions").elements.pop()
        assert [r["id"] for r in table.rows] == [entry_id(b)]

        await user.open('/?q="unterminated')
        await user.should_see(marker="archive-error")

        await user.open(links[0].props["href"])
        await user.should_see(marker="timeline")
