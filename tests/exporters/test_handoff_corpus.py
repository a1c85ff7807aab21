"""Both handoff exports work on one real log of every foreign format walkback reads (the corpus):
the HTML replay verifies, and the markdown summary is within the comment limit."""

from __future__ import annotations

from pathlib import Path

import pytest
from bundle_helpers import keypair, run
from test_bundle_corpus import CORPUS, FILES
from walkback.exporters.markdown import LIMIT
from walkback.importers import detect

ONE = list({detect(p).name: p for p in reversed(FILES)}.values())[::-1]
"""The first corpus file of each format."""


@pytest.mark.skipif(not ONE, reason="no corpus file of a foreign format walkback reads")
@pytest.mark.parametrize("path", ONE, ids=lambda p: f"{p.relative_to(CORPUS)}")
def test_a_foreign_log_exports_as_a_replay_and_a_summary(path: Path, tmp_path: Path) -> None:
    key, pub = keypair(tmp_path)
    made = run("export", "html", path, "-o", tmp_path / "r.html", "--key", key)
    assert made.exit_code == 0, made.output
    ok = run("verify", tmp_path / "r.html", "--key", pub)
    assert ok.exit_code == 0, ok.output
    made = run("export", "markdown", path, "-o", tmp_path / "s.md")
    assert made.exit_code == 0, made.output
    text = (tmp_path / "s.md").read_text()
    assert text.startswith("## walkback: ") and "### Verification" in text and len(text) <= LIMIT
