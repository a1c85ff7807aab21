"""Where the pre and post images of a file intent come from; every image is checked by hash.

Sources, in order: the intent itself or the run's blob store (the agent journals both images with
or before the intent; :func:`journal.images.intent_image`), then the last checkpoint's git tree,
the header's ``base_ref`` and a seed plan's ``base`` (``git:<sha>``), and for a post image the tool
re-applied to the base content (seed journals have neither). An image is accepted only when it
hashes to the intent's ``pre``/``post``; anything else is not an image.
"""

from __future__ import annotations

import re
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from walkback.journal.blobs import BlobStore
from walkback.journal.errors import BlobError
from walkback.journal.fileops import home_path
from walkback.journal.images import Which, intent_image
from walkback.journal.record import ABSENT, sha256_bytes

from ._dialect import Pending

_REV = re.compile(r"^[0-9a-f]{7,64}$")
GIT = "git:"
"""How a seed journal names a commit (``"base":"git:4e1a2c7"``); v1 writes the bare sha."""


def git_ref(value: object) -> str | None:
    """The commit a ``base``, ``base_ref`` or checkpoint ``git`` value names (``git:<sha>`` or a
    bare sha), or None when it names none."""
    if not isinstance(value, str):
        return None
    sha = value.removeprefix(GIT).strip().lower()
    return sha if _REV.match(sha) else None


@dataclass(frozen=True)
class Image:
    """A file's content (None: the file does not exist) and where it came from."""

    data: bytes | None
    source: str

    @property
    def hash(self) -> str:
        return ABSENT if self.data is None else sha256_bytes(self.data)


def resolve_target(workspace: Path, target: str) -> Path | None:
    """The target's path inside the workspace, or None if it could leave it (or touch ``.git``).

    ``~/x`` is the home folder's ``x`` (:func:`~walkback.journal.fileops.home_path`): taken when
    that lies in the workspace, else refused as outside it."""
    if target.startswith("~"):
        home, root = home_path(target), workspace.resolve()
        where = home.parent.resolve() / home.name if home is not None else None
        if where is None or root not in where.parents:
            return None
        target = where.relative_to(root).as_posix()
    p = PurePosixPath(target)
    if not target or p.is_absolute() or "\\" in target or "\x00" in target:
        return None
    if any(part in ("", ".", "..") for part in target.split("/")) or p.parts[0] == ".git":
        return None
    path = workspace / target
    root = workspace.resolve()
    try:
        parent = path.parent.resolve()
    except OSError:
        return None
    if parent != root and root not in parent.parents:
        return None
    if path.is_symlink():
        return None
    return path


def read_current(path: Path) -> Image | str:
    """The target's content now, or why it has none a file intent could have left (a directory, a
    FIFO, unreadable). Never blocks: only a regular file is opened."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return Image(None, "the current content (absent)")
    except OSError as e:
        return f"cannot be examined ({e.strerror})"
    if not stat.S_ISREG(mode):
        return "is now a directory" if stat.S_ISDIR(mode) else "is not a regular file"
    try:
        return Image(path.read_bytes(), "the current content")
    except FileNotFoundError:
        return Image(None, "the current content (absent)")
    except OSError as e:
        return f"cannot be read ({e.strerror})"


class Images:
    """Finds images for the intents of one journal."""

    def __init__(self, blobs: BlobStore, workspace: Path, refs: list[tuple[str, object]]) -> None:
        """``refs``: ``(label, commit)`` pairs to look in, most recent first (see :func:`git_ref`)."""
        self.blobs = blobs
        self.workspace = workspace
        self.refs = [(label, sha) for label, value in refs if (sha := git_ref(value)) is not None]

    def find(self, p: Pending, which: Which) -> Image | None:
        """The intent's ``pre`` or ``post`` image: inline in the intent, in the blob store, or in a
        git tree; None when none of them has content that hashes right."""
        h = p.pre if which == "pre" else p.post
        if h is None:
            return None
        if h == ABSENT:
            return Image(None, "absence (no such file)")
        for store, source in ((None, "the intent"), (self.blobs, "the blob store")):
            try:
                return Image(intent_image(p.record, which, store), source)
            except BlobError:
                continue
        for label, sha in self.refs:
            data = self._git_show(sha, p.target)
            if data is not None and sha256_bytes(data) == h:
                return Image(data, f"{label} {sha[:12]}")
        return None

    def post(self, p: Pending, base: Image | None) -> Image | None:
        """The post image: stored, or the tool applied to ``base`` when that hashes to ``post``."""
        img = self.find(p, "post")
        if img is not None or base is None:
            return img
        for data in redo_candidates(p.tool, p.args, base.data):
            if (ABSENT if data is None else sha256_bytes(data)) == p.post:
                return Image(data, f"{p.tool} applied to {base.source}")
        return None

    def _git_show(self, sha: str, target: str) -> bytes | None:
        try:
            out = subprocess.run(
                ["git", "-C", str(self.workspace), "cat-file", "blob", f"{sha}:./{target}"],
                capture_output=True,
                timeout=30,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return out.stdout if out.returncode == 0 else None


def redo_candidates(tool: str, args: dict[str, Any], base: bytes | None) -> Iterator[bytes | None]:
    """What an end-state tool would leave, given the content it starts from (None: absent).

    ``replace_symbol`` yields the identifier-boundary rename, then the plain one; the caller keeps
    only a result that hashes to the intent's ``post``.
    """
    if tool == "write_file" and isinstance(args.get("content"), str):
        yield args["content"].encode()
    elif tool == "delete_file":
        yield None
    elif tool == "replace_symbol" and base is not None:
        old, new = args.get("old"), args.get("new")
        if isinstance(old, str) and isinstance(new, str) and old:
            o, n = old.encode(), new.encode()
            yield re.sub(
                rb"(?<![A-Za-z0-9_])" + re.escape(o) + rb"(?![A-Za-z0-9_])", n.replace(b"\\", b"\\\\"), base
            )
            yield base.replace(o, n)
    elif tool == "ensure_line" and isinstance(args.get("line"), str):
        text = base or b""
        line = args["line"].encode()
        if line in text.splitlines():
            yield text
        else:
            yield text + (b"\n" if text and not text.endswith(b"\n") else b"") + line + b"\n"
