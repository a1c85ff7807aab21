"""File changes of Edit, MultiEdit, Write and NotebookEdit calls, with hashes where the text is known.

The call's input says what was asked; the result's ``toolUseResult`` what was done: the strings
applied (``oldString``/``newString``, which a person may have modified), the file before
(``originalFile``) and the hunks (``structuredPatch``). With the file before known, the file after
is the replacement applied to it (``replaceAll`` honoured); an old string not found in it leaves
the after unknown rather than guessed.
"""

from __future__ import annotations

from typing import Any

from walkback.timeline.details import ABSENT, FileEdit, text_hash

from ..fields import mapping

Replacement = tuple[str, str, bool]
"""``(old, new, replace all)``."""


def replaced(text: str | None, edits: list[Replacement]) -> str | None:
    """``text`` with each replacement applied in order; None when one cannot be (text unknown, an
    empty or absent old string)."""
    if text is None:
        return None
    for old, new, every in edits:
        if not old or old not in text:
            return None
        text = text.replace(old, new) if every else text.replace(old, new, 1)
    return text


def unified(hunks: Any) -> str | None:
    """``structuredPatch`` hunks as unified-diff text (None when there are none)."""
    if not isinstance(hunks, list) or not hunks:
        return None
    out = []
    for h in hunks:
        h = mapping(h)
        lines = h.get("lines")
        old = f"-{h.get('oldStart', 0)},{h.get('oldLines', 0)}"
        out.append(f"@@ {old} +{h.get('newStart', 0)},{h.get('newLines', 0)} @@")
        if isinstance(lines, list):
            out.extend(line for line in lines if isinstance(line, str))
    return "\n".join(out) + "\n"


def _replacement(d: dict[str, Any], old: str, new: str, every: str) -> Replacement | None:
    o, n = d.get(old), d.get(new)
    if not isinstance(o, str) or not isinstance(n, str):
        return None
    return o, n, d.get(every) is True


def _replacements(name: str, a: dict[str, Any], r: dict[str, Any]) -> list[Replacement]:
    """The replacements done (the result's, which a person may have modified), else those asked."""
    if name == "Edit":
        one = _replacement(r, "oldString", "newString", "replaceAll") or _replacement(
            a, "old_string", "new_string", "replace_all"
        )
        return [one] if one is not None else []
    given = r.get("edits") if isinstance(r.get("edits"), list) else a.get("edits")
    found = (_replacement(mapping(e), "old_string", "new_string", "replace_all") for e in given or ())
    return [e for e in found if e is not None] if isinstance(given, list) else []


def file_edit(name: str, args: Any, result: Any, path: str) -> FileEdit | None:
    """The change a file-changing call makes to ``path``, from its input and its result."""
    a, r = mapping(args), mapping(result)
    before = r.get("originalFile", r.get("originalFileContents"))
    before = before if isinstance(before, str) else None
    patch = unified(r.get("structuredPatch"))
    if name == "Write":
        content = a.get("content") if isinstance(a.get("content"), str) else r.get("content")
        after = content if isinstance(content, str) else None
        created = r.get("type") == "create"
        return FileEdit(
            path=path,
            operation="create" if created else "update",
            pre=ABSENT if created else text_hash(before),
            post=text_hash(after),
            pre_text=before,
            post_text=after,
            patch=patch,
        )
    if name in ("Edit", "MultiEdit"):
        edits = _replacements(name, a, r)
        pre: str | None
        if edits and not edits[0][0] and not before:  # an empty old string first: a new file
            operation, pre, after = "create", ABSENT, replaced(edits[0][1], edits[1:])
        else:
            operation, pre, after = "update", text_hash(before), replaced(before, edits) if edits else None
        one = edits[0] if name == "Edit" and edits else None
        return FileEdit(
            path=path,
            operation=operation,
            pre=pre,
            post=text_hash(after),
            pre_text=before,
            post_text=after,
            patch=patch,
            old_string=one[0] if one else None,
            new_string=one[1] if one else None,
            edits=[(o, n) for o, n, _ in edits] if name == "MultiEdit" else [],
        )
    if name == "NotebookEdit":
        return FileEdit(path=path, patch=patch)
    return None
