"""The HTML replay in a real headless Firefox (ESR, driven over WebDriver BiDi) on file://, every
proxy pointed at a closed port: it shows its first step, steps with j/k/g/space, keeps its deep
link over a reload, searches, makes no request that leaves the file and logs no error (Firefox
logs a CSP refusal as one), the viewer's XSS cases stay inert, and a session with planted secrets
shows none of them, even in the raw records unpacked from its bundle. Skipped without
firefox-esr (``./run test`` installs it as root), failed under CI=true."""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from firefox_bidi import FIREFOX, BidiError, Firefox
from secret_session import leaks, write_session

from walkback.cli import cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "viewer"))
from sample_runs import XSS, build_run  # noqa: E402


@pytest.fixture(scope="module")
def firefox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Firefox]:
    if shutil.which(FIREFOX) is None:
        how = f"{FIREFOX} is not installed: apt-get install {FIREFOX} (./run test does as root)"
        if os.environ.get("CI") == "true":
            pytest.fail(how)
        pytest.skip(how)
    ff = Firefox(tmp_path_factory.mktemp("firefox"))
    yield ff
    ff.close()


def export(session: Path, out: Path) -> Path:
    made = CliRunner().invoke(cli, ["export", "html", str(session), "-o", str(out)], catch_exceptions=False)
    assert made.exit_code == 0, made.output
    return out


def until(what: str, ok: Callable[[], Any], timeout: float = 10) -> Any:
    """``ok()`` once it is true (polled), or a failure naming ``what``."""
    start = time.monotonic()
    while not (got := ok()):
        assert time.monotonic() - start < timeout, f"{what} did not happen in {timeout} s"
        time.sleep(0.02)
    return got


def ready(ff: Firefox) -> None:
    until("the first step", lambda: ff.js("document.body.classList.contains('wb-ready')"))


def title(ff: Firefox) -> str:
    return str(ff.js("document.querySelector('#wb-step .wb-title').textContent"))


def raw_record(ff: Firefox) -> str:
    """The shown step's raw record, once the bundle is unpacked (after the first step is drawn)."""
    return str(
        until(
            "the bundle's unpacking",
            lambda: (
                (
                    t := ff.js(
                        "(() => { const r = document.querySelector('#wb-step .wb-raw'); r.open = true;"
                        " return r.querySelector('pre').textContent; })()"
                    )
                )
                and "still reading" not in t
                and t
            ),
        )
    )


@pytest.fixture(scope="module")
def replay(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The replay of a crashed, recovered run with a subagent, approvals, diffs and XSS payloads."""
    d = tmp_path_factory.mktemp("replay")
    return export(build_run(d, xss=True, recovered=True).dir, d / "review.html")


def test_in_firefox_steps_links_searches_and_stays_offline(firefox: Firefox, replay: Path) -> None:
    ff = firefox
    url = replay.as_uri()
    ff.take_events("log.entryAdded"), ff.take_events("network.beforeRequestSent")  # start clean
    ff.open(url)
    ready(ff)
    assert title(ff) == "Step 1"
    ff.keys("j")
    assert title(ff) == "Step 2" and ff.js("location.hash") == "#step=2"
    ff.keys("jk")
    assert title(ff) == "Step 2"
    ff.keys("g7\n")
    assert title(ff) == "Step 7"
    ff.keys(" ")  # space plays, one step each 0.7 s, until space again
    until("a played step", lambda: title(ff) == "Step 8", timeout=3)
    ff.keys(" ")
    assert ff.js("document.getElementById('wb-play').textContent") == "play"
    stopped = title(ff)
    ff.reload()  # the deep link survives a reload
    ready(ff)
    assert title(ff) == stopped and ff.js("location.hash") == f"#step={stopped.split()[1]}"
    ff.open(url + "#step=3")
    ready(ff)
    assert title(ff) == "Step 3"
    record = raw_record(ff)
    assert record.startswith("{") and ('"lsn"' in record or '"type"' in record), record[:200]
    ff.js("document.getElementById('wb-search').focus()")
    ff.keys("svg onload")
    found = until("the search", lambda: ff.js("document.getElementById('wb-found').textContent"))
    assert found.endswith("steps match") and not found.startswith("0 "), found
    # the model's markup stayed text: no handler ran, no element was made of it
    assert ff.js("window.__xss === undefined")
    assert ff.js("document.querySelectorAll('img, svg, b, i[onclick]').length") == 0
    assert XSS["task"] in ff.js("document.querySelector('.wb-task').textContent")
    errors = [e for e in ff.take_events("log.entryAdded") if e["level"] in ("error", "warn")]
    assert errors == []
    urls = {e["request"]["url"] for e in ff.take_events("network.beforeRequestSent")}
    # Firefox does not report the file:// load itself, and reports a font of its own as data:
    assert all(u.startswith(url) or u.startswith("data:") for u in urls), urls


def test_firefox_sees_and_refuses_what_would_leave(firefox: Firefox, replay: Path) -> None:
    """The checks above are not empty by blindness: the page's CSP refuses a fetch and Firefox logs
    it as an error; a request that does go out is seen, and the closed proxy port refuses it."""
    ff = firefox
    ff.open(replay.as_uri())
    ready(ff)
    ff.take_events("log.entryAdded"), ff.take_events("network.beforeRequestSent")
    assert "NetworkError" in ff.js("fetch('https://example.com/').then(() => 'sent', (e) => String(e))")
    logged = [e["text"] for e in ff.take_events("log.entryAdded") if e["level"] == "error"]
    assert any("connect-src" in t and "https://example.com/" in t for t in logged), logged
    with pytest.raises(BidiError, match="PROXY_CONNECTION_REFUSED"):
        ff.open("http://example.com/")
    urls = {e["request"]["url"] for e in ff.take_events("network.beforeRequestSent")}
    assert urls == {"http://example.com/"}, urls


def test_in_firefox_a_session_with_secrets_shows_none(firefox: Firefox, tmp_path: Path) -> None:
    ff = firefox
    page = export(write_session(tmp_path), tmp_path / "s.html")
    ff.open(page.as_uri())
    ready(ff)
    shown: list[str] = []
    steps: list[str] = []
    while (now := title(ff)) not in steps:  # j through to the last step, where j stays put
        steps.append(now)
        shown += [raw_record(ff), ff.js("document.body.innerText")]
        ff.keys("j")
    assert len(steps) > 3, steps
    text = "\n".join(shown)
    assert "[redacted" in text
    assert leaks(text.encode()) == []
