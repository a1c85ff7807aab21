"""Fixtures for the viewer: sample runs, NiceGUI's simulated user, and a real headless Chromium.

NiceGUI's pytest plugin cannot be enabled from a non-root conftest (``pytest_plugins`` is refused
there) and enabling it for the whole suite would import selenium everywhere, so these fixtures
are built from the public pieces of ``nicegui.testing`` instead: ``user_simulation`` for the
``user`` fixture, ``Screen`` with Debian's chromium/chromedriver for the ``screen`` fixture.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from sample_runs import Run, build_run
from viewer_env import ARTIFACTS, MAIN, configure

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


@pytest.fixture(scope="session", autouse=True)
def _nicegui_storage() -> Iterator[None]:
    """Keep NiceGUI's storage out of the repository (what its plugin's pytest_configure does)."""
    from nicegui import app
    from nicegui.storage import Storage

    old = Storage.path
    Storage.path = Path(tempfile.mkdtemp(prefix="wb-nicegui-storage-")).resolve()
    app.storage = Storage()
    yield
    shutil.rmtree(Storage.path, ignore_errors=True)
    Storage.path = old


@pytest.fixture
def sample(tmp_path: Path) -> Run:
    return build_run(tmp_path, recovered=True, torn=True)


@pytest.fixture
def viewer(caplog: pytest.LogCaptureFixture) -> Iterator[Callable[..., Any]]:
    """``async with viewer([paths], **options) as user:`` NiceGUI's simulated user on app_main.py."""
    from nicegui.testing import user_simulation

    @asynccontextmanager
    async def open_viewer(paths: list[Path], **options: Any) -> AsyncIterator[Any]:
        configure(paths, **options)
        failure: BaseException | None = None
        async with user_simulation(main_file=MAIN) as u:
            try:
                yield u
            except BaseException as e:  # noqa: BLE001 - shut NiceGUI down cleanly first, then re-raise
                failure = e
        if failure is not None:
            raise failure
        errors = [r for r in caplog.get_records("call") if r.levelname == "ERROR" and not _shutdown_race(r)]
        if errors:
            pytest.fail("unexpected ERROR logs: " + "; ".join(r.getMessage() for r in errors), pytrace=False)

    yield open_viewer
    os.environ.pop("WALKBACK_VIEWER_TEST", None)


def _shutdown_race(record: logging.LogRecord) -> bool:
    """NiceGUI's outbox loop waits with ``asyncio.wait_for``, which on Python 3.11 can swallow the
    cancellation sent at shutdown; teardown then logs this after 2 s. Not a viewer error."""
    return record.name == "nicegui" and record.getMessage().startswith("Could not cancel")


# -- real browser -----------------------------------------------------------------------------
@pytest.fixture(scope="session")
def chrome() -> Iterator[Any]:
    """Debian's chromium via its chromedriver, headless, no network beyond localhost."""
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.skip("chromium/chromedriver not installed (./run test installs them)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-extensions",
        "--disable-sync",
        "--disable-default-apps",
        "--no-first-run",
        "--disable-component-update",
        "--enable-unsafe-swiftshader",
        "--window-size=1500,1100",
    ):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.implicitly_wait(4)
    driver.set_page_load_timeout(15)
    yield driver
    driver.quit()


@pytest.fixture
def screen(chrome: Any, caplog: pytest.LogCaptureFixture, request: pytest.FixtureRequest) -> Iterator[Any]:
    """NiceGUI's Screen on app_main.py in a server thread, driving the session's Chromium."""
    from nicegui import helpers
    from nicegui.testing import Screen
    from nicegui.testing.general import nicegui_reset_globals

    port = helpers.find_free_port()
    Screen.PORT = port
    Screen.SCREENSHOT_DIR = ARTIFACTS
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    os.environ["NICEGUI_SCREEN_TEST_PORT"] = str(port)
    with nicegui_reset_globals():
        chrome.get("about:blank")
        chrome.delete_all_cookies()
        chrome.get_log("browser")
        s = Screen(chrome, caplog, None)
        s.url = f"http://127.0.0.1:{port}"
        s.ui_run_kwargs = {"port": port, "show": False, "reload": False}

        def start() -> None:
            import runpy
            import threading

            s.server_thread = threading.Thread(target=lambda: runpy.run_path(str(MAIN), run_name="__main__"))
            s.server_thread.start()

        s.start_server = start  # type: ignore[method-assign]
        try:
            yield s
            failed = getattr(request.node, "rep_call", None) is not None and request.node.rep_call.failed
            if s.is_open:
                s.shot(request.node.name, failed=failed)
                severe = [
                    e
                    for e in chrome.get_log("browser")
                    if e.get("level") == "SEVERE"
                    and not any(ok in e.get("message", "") for ok in s.allowed_js_errors)
                ]
                if severe:
                    pytest.fail(f"JavaScript console errors: {severe}", pytrace=False)
        finally:
            os.environ.pop("NICEGUI_SCREEN_TEST_PORT", None)
            s.stop_server()


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Iterator[None]:
    outcome = yield
    rep = outcome.get_result()  # type: ignore[attr-defined]
    setattr(item, f"rep_{rep.when}", rep)
