"""Where the viewer tests' app and artifacts live, and how a test tells app_main.py what to serve."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
MAIN = HERE / "app_main.py"
ARTIFACTS = ROOT / "test-artifacts" / "viewer"
"""Screenshots (git-ignored)."""


def configure(paths: list[Path], **options: Any) -> None:
    """Set what app_main.py serves: paths, and workspace/token/preload/poll/analyze options."""
    cfg = {
        "paths": [str(p) for p in paths],
        **{k: str(v) if isinstance(v, Path) else v for k, v in options.items()},
    }
    os.environ["WALKBACK_VIEWER_TEST"] = json.dumps(cfg)
