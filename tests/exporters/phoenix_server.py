"""Arize Phoenix, the real OTLP backend of ``test_otlp_push.py``, started ahead of its tests.

Phoenix is installed from PyPI into its own venv (kept between runs under
``~/.cache/walkback/tests/``, or ``$WALKBACK_PHOENIX_VENV``) and started on 127.0.0.1. It takes
about a minute to start on 2 cores (a long install the first time), mostly on one core while
pytest runs on the other, so ``conftest.py`` starts it in a thread as soon as the collected tests
include the push tests, and the tests wait for it (:meth:`Phoenix.url`).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import pytest

HERE = Path(__file__).resolve().parent
VENV = Path(os.environ.get("WALKBACK_PHOENIX_VENV", Path.home() / ".cache/walkback/tests/phoenix-venv"))
INSTALL_TIMEOUT = 1200
START_TIMEOUT = 240


class Unavailable(Exception):
    """Phoenix could not be installed or started here: its tests skip, saying why."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Phoenix:
    """A Phoenix server being installed and started in a thread."""

    def __init__(self) -> None:
        self.work = Path(tempfile.mkdtemp(prefix="wb-phoenix-"))
        self.proc: subprocess.Popen[bytes] | None = None
        self._url = ""
        self._problem = ""
        self._thread = threading.Thread(target=self._run, name="phoenix", daemon=True)
        self._thread.start()

    def url(self) -> str:
        """The server's base URL once it answers (skips the test if it never will)."""
        self._thread.join()
        if self._problem:
            pytest.skip(self._problem)
        return self._url

    def stop(self) -> None:
        self._thread.join()
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.work, ignore_errors=True)

    def _run(self) -> None:
        try:
            self._url = self._start(_installed())
        except Unavailable as e:
            self._problem = str(e)

    def _start(self, python: Path) -> str:
        port = free_port()
        env = {
            **os.environ,
            "PHOENIX_WORKING_DIR": str(self.work),
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(port),
            "PHOENIX_GRPC_PORT": str(free_port()),
            "PHOENIX_TELEMETRY_ENABLED": "false",
        }
        log = self.work / "phoenix.log"
        with open(log, "wb") as out:
            self.proc = subprocess.Popen(
                [str(python), str(HERE / "phoenix_serve.py")],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                raise Unavailable(f"Phoenix exited at start: {log.read_bytes()[-300:]!r}")
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    return url
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise Unavailable("Phoenix did not start in time")
            time.sleep(0.5)


def _installed() -> Path:
    """Phoenix's interpreter, installing Phoenix into its venv first if it is not there yet."""
    python = VENV / "bin" / "python"
    ready = VENV / ".walkback-ready"
    if not ready.exists():
        steps = [
            [sys.executable, "-m", "venv", "--clear", str(VENV)],
            [str(python), "-m", "pip", "install", "-q", "arize-phoenix"],
        ]
        for step in steps:
            try:
                run = subprocess.run(step, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
            except (OSError, subprocess.TimeoutExpired) as e:
                raise Unavailable(f"Arize Phoenix could not be installed: {e}") from None
            if run.returncode != 0:
                raise Unavailable(
                    f"Arize Phoenix could not be installed: {(run.stderr or run.stdout)[-300:]}"
                )
        ready.touch()
    return python
