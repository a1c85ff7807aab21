"""Build and run the viewer app: ``serve(paths, ...)`` is what ``walkback view`` calls."""

from __future__ import annotations

import importlib
import importlib.util
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nicegui import app, ui
from starlette.middleware.gzip import GZipMiddleware
from walkback.importers.archive.store import Archive
from walkback.importers.registry import split_part
from walkback.journal.errors import WalkbackError

from .pages import register_pages
from .security import HeadersMiddleware, HostMiddleware, allowed_hosts, needs_token, token_middleware
from .store import Analyzer, Loader, SessionStore
from .tuning import (
    CHECK_SECONDS,
    Collections,
    escape_pages_faster,
    prune_unconnected,
    remember_handler_shapes,
)

STATIC = Path(__file__).resolve().parent.parent / "static"
POLL_SECONDS = 0.25
"""How often the live follow asks whether a session's files grew (a stat each): a new step shows
within about this plus the page's 0.1 s check."""
NATIVE_HELP = (
    "--native needs pywebview and a web view it drives: `./run native` installs both; or "
    "apt install gir1.2-webkit2-4.1 libgirepository1.0-dev libcairo2-dev pkg-config gcc, "
    "then pip install 'walkback[native]' (or pip install 'pywebview[qt]'); "
    "or drop --native to use the browser"
)
NATIVE_NO_DISPLAY = (
    "--native needs a desktop session (neither DISPLAY nor WAYLAND_DISPLAY is set); "
    "drop --native to use the browser"
)
NATIVE_SHUTDOWN_SECONDS = 3
"""At most this long for the window's connections to close on Ctrl+C (or the server would wait for ever)."""


class ViewerError(WalkbackError):
    """The viewer cannot start as asked (missing extra, port in use, nothing to show)."""

    exit_code = 2


def native_available() -> bool:
    """pywebview and, on Linux, a toolkit it can drive: WebKitGTK through PyGObject, or Qt."""
    if importlib.util.find_spec("webview") is None:
        return False
    if sys.platform != "linux":
        return True  # pywebview's own web view (WebKit on macOS, Edge WebView2 on Windows)
    qt = importlib.util.find_spec("qtpy") is not None and any(
        importlib.util.find_spec(m) is not None for m in ("PyQt6", "PySide6", "PyQt5", "PySide2")
    )
    return qt or _webkit_gtk()


def _webkit_gtk() -> bool:
    """PyGObject finds WebKit2 4.1 or 4.0 (the versions pywebview's GTK backend asks for)."""
    try:
        gi = importlib.import_module("gi")
    except ImportError:
        return False
    for version in ("4.1", "4.0"):
        try:
            gi.require_version("WebKit2", version)
            return True
        except ValueError:  # that version's typelib is not installed (or another one was required)
            continue
    return False


def _native_signals() -> None:
    """Ctrl+C and SIGTERM stop the server, which then closes the window, with no traceback.

    uvicorn shuts down on either signal, then raises it again under the handler it found. For SIGTERM
    the default one would kill the process before multiprocessing's exit handler terminates the
    window's process, and the window would stay on screen with no server behind it: exit normally
    instead. SIGINT is ignored from here until uvicorn takes it: the window's process, spawned in
    between, inherits that, so a Ctrl+C (sent to the whole process group) is left to the server
    rather than ending the window's process with a KeyboardInterrupt traceback.
    """
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def build(
    store: SessionStore,
    *,
    token: str | None = None,
    poll: float | None = POLL_SECONDS,
    host: str = "127.0.0.1",
    archive: Archive | None = None,
) -> None:
    """Register middleware, static files, pages and the live-follow poller on NiceGUI's app
    (with an ``archive``, "/" is the home page over it).

    With a ``token`` every request needs it; without one (loopback) every request must name this
    machine in its ``Host`` (:class:`~.security.HostMiddleware`).
    """
    remember_handler_shapes()
    escape_pages_faster()
    app.add_middleware(HeadersMiddleware)
    if token:
        app.add_middleware(token_middleware(token))
    else:
        app.add_middleware(HostMiddleware, allowed=allowed_hosts(host))
    app.add_static_files("/static", STATIC)
    register_pages(store, archive)
    collector = Collections()
    app.on_startup(collector.start)  # first: its full collection walks the start-up heap, not a
    app.on_startup(store.start)  # session being read (and does not hold the loader up meanwhile)
    app.on_delete(collector.client_deleted)
    app.timer(CHECK_SECONDS, collector.tick)
    app.timer(CHECK_SECONDS, prune_unconnected)
    app.on_shutdown(store.stop)
    app.on_shutdown(collector.stop)
    if poll:
        app.timer(poll, store.poll)


def start_path(store: SessionStore) -> str:
    """Where the browser opens: the session itself when there is only one."""
    return f"/s/{next(iter(store.entries))}" if len(store.entries) == 1 else "/"


def start_url(host: str, port: int, path: str, token: str | None) -> str:
    shown = socket.gethostname() if host in ("0.0.0.0", "::") else host
    shown = f"[{shown}]" if ":" in shown else shown
    return f"http://{shown}:{port}{path}" + (f"?token={token}" if token else "")


def _check_port(host: str, port: int) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as e:
            raise ViewerError(
                f"cannot listen on {host}:{port} ({e.strerror}); choose another --port"
            ) from None


def make_store(
    paths: list[Path],
    *,
    workspace: Path | None = None,
    analyzer: Analyzer | None = None,
    loader: Loader | None = None,
    detect: Callable[[Path], Any] | None = None,
    expand: bool = True,
) -> SessionStore:
    """A store over ``paths`` (folders of runs expanded, unless ``expand`` is False: the archive's
    sessions, each a session already) using the importer registry by default."""
    from walkback import importers

    for p in paths:
        file, _ = importers.split_part(p)
        if not file.exists():
            raise ViewerError("no such file or directory", path=file)
    store = SessionStore(
        paths,
        loader=loader or importers.load_chunks,
        detect=(detect or importers.detect) if expand else None,
        workspace=workspace,
        analyzer=analyzer,
    )
    if not store.entries:
        raise ViewerError("no journal or known agent log found here", path=paths[0] if paths else None)
    return store


def serve(
    paths: list[Path],
    *,
    host: str = "127.0.0.1",
    port: int = 8080,
    open: bool = True,
    native: bool = False,
    workspace: Path | None = None,
    token: str | None = None,
    analyzer: Analyzer | None = None,
    announce: Callable[[str], None] | None = None,
    archive: Archive | None = None,
) -> None:
    """Serve the viewer until interrupted. A non-loopback ``host`` requires ``token``. With an
    ``archive``, "/" is its home page and every session it indexed (whose files are still here)
    can be opened.

    ``announce`` receives the URL to open (with the token) just before the server starts.
    """
    if native:
        if needs_token(host):  # the window opens without the token, which is only printed for a browser
            raise ViewerError(f"--native shows the viewer on this machine only: drop --host {host}")
        if not native_available():
            raise ViewerError(NATIVE_HELP)
        if sys.platform == "linux" and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
            raise ViewerError(NATIVE_NO_DISPLAY)
    if needs_token(host) and not token:
        raise ViewerError(f"host {host} is reachable from other machines: a token is required")
    if archive is not None:
        indexed = [Path(s["path"]) for s in archive.sessions(limit=10**9)]
        paths = [*paths, *(p for p in indexed if p.exists() or split_part(p)[0].exists())]
    store = make_store(paths, workspace=workspace, analyzer=analyzer, expand=archive is None)
    if not native:
        _check_port(host, port)
    build(store, token=token, host=host, archive=archive)
    path = "/" if archive is not None else start_path(store)
    if announce is not None:
        announce("a desktop window" if native else start_url(host, port, path, token))
    if native:
        _native_signals()
    ui.run(
        host=host,
        port=None if native else port,
        title="walkback",
        reload=False,
        show=(path + (f"?token={token}" if token else "")) if open and not native else False,
        native=native,
        window_size=(1400, 900) if native else None,
        show_welcome_message=False,
        favicon=STATIC / "favicon.svg",
        timeout_graceful_shutdown=NATIVE_SHUTDOWN_SECONDS if native else None,  # uvicorn: None, no limit
        gzip_middleware_factory=GZipMiddleware if needs_token(host) else None,  # loopback: no wire to save
    )
