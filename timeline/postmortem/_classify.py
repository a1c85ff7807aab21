"""What the workspace says about one unfinished tool call of a foreign session. Reads files; writes
nothing; no model.

A crash leaves tool calls without results (``pending``); the session cannot say whether their
effect happened, the workspace can:

================================================  ===========  ===========
observation                                        finding      action
================================================  ===========  ===========
Edit: the new text is there, the old one is not    applied      commit
Edit: the old text is there, the new one is not    not_applied  redo
Edit: neither (or only some replacements)          torn         ask_human
Write: the file hashes to the content written      applied      commit
Write: the file is absent, or is the pre image     not_applied  redo
patch: it applies in reverse, not forward          applied      commit
patch: it applies forward, not in reverse          not_applied  redo
patch: it applies neither way                      torn         ask_human
command, network call, tool of unknown effect      in_doubt     ask_human
================================================  ===========  ===========

``redo`` needs the text to write (the recorded replacement made once, exactly where the old text
is, or the whole content); without it the action is ``ask_human``. Recovery never guesses.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from walkback.journal import patches
from walkback.journal.fileops import home_path
from walkback.journal.record import ABSENT, sha256_bytes

from ..details import FileEdit, ToolCall, text_hash

READ_ONLY = frozenset(
    {
        "read", "read_file", "view", "glob", "grep", "ls", "list_files", "list_dir", "list_directory",
        "search_files", "search", "find", "web_search", "websearch", "todowrite", "todoread",
        "read_many_files", "list_code_definition_names", "codebase_search", "notebookread",
    }
)  # fmt: skip
"""Tools that change nothing: a call of one without a result needs no recovery."""


@dataclass
class Verdict:
    """A finding about one call, with what a redo would write."""

    finding: str
    action: str
    detail: str
    effect: str = "fs"
    """``fs``, ``command``, ``external``, or ``none`` for a tool that changes nothing."""
    path: Path | None = None
    """The target in the workspace (a file call whose target stays inside it)."""
    seen: str | None = None
    """The target's hash when it was classified (``absent``: no file)."""
    before: bytes | None = None
    redo: bytes | None = None
    """What a redo writes (None: nothing can be redone)."""


def _short(h: str | None) -> str:
    return "unknown" if h is None else h if not h.startswith("sha256:") else h[:19] + "…"


def locate(target: str, workspace: Path, recorded: str) -> Path | None:
    """``target`` as a path in ``workspace``: relative paths as they are, absolute ones (and ``~/x``,
    the home folder's: :func:`~walkback.journal.fileops.home_path`) when they lie in the workspace
    or in the one the session recorded; None when it would leave the workspace (through ``..`` or a
    symbolic link on the way)."""
    if not target or "\x00" in target:
        return None
    p = home_path(target) if target.startswith("~") else Path(target)
    if p is None:
        return None
    if p.is_absolute():
        for root in (Path(recorded) if recorded else None, workspace, workspace.resolve()):
            if root is not None and root.is_absolute() and (p == root or root in p.parents):
                p = p.relative_to(root)
                break
        else:
            return None
    base = workspace.resolve()
    full = base / p
    try:
        parent = full.parent.resolve()
    except OSError:
        return None
    if parent != base and base not in parent.parents:
        return None
    return parent / full.name


def classify(call: ToolCall, workspace: Path, recorded: str) -> Verdict:
    """The verdict on one unfinished call (see the module docstring)."""
    if call.edit is not None:
        return _file(call.edit, workspace, recorded)
    if call.command:
        return Verdict("in_doubt", "ask_human", "the command may or may not have run", "command")
    if call.url:
        return Verdict("in_doubt", "ask_human", "the network call may or may not have happened", "external")
    if call.name.lower() in READ_ONLY:
        return Verdict("never_started", "none", "a call that changes nothing: nothing to recover", "none")
    return Verdict(
        "in_doubt", "ask_human", f"tool {call.name!r} has an effect walkback cannot check", "external"
    )


def _file(edit: FileEdit, workspace: Path, recorded: str) -> Verdict:
    path = locate(edit.path, workspace, recorded)
    if path is None:
        return Verdict("in_doubt", "ask_human", f"{edit.path} is outside the workspace: not touched")
    try:
        if path.is_symlink():
            return Verdict("in_doubt", "ask_human", "the target is a symbolic link: not touched", path=path)
        if path.exists() and not path.is_file():
            return Verdict(
                "in_doubt", "ask_human", "the target is not a regular file now: not touched", path=path
            )
        data = path.read_bytes() if path.exists() else None
    except OSError as e:
        return Verdict("in_doubt", "ask_human", f"the target cannot be read: {e.strerror}", path=path)
    seen = sha256_bytes(data) if data is not None else ABSENT
    if edit.operation == "delete":
        v = _delete(edit, data, seen)
    elif edit.old_string is not None or edit.edits:
        v = _replace(edit, data)
    elif edit.patch:
        v = _patch(edit.patch, data)
    elif edit.post_text is not None or edit.post:
        v = _write(edit, data, seen)
    else:
        v = Verdict("in_doubt", "ask_human", "the call records no text to compare the file with")
    v.path, v.seen, v.before = path, seen, data
    return v


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _state(text: str, old: str, new: str) -> str:
    """Whether one replacement is in place: ``applied``, ``not_applied``, ``both`` or ``neither``."""
    if old == new:
        return "applied"
    has_old, has_new = old in text, new in text
    if not old:
        return "applied" if new and has_new else "not_applied"
    if old in new:  # the replacement keeps the old text: only the new one tells
        return "applied" if has_new else "not_applied" if has_old else "neither"
    if new in old:  # the replacement removes text
        return "not_applied" if has_old else "applied" if not new or has_new else "neither"
    if has_new and has_old:
        return "both"
    return "applied" if has_new else "not_applied" if has_old else "neither"


def _replace(edit: FileEdit, data: bytes | None) -> Verdict:
    pairs = edit.edits or [(edit.old_string or "", edit.new_string or "")]
    if data is None:
        if all(not old for old, _ in pairs):
            content = "".join(new for _, new in pairs).encode("utf-8", "surrogateescape")
            return Verdict(
                "not_applied", "redo", "the file does not exist yet: the edit creates it", redo=content
            )
        return Verdict("torn", "ask_human", "the file it edits does not exist")
    text = _text(data)
    states = [_state(text, old, new) for old, new in pairs]
    n = len(pairs)
    what = "the replacement" if n == 1 else f"all {n} replacements"
    if all(s == "applied" for s in states):
        return Verdict("applied", "commit", f"the new text of {what} is in the file, the old text is not")
    if all(s == "not_applied" for s in states):
        return _redo_replace(text, pairs, f"the old text of {what} is in the file, the new text is not")
    if "both" in states:
        return Verdict("in_doubt", "ask_human", "both the old and the new text are in the file")
    done = states.count("applied")
    why = (
        "neither the old nor the new text is in the file"
        if n == 1
        else f"{done} of {n} replacements are in place"
    )
    return Verdict("torn", "ask_human", f"{why}: a partial write, or someone changed the file since")


def _redo_replace(text: str, pairs: list[tuple[str, str]], why: str) -> Verdict:
    """Replace each old text once, where it is; only if it is there exactly once at its turn."""
    for old, new in pairs:
        count = text.count(old) if old else 0
        if count != 1:
            where = "is not there" if not count else f"is there {count} times"
            return Verdict(
                "not_applied", "ask_human", f"{why}; a redo cannot tell where: the old text {where}"
            )
        text = text.replace(old, new, 1)
    return Verdict("not_applied", "redo", why, redo=text.encode("utf-8", "surrogateescape"))


def _write(edit: FileEdit, data: bytes | None, seen: str) -> Verdict:
    post = edit.post or text_hash(edit.post_text)
    content = edit.post_text.encode("utf-8") if edit.post_text is not None else None
    action = "redo" if content is not None else "ask_human"
    if seen == post:
        return Verdict("applied", "commit", f"the file is {_short(seen)}: the content the call writes")
    if data is None:
        return Verdict("not_applied", action, "the file does not exist: it was not written", redo=content)
    if edit.pre is not None and seen == edit.pre:
        return Verdict("not_applied", action, f"the file is {_short(seen)}: its content before", redo=content)
    if edit.pre is not None:
        return Verdict(
            "torn", "ask_human", f"the file is {_short(seen)}, neither pre {_short(edit.pre)} nor post"
        )
    return Verdict(
        "in_doubt",
        "ask_human",
        f"the file is {_short(seen)}, not what the call writes, and its content before is not recorded:"
        " it was not written, or it changed since",
    )


def _patch(patch: str, data: bytes | None) -> Verdict:
    text = _text(data) if data is not None else ""
    forward = patches.apply(text, patch)
    backward = patches.apply(text, patch, reverse=True) is not None
    if forward is not None and not backward:
        redo = forward.encode("utf-8", "surrogateescape")
        return Verdict("not_applied", "redo", "the patch applies forward, not in reverse", redo=redo)
    if backward and forward is None:
        return Verdict("applied", "commit", "the patch applies in reverse, not forward: it is in the file")
    if backward:
        return Verdict("in_doubt", "ask_human", "the patch applies both ways: it cannot tell")
    return Verdict("torn", "ask_human", "the patch applies neither forward nor in reverse: the file changed")


def _delete(edit: FileEdit, data: bytes | None, seen: str) -> Verdict:
    if data is None:
        return Verdict("applied", "commit", "the file is gone")
    if edit.pre is None or seen == edit.pre:
        return Verdict("not_applied", "ask_human", "the file is still there (a delete is never redone)")
    return Verdict(
        "torn", "ask_human", f"the file is still there and is {_short(seen)}, not its content before"
    )
