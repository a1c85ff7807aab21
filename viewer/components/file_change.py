"""The file change panel: pre→post diff (unified or side by side) with hash badges."""

from __future__ import annotations

from itertools import groupby

from nicegui import ui

from journal.blobs import parse_hash
from journal.errors import BlobError
from timeline.changes import Badge, ChangeView, side_by_side, unified

UNIFIED_CLASS = {"+": "wb-add", "-": "wb-del", "@": "wb-hunk", " ": "wb-ctx"}
SIDE_CLASS = {"equal": "wb-ctx", "replace": "wb-chg", "delete": "wb-del", "insert": "wb-add", "skip": "wb-hunk"}


def badge(b: Badge) -> None:
    color = "positive" if b.ok else ("negative" if b.ok is False else "grey-6")
    with ui.badge(b.label, color=color).classes("wb-hash-badge").props("outline" if b.ok is None else ""):
        if b.detail:
            ui.tooltip(b.detail)


def blob_link(sid: str, name: str | None) -> None:
    """A download link for a blob, by hash only (the route re-validates it)."""
    if not name:
        return
    try:
        hexd = parse_hash(name)
    except BlobError:
        ui.label(name[:80]).classes("wb-hash")
        return
    ui.label(f"sha256:{hexd[:16]}…").classes("wb-hash")
    ui.link("download", f"/blob/{sid}/{hexd}", new_tab=True).classes("text-xs")


class FileChangePanel:
    """Shows one :class:`ChangeView`; remembers the diff mode across steps."""

    def __init__(self, sid: str) -> None:
        self.sid = sid
        self.mode = "unified"
        self.view: ChangeView | None = None
        self.root = ui.column().classes("w-full gap-1").mark("file-change")

    def show(self, view: ChangeView | None) -> None:
        self.view = view
        self.root.clear()
        if view is None:
            self.root.set_visibility(False)
            return
        self.root.set_visibility(True)
        with self.root:
            self._build(view)

    def _set_mode(self, mode: str) -> None:
        if mode != self.mode:
            self.mode = mode
            self.show(self.view)

    def _build(self, view: ChangeView) -> None:
        fc = view.change
        with ui.row().classes("items-center gap-2 w-full"):
            ui.icon("difference")
            ui.label(fc.path).classes("font-mono font-bold wb-break")
            ui.label(f"({fc.tool})").classes("text-grey-7")
            ui.space()
            ui.toggle({"unified": "unified", "split": "side by side"}, value=self.mode,
                      on_change=lambda e: self._set_mode(str(e.value))).props("dense no-caps size=sm").mark("diff-mode")
        with ui.row().classes("items-center gap-1 wb-hashes"):
            ui.label("pre").classes("text-xs text-grey-7")
            blob_link(self.sid, fc.pre)
            ui.label("post").classes("text-xs text-grey-7 q-ml-md")
            blob_link(self.sid, fc.post)
        with ui.row().classes("gap-1"):
            for b in view.badges:
                badge(b)
        if view.binary:
            ui.label("binary content: no text diff (download the blobs above)").classes("text-grey-7")
            return
        if view.too_large:
            ui.label("too large to diff here (download the blobs above)").classes("text-grey-7")
            return
        if fc.patch and (view.pre_text is None or view.post_text is None):
            self._patch(fc.patch)
            return
        if view.pre_text is None and view.post_text is None:
            ui.label("content not recorded").classes("text-grey-7")
            return
        if self.mode == "unified":
            self._unified(view)
        else:
            self._side_by_side(view)

    def _patch(self, patch: str) -> None:
        lines = [(ln[:1] if ln[:1] in "+-@" else " ", ln) for ln in patch.splitlines()]
        self._runs(lines)

    def _unified(self, view: ChangeView) -> None:
        lines = unified(view)
        if not lines:
            ui.label("no change in content").classes("text-grey-7")
            return
        self._runs(lines)

    def _runs(self, lines: list[tuple[str, str]]) -> None:
        with ui.column().classes("wb-diff w-full gap-0").mark("diff"):
            for tag, group in groupby(lines, key=lambda t: t[0]):
                ui.label("\n".join(text for _, text in group)).classes(f"wb-pre {UNIFIED_CLASS[tag]}")

    def _side_by_side(self, view: ChangeView) -> None:
        rows = side_by_side(view)
        with ui.grid(columns=2).classes("wb-diff wb-split w-full gap-0").mark("diff"):
            for tag, group in groupby(rows, key=lambda r: r[0]):
                items = list(group)
                cls = SIDE_CLASS[tag]
                if tag == "skip":
                    ui.label(items[0][1]).classes(f"wb-pre {cls} col-span-2")
                    continue
                left_cls = "wb-del" if tag in ("replace", "delete") else cls
                right_cls = "wb-add" if tag in ("replace", "insert") else cls
                ui.label("\n".join(r[1] for r in items)).classes(f"wb-pre {left_cls}")
                ui.label("\n".join(r[2] for r in items)).classes(f"wb-pre {right_cls}")
