"""The archive on SQLite: every corpus format indexed, incremental re-index, search with FTS5
syntax and filters, blame of a file's lines on the steps that wrote them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from archive_helpers import prompt, tool, transcript
from walkback.importers.archive.blame import blame
from walkback.importers.archive.index import index
from walkback.importers.archive.store import Archive, ArchiveError, Filters, fts5_query, to_tsquery
from walkback.importers.folders import entry_id

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"
WS = "/work/project"


def walkback(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "WALKBACK_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "walkback", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def corpus_archive(tmp_path_factory: pytest.TempPathFactory) -> Archive:
    db = tmp_path_factory.mktemp("archive") / "a.sqlite"
    archive = Archive.open(str(db))
    report = index(archive, [CORPUS])
    assert not report.failed, report.failed
    return archive


def test_every_corpus_format_is_indexed_and_a_second_run_reads_nothing(corpus_archive: Archive) -> None:
    agents = {a for a, _ in corpus_archive.facets()["agent"]}
    for fmt in (
        "claude-code",
        "codex",
        "gemini-cli",
        "copilot-cli",
        "openhands",
        "swe-agent",
        "inspect",
        "aider",
    ):
        assert fmt in agents, (fmt, agents)
    again = index(corpus_archive, [CORPUS])
    assert again.indexed == [] and again.failed == [] and again.unchanged > 100


def test_tokens_and_cost_are_summed_and_marked_estimated_when_the_source_has_no_cost(
    corpus_archive: Archive,
) -> None:
    rows = corpus_archive.rows(
        "SELECT SUM(input_tokens), SUM(output_tokens), SUM(cost), MIN(cost_estimated) FROM sessions "
        "WHERE agent = 'claude-code'"
    )
    n_in, n_out, cost, estimated = rows[0]
    assert n_in > 0 and n_out > 0 and cost > 0 and estimated == 1


def test_search_takes_fts5_syntax_and_marks_the_match(corpus_archive: Archive) -> None:
    hits = corpus_archive.search("apply_patch")
    assert hits and all(h.agent == "codex" for h in hits[:5])
    assert all("«" in h.snippet and "»" in h.snippet for h in hits)
    assert corpus_archive.search('"core/version.go"'), "a phrase with punctuation"
    assert corpus_archive.search("version.go"), "a bare file name is quoted for FTS5"
    prefix = corpus_archive.search("apply_pat*")
    assert {(h.session, h.step) for h in hits} <= {(h.session, h.step) for h in prefix}
    both = corpus_archive.search("apply_patch AND version")
    assert both and len(both) < len(hits)
    excluded = corpus_archive.search("apply_patch NOT version")
    assert not {(h.session, h.step) for h in both} & {(h.session, h.step) for h in excluded}
    with pytest.raises(ArchiveError, match="malformed search"):
        corpus_archive.search('"unterminated')
    with pytest.raises(ArchiveError, match="malformed search"):
        corpus_archive.search("AND alone")


def test_filters_narrow_hits(corpus_archive: Archive) -> None:
    assert corpus_archive.search("apply_patch", Filters(agent="claude-code")) == []
    assert corpus_archive.search("apply_patch", Filters(tool="apply_patch"))
    assert corpus_archive.search("apply_patch", Filters(file="core/version.go"))
    assert corpus_archive.search("apply_patch", Filters(file="no/such/file.go")) == []
    assert corpus_archive.search("apply_patch", Filters(since=4102444800.0)) == []  # 2100-01-01


def test_query_translations() -> None:
    assert fts5_query("git push --force") == 'git push "--force"'
    assert fts5_query('"a b" OR c* NOT (d e)') == '"a b" OR c* NOT ( d e )'
    assert to_tsquery('"git push" OR force* NOT main') == "'git' <-> 'push' | 'force':* & ! 'main'"
    assert to_tsquery("billing.py") == "'billing' <-> 'py'"


def test_a_grown_session_alone_is_read_again(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    a = transcript(folder / "a.jsonl", [prompt("a", WS, "2026-11-01T10:00:00Z", "rename the billing module")])
    transcript(folder / "b.jsonl", [prompt("b", WS, "2026-11-02T10:00:00Z", "fix the flaky test")])
    archive = Archive.open(str(tmp_path / "a.sqlite"))
    assert len(index(archive, [folder]).indexed) == 2
    with open(a, "ab") as f:
        f.write(
            tool("a", WS, "2026-11-01T10:01:00Z", "t1", "Bash", {"command": "git push --force origin main"})
        )
    again = index(archive, [folder])
    assert again.indexed == [entry_id(a)] and again.unchanged == 1
    hits = archive.search('"git push" "--force"')
    call = archive.rows("SELECT step FROM events WHERE tool = 'Bash' AND kind = 'tool_call'")
    assert [(h.session, h.step) for h in hits] == [(entry_id(a), call[0][0])]


def _edited_file(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace file written by one session, edited by a second, then changed by hand."""
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    target = ws / "src" / "billing.py"
    first = "def total(items):\n    return sum(i.price for i in items)\n\n\n"
    first += "def tax(amount):\n    return amount * 0.2\n"
    edited = first.replace("amount * 0.2", "round(amount * 0.21, 2)")
    target.write_text(edited + "# added by a person\n")
    sessions = tmp_path / "sessions"
    transcript(
        sessions / "one.jsonl",
        [
            prompt("one", str(ws), "2026-11-01T10:00:00Z", "write billing"),
            tool(
                "one",
                str(ws),
                "2026-11-01T10:01:00Z",
                "w1",
                "Write",
                {"file_path": str(target), "content": first},
            ),
        ],
    )
    transcript(
        sessions / "two.jsonl",
        [
            prompt("two", str(ws), "2026-11-03T10:00:00Z", "raise the tax"),
            tool(
                "two",
                str(ws),
                "2026-11-03T10:02:00Z",
                "e1",
                "Edit",
                {
                    "file_path": str(target),
                    "old_string": "    return amount * 0.2",
                    "new_string": "    return round(amount * 0.21, 2)",
                },
            ),
        ],
    )
    return target, sessions


def test_blame_puts_each_line_on_the_newest_change_that_wrote_it(tmp_path: Path) -> None:
    target, sessions = _edited_file(tmp_path)
    archive = Archive.open(str(tmp_path / "a.sqlite"))
    index(archive, [sessions])
    ranges = [r.as_json() for r in blame(archive, target)]
    one, two = entry_id(sessions / "one.jsonl"), entry_id(sessions / "two.jsonl")
    owners = {}
    for r in ranges:
        for line in range(r["lines"][0], r["lines"][1] + 1):
            owners[line] = (r["session"], r["step"], r["tool"])
    step = "SELECT step FROM changes WHERE tool = ?"
    write, edit = (archive.rows(step, [t])[0][0] for t in ("Write", "Edit"))
    assert owners[1] == owners[2] == owners[5] == (one, write, "Write")
    assert owners[6] == (two, edit, "Edit")
    assert owners[7] == (None, None, None)  # the person's line
    assert ranges[-1]["lines"] == [7, 7] and ranges[-1]["session"] is None


def test_blame_and_search_commands(tmp_path: Path) -> None:
    target, sessions = _edited_file(tmp_path)
    home = tmp_path / "home"
    done = walkback("index", str(sessions), home=home)
    assert done.returncode == 0 and "2 sessions indexed" in done.stdout, done.stderr
    out = walkback("blame", str(target), "--json", home=home)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert rows[0]["lines"][0] == 1 and rows[-1]["session"] is None
    text = walkback("blame", str(target), home=home).stdout
    assert "not from a recorded session" in text and "Edit" in text
    trace = json.loads(walkback("blame", str(target), "--agent-trace", home=home).stdout)
    ranges = [r for c in trace["files"][0]["conversations"] for r in c["ranges"]]
    assert trace["version"] == "0.1.0" and all(r["content_hash"].startswith("sha256:") for r in ranges)
    hits = json.loads(walkback("search", "tax", "--json", home=home).stdout)
    assert hits and hits[0]["url"].endswith(f"/s/{hits[0]['session']}/step/{hits[0]['step']}")
    bad = walkback("search", '"open', home=home)
    assert (
        bad.returncode == 2
        and bad.stderr.count("\n") == 1
        and bad.stderr.startswith("Error: malformed search")
    )


def test_an_unreadable_session_is_reported_and_the_rest_indexed(tmp_path: Path) -> None:
    good = transcript(tmp_path / "s" / "good.jsonl", [prompt("g", WS, "2026-11-01T10:00:00Z", "hello")])
    bad = tmp_path / "s" / "bad.jsonl"
    shutil.copy(good, bad)
    bad.write_bytes(good.read_bytes() + b'{"type": "assistant", "message": \n')  # a torn last line
    gone = tmp_path / "missing.jsonl"
    home = tmp_path / "home"
    out = walkback("index", str(tmp_path / "s"), str(gone), home=home)
    assert out.returncode == 0, out.stderr
    assert f"skipped {gone}" in out.stderr and out.stderr.count("skipped") == 1
    assert "sessions indexed" in out.stdout


def test_search_before_any_index_says_so(tmp_path: Path) -> None:
    out = walkback("search", "x", home=tmp_path / "empty")
    assert out.returncode == 2 and "run `walkback index` first" in out.stderr


def test_an_archive_of_another_schema_is_refused_with_the_fix(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite"
    Archive.open(str(db)).conn.execute("UPDATE meta SET value = '0' WHERE key = 'schema'")
    fix = r"schema 0, this one reads 1\): remove it and run `walkback index`"
    with pytest.raises(ArchiveError, match=fix):
        Archive.open(str(db))
