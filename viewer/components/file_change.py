"""The file change panel: pre→post diff (unified or side by side) with hash badges.

Built once, when the first change is shown; a new change updates texts and badges in place, and
the diff is one :class:`~.text.Lines` element whose rows change (line numbers, blank lines kept,
text never HTML).
"""

from __future__ import annotations

from nicegui import ui
from walkback.journal.blobs import parse_hash
from walkback.journal.errors import BlobError
from walkback.timeline.changes import Badge, ChangeView, side_by_side, unified

from .text import Lines, Row

UNIFIED_CLASS = {"+": "wb-add", "-": "wb-del", "@": "wb-hunk", " ": "wb-ctx"}
SIDE_CLASS = {
    "equal": ("wb-ctx", "wb-ctx"),
    "replace": ("wb-del", "wb-add"),
    "delete": ("wb-del", "wb-ctx"),
    "insert": ("wb-ctx", "wb-add"),
    "skip": ("wb-hunk", "wb-hunk"),
}
MAX_BADGES = 6


def blob_href(sid: str, name: str | None) -> str | None:
    """Our download URL for a blob, by validated hash only."""
    try:
        return f"/blob/{sid}/{parse_hash(name or '')}"
    except BlobError:
        return None


def short_hash(name: str | None) -> str:
    if not name:
        return "—"
    return name[:23] + "…" if name.startswith("sha256:") else name[:80]


class HashLink:
    """``pre``/``post`` label, the short hash, and a download link when it names a blob."""

    def __init__(self, which: str) -> None:
        ui.label(which).classes("text-xs text-grey-7 q-ml-sm")
        self.hash = ui.label().classes("wb-hash")
        self.link = ui.link("download", "#", new_tab=True).classes("text-xs")

    def show(self, sid: str, name: str | None) -> None:
        self.hash.set_text(short_hash(name))
        href = blob_href(sid, name)
        self.link.set_visibility(href is not None)
        if href is not None:
            self.link.props["href"] = href


class FileChangePanel:
    """Shows one :class:`ChangeView`; remembers the diff mode across steps."""

    def __init__(self, sid: str) -> None:
        """Only the panel's place: its contents are built by the first :meth:`show` of a change
        (a page that opens on another step does not pay for them)."""
        self.sid = sid
        self.mode = "unified"
        self.view: ChangeView | None = None
        self.root = ui.column().classes("w-full gap-1").mark("file-change")
        self.root.set_visibility(False)
        self.built = False

    def _build(self) -> None:
        self.built = True
        with self.root:
            with ui.row().classes("items-center gap-2 w-full"):
                ui.icon("difference")
                self.path = ui.label().classes("font-mono font-bold wb-break")
                self.tool = ui.label().classes("text-grey-7")
                ui.space()
                ui.toggle(
                    {"unified": "unified", "split": "side by side"},
                    value=self.mode,
                    on_change=lambda e: self._set_mode(str(e.value)),
                ).props("dense no-caps size=sm").mark("diff-mode")
            with ui.row().classes("items-center gap-1 wb-hashes"):
                self.pre, self.post = HashLink("pre"), HashLink("post")
                ui.space()
                self.badges: list[tuple[ui.badge, ui.tooltip]] = []
                for _ in range(MAX_BADGES):
                    with ui.badge().classes("wb-hash-badge") as b:
                        tip = ui.tooltip()
                    self.badges.append((b, tip))
            self.note = ui.label().classes("text-grey-7")
            self.diff = Lines().classes("wb-diff w-full").mark("diff")

    def showing(self, call: int) -> bool:
        """Whether the change made by tool call ``call`` is what the panel shows already."""
        return self.view is not None and self.view.change.event == call

    def forget(self) -> None:
        """The session was reloaded: the next :meth:`show` redraws whatever it gets."""
        self.view = None

    def show(self, view: ChangeView | None) -> None:
        self.root.set_visibility(view is not None)
        if view is None or view is self.view:
            return
        if not self.built:
            self._build()
        self.view = view
        fc = view.change
        self.path.set_text(fc.path)
        self.tool.set_text(f"({fc.tool})")
        self.pre.show(self.sid, fc.pre)
        self.post.show(self.sid, fc.post)
        for k, (b, tip) in enumerate(self.badges):
            self._badge(b, tip, view.badges[k] if k < len(view.badges) else None)
        self._draw_diff()

    @staticmethod
    def _badge(b: ui.badge, tip: ui.tooltip, badge: Badge | None) -> None:
        b.set_visibility(badge is not None)
        if badge is None:
            return
        color = "positive" if badge.ok else ("negative" if badge.ok is False else "grey-6")
        b.set_text(badge.label)
        b.props(f"color={color}")
        if badge.ok is None:
            b.props("outline")
        else:
            b.props(remove="outline")
        tip.set_text(badge.detail or badge.label)

    def _set_mode(self, mode: str) -> None:
        if mode != self.mode:
            self.mode = mode
            if self.view is not None:
                self._draw_diff()

    def _draw_diff(self) -> None:
        view = self.view
        assert view is not None
        fc = view.change
        note = ""
        rows: list[Row] = []
        split = False
        if view.binary:
            note = "binary content: no text diff (download the blobs above)"
        elif view.too_large:
            note = "too large to diff here (download the blobs above)"
        elif fc.patch and (view.pre_text is None or view.post_text is None):
            rows = unified_rows([(ln[:1] if ln[:1] in "+-@" else " ", ln) for ln in fc.patch.splitlines()])
        elif view.pre_text is None and view.post_text is None:
            note = "content not recorded"
        elif self.mode == "unified":
            rows = unified_rows(unified(view))
            note = "" if rows else "no change in content"
        else:
            rows, split = split_rows(side_by_side(view)), True
        self.diff.show(rows, split=split)
        self.diff.set_visibility(bool(rows))
        self.note.set_text(note)
        self.note.set_visibility(bool(note))


def unified_rows(lines: list[tuple[str, str]]) -> list[Row]:
    """``(tag, line)`` pairs as rows numbered by the post image's lines (pre's for a removed line)."""
    rows: list[Row] = []
    old = new = 0
    for tag, text in lines:
        if tag == "@":
            old, new = _hunk_start(text)
            rows.append([UNIFIED_CLASS["@"], "", text])
            continue
        if tag == "-":
            old += 1
            rows.append([UNIFIED_CLASS["-"], old, text])
        elif tag == "+":
            new += 1
            rows.append([UNIFIED_CLASS["+"], new, text])
        else:
            old, new = old + 1, new + 1
            rows.append([UNIFIED_CLASS[" "], new, text])
    return rows


def _hunk_start(header: str) -> tuple[int, int]:
    """``@@ -12,5 +12,6 @@`` → the line numbers before the hunk's first line (11, 11)."""
    try:
        parts = header.split()
        old = int(parts[1].lstrip("-").split(",")[0])
        new = int(parts[2].lstrip("+").split(",")[0])
    except (IndexError, ValueError):
        return 0, 0
    return max(old - 1, 0), max(new - 1, 0)


def split_rows(rows: list[tuple[str, str | None, str | None]]) -> list[Row]:
    """Side-by-side rows numbered on each side; a folded run of unchanged lines spans both."""
    out: list[Row] = []
    left = right = 0
    for tag, a, b in rows:
        lcls, rcls = SIDE_CLASS[tag]
        if tag == "skip":
            words = (a or "").split()
            n = int(words[0]) if words and words[0].isdigit() else 0
            left, right = left + n, right + n
            out.append([lcls, "", a or "", rcls, "", ""])
            continue
        left += a is not None
        right += b is not None
        out.append(
            [
                lcls if a is not None else "wb-none",
                left if a is not None else "",
                a or "",
                rcls if b is not None else "wb-none",
                right if b is not None else "",
                b or "",
            ]
        )
    return out
