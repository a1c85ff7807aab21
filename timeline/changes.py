"""What one file change did, and whether its hashes can be trusted: pre/post content and badges.

The badges answer three questions about a change (an intent on a file):

* does its ``pre`` equal the ``post`` of the previous change to the same file (no unrecorded edit
  happened in between)?
* do the stored blobs hash to ``pre`` and ``post`` (the images we diff are the recorded ones)?
* with a workspace: does the file there now (and at git ``HEAD``) equal ``post``?
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .details import ABSENT
from .session import Session
from .views import FileChange, file_change

MAX_DIFF_BYTES = 2_000_000
"""Larger images are not diffed (the viewer offers their hashes, not a frozen browser)."""
MAX_DIFF_LINES = 5000


@dataclass(frozen=True)
class Badge:
    """A verdict shown next to a hash. ``ok`` is None when there is nothing to compare."""

    label: str
    ok: bool | None
    detail: str = ""


@dataclass
class ChangeView:
    """A file change with its content (when recorded) and its hash badges."""

    change: FileChange
    pre_text: bytes | None
    post_text: bytes | None
    previous: int | None
    """Index of the previous tool call on the same file, if any."""
    badges: list[Badge] = field(default_factory=list)

    @property
    def binary(self) -> bool:
        return any(b is not None and _is_binary(b) for b in (self.pre_text, self.post_text))

    @property
    def too_large(self) -> bool:
        return any(b is not None and len(b) > MAX_DIFF_BYTES for b in (self.pre_text, self.post_text))


def _is_binary(data: bytes) -> bool:
    if b"\x00" in data[:8192]:
        return True
    try:
        data[:65536].decode("utf-8")
    except UnicodeDecodeError as e:
        return e.start < min(len(data), 65536) - 4
    return False


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _image(session: Session, name: str | None, inline: bytes | None) -> tuple[bytes | None, Badge | None]:
    """Content named by ``name`` and a badge saying whether the stored copy matches the name."""
    if inline is not None:
        if name and name.startswith("sha256:"):
            if _sha(inline) == name:
                return inline, Badge(
                    "content in the record matches hash",
                    True,
                    f"the text the record carries hashes to {name}",
                )
            return inline, Badge(
                "content in the record does not match its hash",
                False,
                f"the text the record carries is not {name}",
            )
        return inline, Badge(
            "content from the source log", None, "the source log carries the text, not its hash"
        )
    if name is None:
        return None, None
    if name == ABSENT:
        return b"", Badge(
            "absent (no file)", True, "the file did not exist (before its creation, after its deletion)"
        )
    data = session.blob(name)
    if data is None:
        return None, Badge("blob missing", False, f"{name} is not in the run's blob store")
    if _sha(data) != name:
        return None, Badge("blob does not match its hash", False, name)
    return data, Badge("blob matches hash", True, f"the stored copy of this image hashes to {name}")


def change_view(
    session: Session, i: int, *, history: np.ndarray | None = None, workspace: Path | None = None
) -> ChangeView | None:
    """The view of tool call ``i`` if it changed a file; None otherwise.

    ``history`` is the ascending indices of the calls on this file (see ``query.file_rows``).
    """
    fc = file_change(session, i)
    if fc is None:
        return None
    pre_text, pre_badge = _image(session, fc.pre, fc.pre_text)
    post_text, post_badge = _image(session, fc.post, fc.post_text)
    snippet = pre_text is None and post_text is None and fc.edit.new_string is not None
    if snippet:  # only the replaced text is known, not the whole file
        pre_text = (fc.edit.old_string or "").encode("utf-8")
        post_text = (fc.edit.new_string or "").encode("utf-8")
    previous = None
    later = np.zeros(0, np.int64)
    if history is not None and len(history):
        k = int(np.searchsorted(history, i))
        previous = int(history[k - 1]) if k > 0 else None
        later = history[k + 1 :]
    badges = [_chain_badge(session, fc, previous)]
    if snippet:
        badges.append(Badge("only the replaced text is recorded", None, "not the whole file"))
    if pre_badge:
        badges.append(Badge("pre " + pre_badge.label, pre_badge.ok, pre_badge.detail))
    if post_badge:
        badges.append(Badge("post " + post_badge.label, post_badge.ok, post_badge.detail))
    if workspace is not None:
        badges.extend(workspace_badges(session, fc, workspace, later))
    return ChangeView(fc, pre_text, post_text, previous, badges)


def _chain_badge(session: Session, fc: FileChange, previous: int | None) -> Badge:
    if previous is None:
        return Badge(
            "first change of this file in the session",
            None,
            "no earlier step of this session changed the file, so there is no post to compare its pre with",
        )
    prev = file_change(session, previous)
    prev_post = prev.post if prev else None
    step = previous + 1
    if fc.pre is None or prev_post is None:
        return Badge(
            f"pre not comparable with step {step}",
            None,
            "one of the two hashes is not recorded by the source",
        )
    if fc.pre == prev_post:
        return Badge(
            f"pre = post of step {step}",
            True,
            f"the file was as step {step} left it: nothing changed it in between without being recorded",
        )
    return Badge(
        f"pre differs from post of step {step}",
        False,
        f"something changed the file between step {step} and this one without a record: "
        f"{prev_post} != {fc.pre}",
    )


def _inside(workspace: Path, target: str) -> Path | None:
    """``workspace/target`` if it stays inside the workspace (no absolute paths, no ``..`` escape)."""
    if not target or Path(target).is_absolute() or "\x00" in target:
        return None
    base = workspace.resolve()
    p = (base / target).resolve()
    return p if p == base or base in p.parents else None


def workspace_badges(session: Session, fc: FileChange, workspace: Path, later: np.ndarray) -> list[Badge]:
    """Does the file in the workspace now, and at git HEAD, hold this change's ``post``?"""
    path = _inside(workspace, fc.path)
    if path is None:
        return [Badge("target is outside the workspace", None, fc.path)]
    if fc.post is None:
        return []
    try:
        now = _sha(path.read_bytes()) if path.is_file() else ABSENT
    except OSError as e:
        return [Badge("workspace file unreadable", None, str(e))]
    out = [_compare("workspace now", now, fc.post, session, later)]
    head = _git_head_hash(workspace.resolve(), path)
    if head is not None:
        out.append(_compare("git HEAD", head, fc.post, session, later))
    return out


EXPLAIN = {
    "workspace now": "the file in the workspace as it is now, hashed and compared with this change's post",
    "git HEAD": "the file in the commit the workspace's git HEAD points at, compared with this change's post",
}


def _compare(where: str, actual: str, post: str, session: Session, later: np.ndarray) -> Badge:
    """Where the file stands now. Only a workspace file that matches no step of the session is a
    warning; git HEAD having another version usually means the edits are not committed (neutral)."""
    why = EXPLAIN[where]
    if actual == post:
        return Badge(f"{where} = post", True, f"{why}: the same")
    for j in map(int, later[::-1]):  # newest first: the file most likely holds the last change
        other = file_change(session, j)
        if other is not None and other.post == actual:
            return Badge(f"{where} = post of later step {j + 1}", None, f"{why}: it holds a later change")
    if where == "git HEAD":
        return Badge(
            "not committed at git HEAD",
            None,
            f"{why}: HEAD has another version ({actual[:19]}…); the change may simply not be committed to "
            "the checked-out branch",
        )
    return Badge(
        "workspace file changed since",
        False,
        f"{why}: it matches neither this change nor a later step of the session ({actual[:19]}…)",
    )


def _git_head_hash(workspace: Path, path: Path) -> str | None:
    """Hash of the file at HEAD (``absent`` if HEAD lacks it); None when not a git work tree or
    HEAD has no commit yet. Read with GitPython's object database (no process per file)."""
    import git

    try:
        repo = git.Repo(workspace, search_parent_directories=True)
        root = Path(repo.working_tree_dir or "").resolve()
        rel = path.relative_to(root).as_posix()
        tree = repo.head.commit.tree
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, ValueError, OSError):
        return None
    try:
        blob = tree / rel
    except KeyError:
        return ABSENT
    if blob.type != "blob":
        return ABSENT
    return _sha(blob.data_stream.read())


# -- diffs -------------------------------------------------------------------------------------
def _lines(data: bytes | None) -> list[str]:
    if not data:
        return []
    return data.decode("utf-8", errors="replace").splitlines()[:MAX_DIFF_LINES]


def unified(view: ChangeView, context: int = 3) -> list[tuple[str, str]]:
    """``(tag, line)`` pairs of a unified diff pre→post; tag is ``+``, ``-``, ``@`` or `` ``."""
    if view.pre_text is None and view.post_text is None and view.change.patch:
        return _patch_lines(view.change.patch)
    a, b = _lines(view.pre_text), _lines(view.post_text)
    out: list[tuple[str, str]] = []
    for line in difflib.unified_diff(a, b, "pre", "post", lineterm="", n=context):
        if line.startswith(("---", "+++")):
            continue
        tag = line[:1] if line[:1] in "+-@" else " "
        out.append((tag, line))
    return out


def _patch_lines(patch: str) -> list[tuple[str, str]]:
    """A recorded patch as ``(tag, line)`` pairs (what the source has instead of both texts)."""
    out: list[tuple[str, str]] = []
    for line in patch.splitlines()[:MAX_DIFF_LINES]:
        if line.startswith(("---", "+++", "diff ", "index ", "***")):
            continue
        tag = line[:1] if line[:1] in "+-@" else " "
        out.append((tag, line))
    return out


def side_by_side(view: ChangeView, context: int = 3) -> list[tuple[str, str | None, str | None]]:
    """``(tag, left, right)`` rows; tag is ``equal``, ``replace``, ``delete``, ``insert`` or ``skip``
    (a run of unchanged lines longer than twice ``context``, folded; ``left`` says how many). A side
    is None where it has no line (an insert's left, the shorter side of a replace), so a blank line
    (``""``) is never mistaken for a missing one."""
    a, b = _lines(view.pre_text), _lines(view.post_text)
    rows: list[tuple[str, str | None, str | None]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        left, right = a[i1:i2], b[j1:j2]
        if tag == "equal" and len(left) > 2 * context:
            head = left[:context] if rows else []
            tail = left[-context:] if i2 < len(a) or j2 < len(b) else []
            rows.extend(("equal", x, x) for x in head)
            rows.append(("skip", f"{len(left) - len(head) - len(tail)} unchanged lines", ""))
            rows.extend(("equal", x, x) for x in tail)
            continue
        for k in range(max(len(left), len(right))):
            rows.append((tag, left[k] if k < len(left) else None, right[k] if k < len(right) else None))
    return rows
