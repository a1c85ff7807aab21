"""The docs keep up with the code: every command is in the README with help text, and the journal
spec names every record type the importer maps and every failpoint the code can hit."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from walkback.importers.walkback_journal._vocab import TYPE_KIND

from walkback.cli import cli

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
SPEC = (ROOT / "docs" / "journal-format.md").read_text()


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    out = []
    for name, cmd in group.commands.items():
        if cmd.hidden:  # internal plumbing (e.g. `agent child`, run by the agent itself)
            continue
        out.append((prefix + name, cmd))
        if isinstance(cmd, click.Group):
            out += _commands(cmd, prefix + name + " ")
    return out


@pytest.mark.parametrize("name,cmd", _commands(cli), ids=lambda v: v if isinstance(v, str) else "")
def test_every_command_has_help_and_is_in_the_readme(name: str, cmd: click.Command) -> None:
    assert cmd.help and cmd.help.strip(), f"`walkback {name}` has no help text"
    if not isinstance(cmd, click.Group):
        assert f"`walkback {name}" in README, f"`walkback {name}` is not documented in README.md"


def test_readme_starts_with_the_demo_and_the_test_command() -> None:
    blocks = re.findall(r"```\n(.*?)```", README, re.S)
    first = [line.split("#")[0].strip() for line in blocks[0].strip().splitlines()]
    assert first == ["./run demo", "./run test"]


@pytest.mark.parametrize("record_type", sorted(TYPE_KIND))
def test_every_mapped_record_type_is_in_the_spec(record_type: str) -> None:
    assert f"`{record_type}`" in SPEC


def test_every_failpoint_in_the_code_is_in_the_spec() -> None:
    names = set()
    for path in ROOT.glob("*/**/*.py"):
        if path.parts[len(ROOT.parts)] in ("tests", "bench", ".venv"):
            continue
        names |= set(re.findall(r"failpoint\(\s*\"([a-z_.]+)\"", path.read_text()))
    assert names, "no failpoints found: the scan is broken"
    missing = sorted(n for n in names if f"`{n}`" not in SPEC)
    assert not missing, f"failpoints not documented in docs/journal-format.md: {missing}"
