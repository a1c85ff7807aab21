"""The file tools: compute the new content from the old, then write it atomically.

Each tool is a pure function of the old bytes (``None`` when the file does not exist) that returns
the new bytes (``None`` to delete). That is what lets the harness put both images in the blob
store and the post hash in the intent before touching the file, and what makes a redo from the
post blob equal to running the tool again.

The write is temp file + fsync + rename + directory fsync through :class:`journal.fileops.FileOps`
(so the power-loss tests can record it), with a failpoint after each stage. The temp file gets a
name nobody can predict and is created exclusively, and the target must stay inside the workspace
(:func:`journal.fileops.confined`): a link planted in the repository never redirects a write.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from walkback.journal import failpoints
from walkback.journal.errors import OutsideWorkspace
from walkback.journal.fileops import FileOps, confined, naming, temp_path
from walkback.journal.record import ABSENT, FILE_TOOLS, sha256_bytes, sha256_file

from ..actions import Action
from .base import Prepared, ToolError, resolve


def new_content(tool: str, args: dict[str, Any], old: bytes | None) -> bytes | None:
    """The file's content after ``tool`` runs on content ``old``."""
    if tool == "write_file":
        return str(args["content"]).encode("utf-8")
    if tool == "delete_file":
        return None
    if tool == "replace_symbol":
        if old is None:
            raise ToolError(f"replace_symbol: {args['path']} does not exist")
        pattern = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(args['old'])}(?![A-Za-z0-9_])")
        return pattern.sub(args["new"], _text(old, args["path"])).encode("utf-8")
    if tool == "ensure_line":
        text = _text(old, args["path"]) if old is not None else ""
        if args["line"] in text.splitlines():
            return old if old is not None else b""
        if text and not text.endswith("\n"):
            text += "\n"
        return (text + args["line"] + "\n").encode("utf-8")
    raise ToolError(f"{tool} is not a file tool")


def _text(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{path} is not UTF-8 text; {path} cannot be edited by symbol or line") from None


def read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ToolError(f"{path} is a directory") from None


def observe(path: Path) -> str:
    """The target's current hash in the journal's notation (``absent`` if missing)."""
    return sha256_file(path)


def apply_file(path: Path, data: bytes | None, ops: FileOps, *, root: Path) -> None:
    """Make ``path`` hold ``data`` (``None``: not exist), surviving a crash at any point.

    Raises:
        ToolError: ``path`` resolves outside the workspace ``root`` (nothing is written).
    """
    try:
        path = confined(root, path)
    except OutsideWorkspace as e:
        raise ToolError(e.message, path=e.path) from None
    if data is None:
        try:
            ops.unlink(path)
        except FileNotFoundError:
            return
        failpoints.failpoint("apply.after_unlink")
        ops.fsync_dir(path.parent)
        failpoints.failpoint("apply.after_dir_fsync")
        return
    ops.mkdir(path.parent)
    tmp = temp_path(path)
    fd = ops.open_new(tmp)
    try:
        ops.write(fd, data)
        failpoints.failpoint("apply.after_tmp_write")
        ops.fsync(fd)
    except OSError as e:
        ops.close(fd)
        ops.unlink(tmp)
        raise naming(e, path) from None
    ops.close(fd)
    failpoints.failpoint("apply.after_tmp_fsync")
    ops.replace(tmp, path)
    failpoints.failpoint("apply.after_rename")
    ops.fsync_dir(path.parent)
    failpoints.failpoint("apply.after_dir_fsync")


def prepare(action: Action, workspace: Path) -> Prepared:
    """Compute pre/post (file tools) before anything is written."""
    if action.tool not in FILE_TOOLS:
        return Prepared(action, None, None, None, None, None)
    path = resolve(workspace, action.args["path"])
    old = read(path)
    new = new_content(action.tool, action.args, old)
    pre = sha256_bytes(old) if old is not None else ABSENT
    post = sha256_bytes(new) if new is not None else ABSENT
    return Prepared(action, path, pre, post, old, new)
