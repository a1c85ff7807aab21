"""NiceGUI main file for the viewer tests: builds the app from ``WALKBACK_VIEWER_TEST`` (JSON).

Run by ``nicegui.testing.user_simulation`` (and by the browser tests' server thread), so it must
not parse ``sys.argv``; the fixtures in conftest.py write the config.
"""

import json
import os
from pathlib import Path

from nicegui import ui
from walkback.importers.archive.store import Archive
from walkback.journal.recovery import analyze
from walkback.viewer.app import build, make_store

cfg = json.loads(os.environ["WALKBACK_VIEWER_TEST"])
archive = Archive.open(cfg["archive"], create=False) if cfg.get("archive") else None
store = make_store(
    [Path(p) for p in cfg["paths"]],
    workspace=Path(cfg["workspace"]) if cfg.get("workspace") else None,
    analyzer=analyze if cfg.get("analyze", True) else None,
    expand=archive is None,
)
if cfg.get("preload", True):
    for entry in store.entries.values():
        store.load_now(entry)
host = "test"  # the simulated user's Host
build(store, token=cfg.get("token"), poll=cfg.get("poll", 0.5), host=host, archive=archive)
ui.run(reload=False, show=False, show_welcome_message=False, title="walkback")
