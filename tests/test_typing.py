"""The library type-checks with the strict settings in pyproject.toml ([tool.mypy]).

mypy cannot follow setuptools' package-dir mapping (the parts are folders at the top of the
repository but install as walkback.<part>), so it runs on a tree of links shaped like the
installed package.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("journal", "agent", "timeline", "importers", "exporters", "viewer")


@pytest.mark.slow
def test_the_library_type_checks_strictly(tmp_path: Path) -> None:
    pkg = tmp_path / "walkback"
    pkg.mkdir()
    for item in (ROOT / "walkback").iterdir():
        if item.name != "__pycache__":
            (pkg / item.name).symlink_to(item)
    for part in PARTS:
        (pkg / part).symlink_to(ROOT / part)
    (tmp_path / "pyproject.toml").symlink_to(ROOT / "pyproject.toml")
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "-p", "walkback", "--cache-dir", str(tmp_path / ".mypy_cache")],
        cwd=tmp_path, capture_output=True, text=True, timeout=900,
    )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
