"""The manifest of a working tree outside git: every file's path -> its ``sha256:<hex>``.

A shell intent's snapshot where there is no git (docs/hooks.md): the hook command stores it as a
blob before the command runs, and recovery builds it again to list what changed since. One
definition for both sides; standard library only (the hook command imports it on a tool call).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

MANIFEST_MAX = 20_000
"""Files a manifest lists at most (a workspace outside git that is a whole home folder stops here)."""
SKIP = frozenset({".git", "node_modules", ".venv", "__pycache__"})
"""Folders a manifest does not descend into."""


def manifest(root: Path) -> bytes:
    """JSON of every file under ``root`` -> its ``sha256:<hex>`` (symbolic links: their target text)."""
    files: dict[str, str] = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP)
        for name in sorted(names):
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            try:
                if os.path.islink(path):
                    files[rel] = "link:" + os.readlink(path)
                    continue
                with open(path, "rb") as f:
                    files[rel] = "sha256:" + hashlib.file_digest(f, "sha256").hexdigest()
            except OSError:
                files[rel] = "unreadable"
            if len(files) >= MANIFEST_MAX:
                return json.dumps({"files": files, "truncated": True}, sort_keys=True).encode()
    return json.dumps({"files": files}, sort_keys=True).encode()
