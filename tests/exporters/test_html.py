"""The HTML replay: one sealed file that verifies offline and fails on any changed byte, carries
no secret in any of its bytes, is byte-identical twice, is at most 1.3x its bundle, and in a real
headless Chromium on file:// (network blocked) steps with the keyboard, keeps its deep link over a
reload, searches, makes no request and logs no error, with the viewer's XSS cases inert."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from secret_session import leaks, write_session
from walkback.exporters.html.seal import BUNDLE_OPEN, SEAL_OPEN
from walkback.journal.testing import synth_journal

from walkback.cli import cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "viewer"))
from sample_runs import XSS, build_run  # noqa: E402

CHROMEDRIVER = "/usr/bin/chromedriver"


def run(*args: str | Path, env: dict[str, str] | None = None) -> Any:
    return CliRunner(env=env).invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("keys")
    assert run("keygen", "-o", d / "k").exit_code == 0
    return d / "k", d / "k.pub"


@pytest.fixture(scope="module")
def replay(tmp_path_factory: pytest.TempPathFactory, keys: tuple[Path, Path]) -> Path:
    """The replay of a crashed, recovered run with a subagent, approvals, diffs and XSS payloads."""
    d = tmp_path_factory.mktemp("replay")
    r = build_run(d, xss=True, recovered=True)
    out = d / "review.html"
    made = run("export", "html", r.dir, "-o", out, "--key", keys[0])
    assert made.exit_code == 0, made.output
    return out


def verify(page: Path, pub: Path) -> Any:
    return run("verify", page, "--key", pub, "--json")


def test_the_replay_verifies_offline(replay: Path, keys: tuple[Path, Path]) -> None:
    ok = verify(replay, keys[1])
    assert ok.exit_code == 0, ok.stdout
    names = [c["name"] for c in json.loads(ok.stdout)["checks"]]
    assert {"signature", "merkle", "page signature", "page"} <= set(names)


@pytest.mark.parametrize("where", ["title", "style", "view", "bundle", "seal", "script", "end"])
def test_one_changed_byte_anywhere_fails_verify(
    where: str, replay: Path, keys: tuple[Path, Path], tmp_path: Path
) -> None:
    data = bytearray(replay.read_bytes())
    at = {
        "title": data.index(b"<title>") + 20,
        "style": data.index(b"<style>") + 40,
        "view": data.index(b'id="wb-view"') + 60,
        "bundle": data.index(BUNDLE_OPEN) + len(BUNDLE_OPEN) + 400,
        "seal": data.index(SEAL_OPEN) + len(SEAL_OPEN) + 120,
        "script": data.rindex(b"<script>") + 200,
        "end": len(data) - 3,
    }[where]
    data[at] = ord("A") if data[at] != ord("A") else ord("B")
    bad = tmp_path / "t.html"
    bad.write_bytes(bytes(data))
    assert verify(bad, keys[1]).exit_code == 1


def test_an_unsigned_replay_does_not_verify(tmp_path: Path, keys: tuple[Path, Path]) -> None:
    r = build_run(tmp_path)
    made = run("export", "html", r.dir, "-o", tmp_path / "u.html")
    assert made.exit_code == 0 and "unsigned" in made.stderr
    assert verify(tmp_path / "u.html", keys[1]).exit_code == 1


@pytest.mark.parametrize("slot", [b"not base64!", b"AAAA", b""])
def test_a_bundle_slot_that_does_not_unpack(
    slot: bytes, replay: Path, keys: tuple[Path, Path], tmp_path: Path
) -> None:
    """Sealed: the slot changed since the seal, a failed check (exit 1). Unsealed: nothing to
    check it against, one line saying the slot cannot be unpacked (exit 2)."""
    data = replay.read_bytes()
    a = data.index(BUNDLE_OPEN) + len(BUNDLE_OPEN)
    b = data.index(b"</script>", a)
    sealed = tmp_path / "sealed.html"
    sealed.write_bytes(data[:a] + slot + data[b:])
    found = verify(sealed, keys[1])
    assert found.exit_code == 1, found.output
    checks = {c["name"]: c for c in json.loads(found.stdout)["checks"]}
    assert not checks["page"]["ok"] and "bundle changed" in checks["page"]["reason"]
    assert not checks["bundle"]["ok"]
    s0 = data.index(SEAL_OPEN) + len(SEAL_OPEN)
    unsealed = tmp_path / "unsealed.html"
    unsealed.write_bytes(data[:a] + slot + data[b:s0] + data[data.index(b"</script>", s0) :])
    refused = run("verify", unsealed, "--key", keys[1])
    assert refused.exit_code == 2
    assert refused.stderr.count("\n") == 1 and "unsealed.html" in refused.stderr
    assert "bundle slot" in refused.stderr and "Traceback" not in refused.output


def test_no_secret_in_any_byte_and_the_report_on_stderr(tmp_path: Path, keys: tuple[Path, Path]) -> None:
    session = write_session(tmp_path)
    made = run("export", "html", session, "-o", tmp_path / "s.html", "--key", keys[0])
    assert made.exit_code == 0, made.output
    assert "redacted 6 lines:" in made.stderr
    assert leaks((tmp_path / "s.html").read_bytes()) == []
    assert verify(tmp_path / "s.html", keys[1]).exit_code == 0


def test_byte_identical_twice_and_at_most_1_3x_its_bundle(tmp_path: Path, keys: tuple[Path, Path]) -> None:
    synth_journal(tmp_path / "journal.jsonl", 3000)
    env = {"SOURCE_DATE_EPOCH": "1700000000"}
    for out in ("a.html", "b.html"):
        assert (
            run(
                "export", "html", tmp_path / "journal.jsonl", "-o", tmp_path / out, "--key", keys[0], env=env
            ).exit_code
            == 0
        )
    assert (tmp_path / "a.html").read_bytes() == (tmp_path / "b.html").read_bytes()
    run("export", "bundle", tmp_path / "journal.jsonl", "-o", tmp_path / "b.json", "--key", keys[0], env=env)
    ratio = (tmp_path / "a.html").stat().st_size / (tmp_path / "b.json").stat().st_size
    assert ratio <= 1.3, ratio


# -- in a real browser --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    if not Path(CHROMEDRIVER).exists():
        pytest.skip("chromedriver is not installed")
    os.environ.setdefault("SE_AVOID_STATS", "true")
    o = webdriver.ChromeOptions()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,900"):
        o.add_argument(a)
    o.add_argument("--proxy-server=http://127.0.0.1:9")  # any request that leaves the page fails
    o.add_argument("--proxy-bypass-list=<-loopback>")
    o.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    d = webdriver.Chrome(service=Service(CHROMEDRIVER), options=o)
    d.execute_cdp_cmd("Network.enable", {})
    yield d
    d.quit()


def _open(d: Any, url: str) -> None:
    d.get(url)
    start = time.monotonic()
    while not d.execute_script("return document.body.classList.contains('wb-ready')"):
        assert time.monotonic() - start < 10, "the replay did not render"
        time.sleep(0.02)


def _title(d: Any) -> str:
    return str(d.execute_script("return document.querySelector('#wb-step .wb-title').textContent"))


def _key(d: Any, key: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(d).send_keys(key).perform()


def test_in_chromium_steps_links_searches_and_stays_offline(browser: Any, replay: Path) -> None:
    d = browser
    d.get_log("browser"), d.get_log("performance")  # start clean
    url = replay.as_uri()
    _open(d, url + "#step=3")
    assert _title(d) == "Step 3"
    _key(d, "j")
    assert _title(d) == "Step 4" and d.execute_script("return location.hash") == "#step=4"
    _key(d, "k")
    _key(d, "k")
    assert _title(d) == "Step 2"
    _key(d, "g")
    _key(d, "7\n")
    assert _title(d) == "Step 7"
    d.refresh()  # the deep link survives a reload
    _open(d, d.current_url)
    assert _title(d) == "Step 7"
    # the raw record comes from the bundle, unpacked after the first step was drawn
    start = time.monotonic()
    raw = ""
    while "still reading" in raw or not raw:
        assert time.monotonic() - start < 10, "the bundle was never unpacked"
        time.sleep(0.05)
        raw = d.execute_script(
            "const r = document.querySelector('#wb-step .wb-raw'); r.open = true;"
            "return r.querySelector('pre').textContent"
        )
    record = json.loads(raw)
    assert isinstance(record, dict) and ("lsn" in record or "type" in record), raw[:200]
    d.find_element("id", "wb-search").send_keys("svg onload")
    time.sleep(0.4)
    found = d.find_element("id", "wb-found").text
    assert found.endswith("steps match") and not found.startswith("0 ")
    # the model's markup stayed text: no handler ran, no element was made of it
    assert d.execute_script("return window.__xss === undefined")
    assert d.execute_script("return document.querySelectorAll('img, svg, b, i[onclick]').length") == 0
    assert XSS["task"] in d.find_element("css selector", ".wb-task").text
    errors = [e for e in d.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert errors == []
    sent = [json.loads(e["message"])["message"] for e in d.get_log("performance")]
    urls = {m["params"]["request"]["url"] for m in sent if m["method"] == "Network.requestWillBeSent"}
    assert urls and all(u.startswith(url) for u in urls), urls
