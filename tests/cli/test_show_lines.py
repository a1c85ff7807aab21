"""``walkback show`` keeps to one screen line per fact: a task by its first line that says
something, every line cut to the terminal's width with an ellipsis (200 characters when the output
is a file or a pipe), on real logs whose tasks are pages long and on a trajectory of our own."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from walkback.importers.describe import headline
from walkback.journal import JournalWriter

from walkback.cli import cli

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
FIXTURES = Path(__file__).resolve().parents[1] / "importers"
LONG_TASKS = [
    CORPUS / "swe-agent" / "mini-swe-agent" / "astropy__astropy-12907.traj.json",
    CORPUS / "swe-agent" / "swe-agent__test-repo-i1.traj",
    CORPUS / "gemini-cli" / "vibecodingtracker" / "gemini.jsonl",
    CORPUS / "aider" / "aider-repo-fixture" / "chat-history.EXCERPT.md",
    FIXTURES / "test_cline" / "1733145600000",
    FIXTURES / "test_roo_code" / "tasks" / "0199c3a0-0000-7000-8000-00000000a001",
    FIXTURES / "test_mini_swe_agent" / "calc__calc-1.traj.json",
]
TASK = "\n\n<issue>\n   Make `add` add.  \nIt subtracts:\n" + "x = add(2, 3)\t# 5\n" * 300 + "</issue>"


def trajectory(tmp_path: Path) -> Path:
    """A SWE-agent 1.x trajectory whose task is a template-wrapped issue, and whose command is
    thousands of characters on one line."""
    command = "echo " + "a" * 5000
    doc = {
        "environment": "e",
        "trajectory": [{"action": command, "observation": "", "thought": "", "response": ""}],
        "history": [
            {"role": "system", "content": "you are"},
            {"role": "user", "content": TASK},
            {"role": "assistant", "content": "run it", "action": command},
        ],
        "info": {},
    }
    path = tmp_path / "i.traj"
    path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    return path


@pytest.mark.parametrize("path", [*LONG_TASKS, None], ids=lambda p: p.name if p else "own")
def test_no_line_is_over_200_characters_in_a_pipe(path: Path | None, tmp_path: Path) -> None:
    path = path or trajectory(tmp_path)
    shown = CliRunner().invoke(cli, ["show", str(path)])
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines and max(len(line) for line in lines) <= 200, max(lines, key=len)
    assert not any("\\x0a" in line for line in lines if line.startswith("  task"))


def pending_command(tmp_path: Path) -> Path:
    """A journal whose task is many lines and whose pending intent runs a command of 5,000
    characters over two lines."""
    w = JournalWriter.create(tmp_path / "run", task=TASK, workspace="/ws", base_ref="0" * 40)
    w.append("intent", tool="bash", target="echo " + "a" * 5000 + "\nexit 1", args={})
    w.close()
    return tmp_path / "run"


def test_the_task_is_its_first_line_that_says_something_and_long_lines_end_cut(tmp_path: Path) -> None:
    shown = CliRunner().invoke(cli, ["show", str(pending_command(tmp_path))])
    assert shown.exit_code == 0, shown.output
    assert "  task        Make `add` add.\n" in shown.output
    (pending,) = [line for line in shown.output.splitlines() if "echo aaa" in line]
    assert len(pending) == 200 and pending.endswith("…")
    assert headline(TASK) == "Make `add` add." and headline("\n \n") == ""
    assert headline("<a>\n<b/>x") == "<b/>x"


def test_a_terminal_gets_lines_as_wide_as_it_is(tmp_path: Path) -> None:
    """A real pseudo-terminal of 60 columns: every line fits it, the long ones end in an ellipsis."""
    parent, child = pty.openpty()
    env = {**os.environ, "COLUMNS": "60", "LINES": "24"}
    code = "from walkback.cli import cli; cli()"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "show", str(pending_command(tmp_path))],
        stdin=child, stdout=child, stderr=child, env=env,
    )  # fmt: skip
    os.close(child)
    out = b""
    while True:
        try:
            chunk = os.read(parent, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    assert proc.wait(timeout=60) == 0, out
    os.close(parent)
    lines = [line for line in out.decode().replace("\r", "").split("\n") if line and "reading" not in line]
    assert len(lines) >= 8 and max(len(line) for line in lines) <= 60, lines
    assert any(line.endswith("…") for line in lines) and "  task        Make `add` add." in lines
