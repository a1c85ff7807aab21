"""What the browser tests read and do on a session page: the step the detail shows, and keys."""

from __future__ import annotations

import time


def detail_step(screen) -> int:
    """The step number in the detail's title ("Step N")."""
    return int(screen.find_by_css(".wb-step-title").text.split()[1])


def wait_step(screen, n: int, timeout: float = 8.0) -> None:
    """Wait until the detail shows step ``n``; fail if it does not within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if detail_step(screen) == n:
                return
        except Exception:  # noqa: BLE001 - the panel is being redrawn
            pass
        time.sleep(0.05)
    assert detail_step(screen) == n


def press(screen, key: str) -> None:
    screen.find_by_css("body").send_keys(key)
