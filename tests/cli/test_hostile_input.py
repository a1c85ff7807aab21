"""Input nobody should hand walkback, handed to every command: FIFOs, files that are not sessions,
empty folders, runs buried in folders; and the seed's lsn journal, on which the commands agree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from walkback.importers import detect
from walkback.journal.record import sha256_bytes
from walkback.journal.testing import write_run
from walkback.viewer.store import discover

ROOT = Path(__file__).resolve().parents[2]


def walkback(*args: str | Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """A real process; a command that blocks fails the test by its timeout instead of hanging it."""
    return subprocess.run(
        [sys.executable, "-m", "walkback", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


COMMANDS = {
    "check": lambda p, t: ("check", p),
    "show": lambda p, t: ("show", p),
    "recover": lambda p, t: ("recover", p),
    "import": lambda p, t: ("import", p, "-o", t / "out"),
    "view": lambda p, t: ("view", "--no-open", "--port", "1", p),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_fifo_is_refused_at_once_by_every_command(tmp_path: Path, command: str) -> None:
    fifo = tmp_path / "journal.jsonl"
    os.mkfifo(fifo)  # no writer: opening it for reading would block forever
    p = walkback(*COMMANDS[command](fifo, tmp_path))
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert p.stderr.startswith(f"Error: {fifo}: not a regular file"), p.stderr
    p = walkback(*COMMANDS[command](tmp_path, tmp_path))  # a run directory whose journal it is
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and p.stderr.startswith("Error: "), p.stderr


def unusable(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "hostname").write_text("build-box-7\n")  # what /etc/hostname holds
    (tmp_path / "array.json").write_text('[{"lsn":0,"type":"plan"},{"lsn":1,"type":"plan"}]\n')
    (tmp_path / "empty").mkdir()
    (tmp_path / "bom.jsonl").write_bytes(b"\xef\xbb\xbf\n\n")  # an editor's "empty" file
    return {
        "text file": tmp_path / "hostname",
        "JSON array": tmp_path / "array.json",
        "empty": tmp_path / "empty",
        "a byte-order mark alone": tmp_path / "bom.jsonl",
        "the current folder": Path("."),
    }


@pytest.mark.parametrize(
    "kind", ["text file", "JSON array", "empty", "a byte-order mark alone", "the current folder"]
)
def test_view_of_unusable_input_fails_at_once_like_show(tmp_path: Path, kind: str) -> None:
    path = unusable(tmp_path)[kind]
    shown = walkback("show", path, cwd=tmp_path / "empty")
    viewed = walkback("view", "--no-open", "--port", "1", path, cwd=tmp_path / "empty")  # port 1: no server
    assert shown.returncode == 2 and shown.stderr.count("\n") == 1, shown.stderr
    assert (viewed.returncode, viewed.stderr) == (shown.returncode, shown.stderr)
    assert "walkback viewer:" not in viewed.stdout + viewed.stderr


def test_view_finds_runs_deeper_in_a_folder_like_the_demo_leaves_them(tmp_path: Path) -> None:
    base = tmp_path / "demo"
    write_run(base / "runs" / "demo", steps=2)
    (base / "repo" / ".git").mkdir(parents=True)  # the workspace: a git working tree, never searched
    (base / "repo" / "src").mkdir()
    journal = (base / "runs" / "demo" / "journal.jsonl").read_bytes()
    (base / "repo" / "src" / "copy.jsonl").write_bytes(journal)
    assert discover([base], detect) == [base / "runs" / "demo"]
    assert discover([base / "runs"], detect) == [base / "runs" / "demo"]


def seed_rename(tmp_path: Path) -> tuple[Path, Path]:
    """The seed's 40-file rename (002_22b8073affcbbc91.txt) as it writes its journal: lsn 1 the plan,
    lsn N+1 file N, each commit carrying its intent's lsn; killed at file 23 with the edit torn."""
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    old = {
        n: f"import {{ getUserById }} from './users';\nexport const f{n} = getUserById;\n"
        for n in range(1, 41)
    }
    new = {n: text.replace("getUserById", "fetchUser") for n, text in old.items()}
    lines: list[dict[str, object]] = [
        {
            "lsn": 1,
            "type": "plan",
            "task": "rename getUserById -> fetchUser",
            "files": 40,
            "base": "git:4e1a2c7",
        }
    ]
    for n in range(1, 24):
        (ws / f"src/f{n}.ts").write_text(new[n] if n < 23 else old[n][:30])  # file 23: half written
        lines.append({"lsn": n + 1, "type": "intent", "tool": "replace_symbol", "file": f"src/f{n}.ts",
                      "old": "getUserById", "new": "fetchUser", "pre": sha256_bytes(old[n].encode()),
                      "post": sha256_bytes(new[n].encode())})  # fmt: skip
        if n < 23:
            lines.append({"lsn": n + 1, "type": "commit", "verified": "hash==post && tsc --noEmit ok"})
    for n in range(24, 41):
        (ws / f"src/f{n}.ts").write_text(old[n])
    journal = tmp_path / "wal.jsonl"
    journal.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in lines))
    return journal, ws


def test_check_and_recover_read_the_seed_journal_as_the_seed_means_it(tmp_path: Path) -> None:
    journal, ws = seed_rename(tmp_path)
    check = walkback("check", "--json", journal)
    assert check.returncode == 0 and json.loads(check.stdout)["ok"], check.stdout
    dry = walkback("recover", journal, "--workspace", ws, "--json")
    doc = json.loads(dry.stdout)
    assert [(f["lsn"], f["target"], f["finding"]) for f in doc["findings"]] == [(24, "src/f23.ts", "torn")]
    assert (doc["committed_through"], doc["next_lsn"]) == (23, 25)
    assert dry.returncode == 3  # torn, and no image to restore it from: a human decides


def test_show_agrees_with_check_and_recover_on_the_seed_journal(tmp_path: Path) -> None:
    journal, _ = seed_rename(tmp_path)
    shown = json.loads(walkback("show", "--json", journal).stdout)
    assert [p["lsn"] for p in shown["pending"]] == [24]
    assert shown["last_committed_lsn"] == 23
