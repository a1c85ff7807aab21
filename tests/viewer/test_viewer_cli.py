"""``walkback view``: one-line errors, the native extra, loopback by default, token for other hosts."""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from sample_runs import build_run
from walkback.viewer.store import entry_id

from walkback.cli import cli

URL = re.compile(r"walkback viewer: (http://\S+)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def viewer_process(*args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``walkback view ARGS`` as a real process; yields it and the URL it printed."""
    env = {
        k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"
    }  # else NiceGUI acts as under test
    proc = subprocess.Popen(
        [sys.executable, "-m", "walkback", "view", "--no-open", *args],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        m = URL.search(line)
        assert m, f"no URL printed: {line!r}"
        url = m.group(1)
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(url.split("?")[0].rsplit("/s/", 1)[0] + "/favicon.ico", timeout=1)
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.stderr.read()
                assert time.monotonic() < deadline, "the viewer did not start"
                time.sleep(0.1)
        yield proc, url
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_missing_path_is_one_line_error(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["view", str(tmp_path / "nope"), "--no-open"])
    assert r.exit_code == 2
    assert r.output.strip() == f"Error: {tmp_path / 'nope'}: no such file or directory"


def test_folder_without_sessions_is_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    r = CliRunner().invoke(cli, ["view", str(tmp_path), "--no-open"])
    assert r.exit_code == 2 and "Traceback" not in r.output
    shown = CliRunner().invoke(cli, ["show", str(tmp_path)])
    assert (r.exit_code, r.output) == (shown.exit_code, shown.output)  # the same line as `show`
    assert r.output.startswith(f"Error: {tmp_path}: no journal or known agent log in this directory")


@pytest.mark.skipif(importlib.util.find_spec("webview") is not None, reason="pywebview is installed here")
def test_native_without_pywebview_says_how_to_install_it(tmp_path: Path) -> None:
    run = build_run(tmp_path)
    r = CliRunner().invoke(cli, ["view", str(run.dir), "--native"])
    assert r.exit_code == 2
    assert "pip install 'walkback[native]'" in r.output and "--native needs pywebview" in r.output


def test_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    run = build_run(tmp_path)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = CliRunner().invoke(cli, ["view", str(run.dir), "--no-open", "--port", str(port)])
    assert r.exit_code == 2 and f"cannot listen on 127.0.0.1:{port}" in r.output


def test_serves_the_session_on_loopback_without_a_token(tmp_path: Path) -> None:
    run = build_run(tmp_path)
    port = free_port()
    with viewer_process(str(run.dir), "--port", str(port)) as (_, url):
        assert url == f"http://127.0.0.1:{port}/s/{entry_id(run.dir)}"
        page = httpx.get(url, timeout=10)
        assert page.status_code == 200 and "Rename get_user_by_id" in page.text
        assert "default-src 'self'" in page.headers["content-security-policy"]
        listening = {c.laddr for c in _listeners(port)}
        assert listening and all(addr[0] == "127.0.0.1" for addr in listening)


@pytest.mark.skipif(sys.platform != "linux", reason="the C allocator's pages are given back on glibc")
def test_the_server_runs_on_the_c_allocator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTHONMALLOC", raising=False)
    with viewer_process(str(build_run(tmp_path).dir), "--port", str(free_port())) as (proc, _):
        environ = Path(f"/proc/{proc.pid}/environ").read_bytes().split(b"\0")
    assert b"PYTHONMALLOC=malloc" in environ  # walkback.viewer.tuning: what closed tabs freed goes back
    assert CliRunner().invoke(cli, ["view", str(tmp_path / "nope")]).exit_code == 2  # in-process: no exec


def test_other_hosts_need_the_printed_token(tmp_path: Path) -> None:
    run = build_run(tmp_path)
    port = free_port()
    with viewer_process(str(run.dir), "--host", "0.0.0.0", "--port", str(port)) as (_, url):
        token = url.split("?token=")[1]
        assert len(token) >= 24
        base = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{base}/", timeout=10).status_code == 401
        assert httpx.get(f"{base}/s/{entry_id(run.dir)}?token=guess", timeout=10).status_code == 401
        with httpx.Client(base_url=base, timeout=10) as client:
            r = client.get(f"/s/{entry_id(run.dir)}?token={token}")
            assert r.status_code == 303 and r.headers["location"] == f"/s/{entry_id(run.dir)}"
            assert client.get(r.headers["location"]).status_code == 200


CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
INSPECT_LOG = CORPUS / "inspect" / "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"


@pytest.mark.skipif(not INSPECT_LOG.is_file(), reason="no ../shared/corpus beside this checkout")
def test_one_session_of_a_log_by_its_address(tmp_path: Path) -> None:
    """``walkback view LOG#PART`` serves that sample, as ``walkback show LOG#PART`` reads it; a part
    the log does not hold is one line naming the ones it does."""
    address = f"{INSPECT_LOG}#3_epoch_1"
    port = free_port()
    with viewer_process(address, "--port", str(port)) as (_, url):
        assert url == f"http://127.0.0.1:{port}/s/{entry_id(Path(address))}"
        home = httpx.get(f"http://127.0.0.1:{port}/", timeout=10)  # one session: its page
        assert home.status_code == 307 and home.headers["location"] == url.split(str(port))[1]
        page = httpx.get(url, timeout=10)
        assert page.status_code == 200 and "3_epoch_1" in page.text and "4_epoch_1" not in page.text
    r = CliRunner().invoke(cli, ["view", f"{INSPECT_LOG}#nope", "--no-open"])
    assert r.exit_code == 2 and "Traceback" not in r.output
    said = r.output.strip()
    assert said.startswith(f"Error: {INSPECT_LOG}: no sample 'nope' in this log; it holds: 1_epoch_1")


def _listeners(port: int) -> list:
    """Sockets listening on ``port`` (from /proc/net, no extra tools)."""
    out = []
    for table, family in (("/proc/net/tcp", socket.AF_INET), ("/proc/net/tcp6", socket.AF_INET6)):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            addr, p = local.split(":")
            if state == "0A" and int(p, 16) == port:  # LISTEN
                if family == socket.AF_INET:
                    ip = socket.inet_ntoa(bytes.fromhex(addr)[::-1])
                else:
                    ip = "::"
                out.append(type("Conn", (), {"laddr": (ip, port)}))
    return out


FORGED = ("evil.example", "evil.example:80", "127.0.0.1.evil.example", "localhost.", "[::2]")


def upgrade_status(port: int, host: str) -> str:
    """The status line the server answers a websocket upgrade of the socket with, ``Host: host``."""
    request = (
        f"GET /_nicegui_ws/socket.io/?EIO=4&transport=websocket HTTP/1.1\r\nHost: {host}\r\n"
        "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(request.encode())
        return s.recv(4096).split(b"\r\n", 1)[0].decode()


def test_a_forged_host_gets_nothing_from_any_route(tmp_path: Path) -> None:
    run = build_run(tmp_path)
    port = free_port()
    with viewer_process(str(run.dir), "--port", str(port)) as (_, url):
        base = f"http://127.0.0.1:{port}"
        page = httpx.get(url, timeout=10)
        assert page.status_code == 200
        linked = set(re.findall(r'(?:src|href)="(/[^"]*)"', page.text))
        routes = {"/", f"/s/{entry_id(run.dir)}", f"/s/{entry_id(run.dir)}/step/1", "/favicon.ico", *linked}
        routes.add("/_nicegui_ws/socket.io/?EIO=4&transport=polling")
        assert {r.split("/")[1] for r in routes} >= {"_nicegui", "static", "s", "_nicegui_ws"}
        for host in FORGED:
            for route in sorted(routes):
                r = httpx.get(base + route, headers={"Host": host}, timeout=10)
                assert r.status_code == 421, (host, route, r.status_code)
                assert "Rename get_user_by_id" not in r.text
            assert upgrade_status(port, host).split()[1] == "403", host
        for host in ("127.0.0.1", f"127.0.0.1:{port}", f"localhost:{port}", "LOCALHOST", f"[::1]:{port}"):
            r = httpx.get(f"{base}/s/{entry_id(run.dir)}", headers={"Host": host}, timeout=10)
            assert r.status_code == 200 and "Rename get_user_by_id" in r.text, host
        assert upgrade_status(port, f"127.0.0.1:{port}").split()[1] == "101"


def test_a_token_server_answers_any_host_with_the_token_only(tmp_path: Path) -> None:
    run = build_run(tmp_path)
    port = free_port()
    with viewer_process(str(run.dir), "--host", "0.0.0.0", "--port", str(port)) as (_, url):
        token = url.split("?token=")[1]
        base = f"http://127.0.0.1:{port}"
        forged = {"Host": "evil.example"}
        assert httpx.get(f"{base}/s/{entry_id(run.dir)}", headers=forged, timeout=10).status_code == 401
        with httpx.Client(base_url=base, timeout=10, headers={"Host": "viewer.lan"}) as client:
            r = client.get(f"/s/{entry_id(run.dir)}?token={token}")
            assert r.status_code == 303 and client.get(r.headers["location"]).status_code == 200
