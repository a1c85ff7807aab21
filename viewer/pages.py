"""Routes: the session list, the session page (with a deep link per step) and blobs by hash."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from fastapi import Request
from fastapi.responses import PlainTextResponse, RedirectResponse, Response
from nicegui import app, ui
from walkback.importers.archive.store import Archive
from walkback.journal.blobs import parse_hash
from walkback.journal.errors import BlobError
from walkback.timeline.query import Query

from .components.archive_home import ArchiveHome
from .components.session_list import SessionList
from .session_page import SessionPage, parse_step
from .store import PAGE, SessionStore

HEAD = '<link rel="stylesheet" href="/static/viewer.css"><script src="/static/viewer.js"></script>'


@contextmanager
def frame(title: str) -> Iterator[ui.row]:
    """The common page frame: our CSS/JS, a one-line top bar (yielded: a page puts its header in it)
    and the page title (always plain text)."""
    ui.add_head_html(HEAD)
    ui.page_title(f"{title} · walkback" if title else "walkback")
    with ui.header().classes("wb-topbar items-center py-0 px-3 no-wrap"):
        ui.link("walkback", "/").classes("text-white font-bold no-underline")
        top = ui.row().classes("items-center gap-2 no-wrap grow min-w-0")
    with ui.column().classes("w-full px-3 py-1 gap-1 wb-body"):
        yield top


def register_pages(store: SessionStore, archive: Archive | None = None) -> None:
    @ui.page("/")
    def session_list(request: Request) -> RedirectResponse | None:
        if archive is not None:  # walkback view --archive: the home page over every indexed session
            with frame("archive"):
                ArchiveHome(archive, dict(request.query_params)).build()
            return None
        if len(store.entries) == 1:  # one session (e.g. the native window, which always opens "/")
            return RedirectResponse(f"/s/{next(iter(store.entries))}")
        with frame("sessions"):
            SessionList(store)
        return None

    @ui.page("/s/{sid}")
    @ui.page("/s/{sid}/step/{n}")
    def session_page(sid: str, request: Request, n: str | None = None) -> None:
        entry = store.get(sid)
        with frame(entry.label if entry else "not found") as top:
            if entry is None:
                ui.label("no such session in this viewer").mark("not-found")
                ui.link("all sessions", "/")
                return
            if entry.session is None and not entry.error:
                store.request(entry, priority=PAGE)
            index = parse_step(n)
            if n is not None and index is None:
                ui.notify(f"'{n[:20]}' is not a step number; showing step 1", type="warning")
            SessionPage(store, entry, index, Query.from_params(dict(request.query_params)), top).build()

    @app.get("/blob/{sid}/{name}")
    def blob(sid: str, name: str) -> Response:
        """A blob of that session's store, by its sha256 only; anything else is a 404."""
        entry = store.get(sid)
        try:
            hexd = parse_hash(name)
        except BlobError:
            return PlainTextResponse("not a sha256 blob name", status_code=404)
        data = entry.session.blob("sha256:" + hexd) if entry and entry.session else None
        if data is None:
            return PlainTextResponse("no such blob in this session", status_code=404)
        return Response(
            data,
            media_type="application/octet-stream",
            headers={"Content-Disposition": f'attachment; filename="{hexd}.blob"'},
        )
