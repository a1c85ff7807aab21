"""``walkback view --native``: a real desktop window (pywebview on WebKitGTK) on a virtual X screen.

The test starts Xvfb, runs ``walkback view --native`` on a sample session, waits for its window and
for the page to be painted, and saves a screenshot of the window to
test-artifacts/viewer/native-window.png. It needs Xvfb, xdotool and the ``native`` extra with the web
view it drives; ``WALKBACK_NATIVE=1 ./run test tests/viewer/test_native_window.py`` installs them.
Without them the test is skipped, unless WALKBACK_NATIVE=1 asked for them: then it fails.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from PIL import Image, ImageGrab, features
from viewer_env import ARTIFACTS, ROOT

from walkback.cli import cli

SAMPLE = ROOT / "samples" / "rename-recovered"
SCREEN = (1440, 900)
SETTLE = 3.0
"""Seconds without a change on screen after which the page counts as rendered."""
INSTALL = "WALKBACK_NATIVE=1 ./run test tests/viewer/test_native_window.py installs it"


def _missing(what: str) -> None:
    reason = f"needs {what}: {INSTALL}"
    if os.environ.get("WALKBACK_NATIVE") == "1":  # asked for: a missing part is a failure, not a skip
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture
def display() -> Iterator[str]:
    """A fresh Xvfb screen on a display number it chose itself (``-displayfd``), stopped afterwards."""
    for tool in ("Xvfb", "xdotool"):
        if shutil.which(tool) is None:
            _missing(f"{tool} (apt install xvfb xdotool)")
    if not features.check("xcb"):
        _missing("Pillow with XCB screen grabbing")
    from walkback.viewer.app import native_available

    if not native_available():
        _missing("pywebview with WebKitGTK (the `native` extra)")
    read, write = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", f"{SCREEN[0]}x{SCREEN[1]}x24", "-nolisten", "tcp"],
        pass_fds=(write,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    try:
        poll = select.poll()  # not select.select: a long test run holds descriptors past 1024
        poll.register(read, select.POLLIN)
        number = os.read(read, 16).decode().strip() if poll.poll(15_000) else ""
        assert number.isdigit(), f"Xvfb did not report a display (exit code {xvfb.poll()})"
        yield f":{number}"
    finally:
        os.close(read)
        xvfb.terminate()
        try:
            xvfb.wait(timeout=10)
        except subprocess.TimeoutExpired:
            xvfb.kill()
            xvfb.wait()


def xdotool(display: str, *args: str) -> str:
    env = {**os.environ, "DISPLAY": display}
    return subprocess.run(["xdotool", *args], env=env, capture_output=True, text=True, timeout=10).stdout


def visible_windows(display: str, name: str) -> list[str]:
    return xdotool(display, "search", "--onlyvisible", "--name", name).split()


def geometry(display: str, window: str) -> dict[str, int]:
    """X, Y, WIDTH, HEIGHT of ``window`` on the screen."""
    lines = xdotool(display, "getwindowgeometry", "--shell", window).splitlines()
    return {k: int(v) for k, v in (line.split("=", 1) for line in lines if "=" in line) if k != "SCREEN"}


def painted(image: Image.Image) -> tuple[float, int]:
    """The share of pixels not of the most common colour (the background), and how many colours."""
    colours = image.getcolors(maxcolors=image.width * image.height) or []
    background = max(count for count, _ in colours)
    return 1 - background / (image.width * image.height), len(colours)


def test_native_with_another_host_is_one_line_error() -> None:
    r = CliRunner().invoke(cli, ["view", str(SAMPLE), "--native", "--host", "0.0.0.0"])
    assert r.exit_code == 2
    assert r.output == "Error: --native shows the viewer on this machine only: drop --host 0.0.0.0\n"


def test_native_without_a_display_is_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from walkback.viewer.app import native_available

    if not native_available():
        pytest.skip(f"needs pywebview with WebKitGTK (the `native` extra): {INSTALL}")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    r = CliRunner().invoke(cli, ["view", str(SAMPLE), "--native"])
    assert r.exit_code == 2 and r.output.startswith("Error: --native needs a desktop session"), r.output


@pytest.mark.slow
def test_native_window_shows_the_session(display: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_CURRENT_TEST", "WAYLAND_DISPLAY")}
    env |= {
        "DISPLAY": display,  # and the web view's caches and data in tmp_path, not in $HOME
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    log = tmp_path / "viewer.log"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "walkback", "view", "--native", str(SAMPLE)],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        # The window: mapped, named after the app, then after the session page once that has loaded.
        deadline = time.monotonic() + 60
        title, window = "", ""
        while SAMPLE.name not in title:
            assert proc.poll() is None, f"walkback view --native exited {proc.returncode}: {log.read_text()}"
            assert time.monotonic() < deadline, f"no window for the session (last title {title!r})"
            time.sleep(0.2)
            found = visible_windows(display, "walkback")
            if found:
                window = max(found, key=lambda w: geometry(display, w).get("WIDTH", 0))
                title = xdotool(display, "getwindowname", window).strip()
        box = geometry(display, window)
        assert box["WIDTH"] >= 1000 and box["HEIGHT"] >= 600, box  # window_size=(1400, 900)
        bbox = (box["X"], box["Y"], box["X"] + box["WIDTH"], box["Y"] + box["HEIGHT"])

        # The page painted: poll screenshots until one is not blank and nothing has changed for SETTLE
        # seconds (the chart, the icons and the step's details come in after the table), 45 s at most.
        deadline = time.monotonic() + 45
        shot, changed = ImageGrab.grab(bbox=bbox, xdisplay=display), time.monotonic()
        while True:
            time.sleep(0.5)
            previous, shot = shot, ImageGrab.grab(bbox=bbox, xdisplay=display)
            if previous.tobytes() != shot.tobytes():
                changed = time.monotonic()
            share, colours = painted(shot)
            settled = time.monotonic() - changed >= SETTLE
            if (share > 0.04 and colours > 256 and settled) or time.monotonic() > deadline:
                break
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot.save(ARTIFACTS / "native-window.png")

        assert "walkback" in title and SAMPLE.name in title, title  # the session page's own title
        low, high = zip(*shot.getextrema(), strict=True)
        assert max(high) - min(low) > 128, "the screenshot is uniform"
        assert share > 0.04, f"only {share:.1%} of the window is painted: {ARTIFACTS / 'native-window.png'}"
        assert colours > 256, f"{colours} colours: no text or chart drawn"
    finally:
        proc.send_signal(signal.SIGTERM)  # a clean shutdown: the server stops and closes its window
        try:
            code = proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise AssertionError(f"the viewer did not stop on SIGTERM: {log.read_text()}") from None
    assert code == 0, log.read_text()
    deadline = time.monotonic() + 10
    while visible_windows(display, "walkback"):
        assert time.monotonic() < deadline, "the window stayed open after the viewer stopped"
        time.sleep(0.2)
