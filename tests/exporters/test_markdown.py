"""The pull-request summary: GitHub markdown that a CommonMark parser reads as text and tables
(a model's markup stays inert), within GitHub's comment limit on a session of thousands of edits
(with a note of what was cut), redacted like the bundle."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt
from secret_session import leaks, write_session
from walkback.exporters.markdown import LIMIT, escape

from walkback.cli import cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "viewer"))
from sample_runs import build_run  # noqa: E402


def export(*args: str | Path) -> Any:
    return CliRunner().invoke(cli, ["export", "markdown", *map(str, args)], catch_exceptions=False)


def tokens(text: str) -> list[Any]:
    out = []
    for t in MarkdownIt("commonmark").enable("table").parse(text):
        out += [t, *(t.children or [])]
    return out


def test_a_crashed_run_summarised(tmp_path: Path) -> None:
    r = build_run(tmp_path, xss=True, recovered=True)
    keys = CliRunner().invoke(cli, ["keygen", "-o", str(tmp_path / "k")])
    assert keys.exit_code == 0
    made = export(r.dir, "-o", tmp_path / "s.md", "--key", tmp_path / "k", "--html", "run-a.html")
    assert made.exit_code == 0, made.output
    text = (tmp_path / "s.md").read_text()
    found = tokens(text)
    kinds = {t.type for t in found}
    assert {"heading_open", "table_open", "td_open", "code_inline"} <= kinds
    assert not kinds & {"html_inline", "html_block", "link_open", "image"}  # the model's markup is text
    headings = [n.content for t, n in zip(found, found[1:], strict=False) if t.type == "heading_open"]
    for h in (
        "Agents",
        "Files changed",
        "Crash and recovery",
        "Commands",
        "Approvals",
        "Failures",
        "Verification",
    ):
        assert h in headings, headings
    assert "Merkle root" in text and "signed by SHA256:" in text and "walkback verify run-a.html" in text
    assert "+" in text and "−" in text and "`sha256:" in text  # lines added and removed, post hash
    assert "denied" in text and "resumed at step" in text


def test_hundreds_of_edits_stay_under_the_comment_limit(tmp_path: Path) -> None:
    session = write_session(tmp_path, edits=3000)
    made = export(session, "-o", tmp_path / "s.md")
    assert made.exit_code == 0, made.output
    text = (tmp_path / "s.md").read_text()
    assert len(text) <= LIMIT
    assert "cut to fit GitHub's 65,536-character comment limit: files changed (" in text
    assert "### Verification" in text and "redacted 6 lines" in made.stderr
    assert leaks(text.encode()) == []
    assert any(t.type == "table_open" for t in tokens(text))


@pytest.mark.parametrize("text", ["<script>x</script>", "[a](javascript:x)", "a | b", "`c`", "**b**", "# h"])
def test_escape_keeps_markup_text(text: str) -> None:
    rendered = MarkdownIt("commonmark").render(escape(text))
    assert (
        rendered.strip()
        == "<p>" + text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") + "</p>"
    )
