"""Text as text: lines with numbers for code and diffs, fields whose multi-line values are blocks.

Both are small Vue components that show every value through text interpolation, so a journal's
content (written by a model) is never parsed as HTML, a literal ``\\n`` is never shown for a line
break, and one element holds a whole diff or a whole detail (no element per line).
"""

from __future__ import annotations

from typing import Any

import orjson

from .common import Component, clip

MAX_LINES = 5000
"""Lines of one text shown (the raw record and the blobs keep the rest)."""
CODE_KEYS = frozenset(
    {"content", "new_string", "old_string", "new", "old", "patch", "diff", "code", "file_text", "source"}
)
"""Argument names whose text is code (shown with line numbers)."""

Row = list[Any]


class Lines(Component, component="text_lines.js"):
    """Rows of ``[class, number, text]`` (or six cells side by side)."""

    def __init__(self, rows: list[Row] | None = None, *, split: bool = False, numbered: bool = True) -> None:
        super().__init__()
        self._props["rows"] = rows or []
        self._props["split"] = split
        self._props["numbered"] = numbered

    def show(self, rows: list[Row], *, split: bool = False, numbered: bool = True) -> None:
        self.send(rows=rows, split=split, numbered=numbered)

    def texts(self) -> list[Any]:
        return [str(t) for r in self._props["rows"] for t in r[2::3]]


class Fields(Component, component="text_fields.js"):
    """``key  value`` pairs; a value with several lines is a block (numbered when it is code)."""

    def __init__(self) -> None:
        super().__init__()
        self._props["items"] = []

    def show(self, pairs: list[tuple[str, Any]]) -> None:
        self.send(items=[field_item(k, v) for k, v in pairs])

    def texts(self) -> list[Any]:
        return [x for it in self._props["items"] for x in (it["k"], it["v"])]


def text_rows(text: str, cls: str = "") -> list[Row]:
    """A text as numbered rows."""
    lines = text.splitlines()[:MAX_LINES] or [""]
    return [[cls, n, line] for n, line in enumerate(lines, 1)]


def field_item(key: str, value: Any) -> dict[str, Any]:
    """One field for :class:`Fields`: strings as they are, other values as indented JSON."""
    if isinstance(value, str):
        text = clip(value)
    else:
        text = clip(orjson.dumps(value, option=orjson.OPT_INDENT_2, default=str).decode())
    block = "\n" in text or len(text) > 160
    code = block and (key.rsplit(".", 1)[-1] in CODE_KEYS)
    return {"k": key, "v": text, "block": block, "num": code}


def flatten(fields: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """Nested dicts as dotted keys, so each string is shown as text (never inside JSON quotes)."""
    out: list[tuple[str, Any]] = []
    for k, v in fields.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and v and len(out) < 60:
            out += flatten(v, key + ".")
        else:
            out.append((key, v))
    return out
