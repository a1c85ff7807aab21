"""``walkback export otlp --endpoint``: spans pushed over OTLP/HTTP (protobuf) reach a real backend.

The backend is Arize Phoenix, installed from PyPI into its own venv (kept between runs under
``~/.cache/walkback/tests/``, or ``$WALKBACK_PHOENIX_VENV``) and started by the test on 127.0.0.1;
the test then asks Phoenix's REST API which spans it stored. Where Phoenix cannot be installed or
started, the tests skip.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from click.testing import CliRunner
from walkback.journal.testing import synth_journal

from walkback.cli import cli

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
SAMPLES = HERE.parents[1] / "samples"
VENV = Path(os.environ.get("WALKBACK_PHOENIX_VENV", Path.home() / ".cache/walkback/tests/phoenix-venv"))
INSTALL_TIMEOUT = 1200
START_TIMEOUT = 240


@pytest.fixture(scope="session")
def phoenix_python() -> Path:
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
                pytest.skip(f"Arize Phoenix could not be installed: {e}")
            if run.returncode != 0:
                pytest.skip(f"Arize Phoenix could not be installed: {(run.stderr or run.stdout)[-300:]}")
        ready.touch()
    return python


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def phoenix(phoenix_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Phoenix server on 127.0.0.1 (HTTP and gRPC); its base URL."""
    work = tmp_path_factory.mktemp("phoenix")
    port = free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(work),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = open(work / "phoenix.log", "wb")  # noqa: SIM115 - closed after the server stops
    proc = subprocess.Popen(
        [str(phoenix_python), str(HERE / "phoenix_serve.py")],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                pytest.skip(f"Phoenix exited at start: {(work / 'phoenix.log').read_bytes()[-300:]!r}")
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.skip("Phoenix did not start in time")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def stored(url: str) -> list[dict[str, Any]]:
    """Every span Phoenix holds in its default project."""
    out: list[dict[str, Any]] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 1000, **({"cursor": cursor} if cursor else {})}
        page = httpx.get(f"{url}/v1/projects/default/spans", params=params, timeout=30).json()
        out += page["data"]
        cursor = page.get("next_cursor")
        if not cursor:
            return out


def settle(url: str, trace_id: str, expected: int) -> list[dict[str, Any]]:
    """The spans of ``trace_id`` once Phoenix has stored ``expected`` of them (it inserts in bulk)."""
    deadline = time.monotonic() + 60
    while True:
        mine = [s for s in stored(url) if s["context"]["trace_id"] == trace_id]
        if len(mine) >= expected or time.monotonic() > deadline:
            return mine
        time.sleep(0.5)


def walkback(*args: str) -> str:
    res = CliRunner().invoke(cli, list(args))
    assert res.exit_code == 0, res.output
    return res.output


def as_json(path: Path, tmp_path: Path) -> list[dict[str, Any]]:
    walkback("export", "otlp", str(path), "-o", str(tmp_path / "trace.json"))
    doc = orjson.loads((tmp_path / "trace.json").read_bytes())
    return list(doc["resourceSpans"][0]["scopeSpans"][0]["spans"])


def test_the_spans_arrive_with_their_ids_names_parents_and_attributes(phoenix: str, tmp_path: Path) -> None:
    want = as_json(SAMPLES / "multi-agent", tmp_path)
    said = walkback("export", "otlp", str(SAMPLES / "multi-agent"), "--endpoint", phoenix)
    assert said.startswith(f"{phoenix}/v1/traces: ")
    got = settle(phoenix, want[0]["traceId"], len(want))
    assert {(s["context"]["span_id"], s["name"], s.get("parent_id")) for s in got} == {
        (s["spanId"], s["name"], s.get("parentSpanId")) for s in want
    }
    tool = next(
        s for s in got if s["name"].startswith("execute_tool") and "walkback.file.path" in s["attributes"]
    )
    assert (
        tool["attributes"]["gen_ai.tool.name"] and len(tool["attributes"]["walkback.file.post_sha256"]) == 64
    )
    main = next(s for s in got if s["name"] == "invoke_agent main")
    assert {"walkback.approval_request", "walkback.checkpoint"} <= {e["name"] for e in main["events"]}


def test_pushing_again_does_not_duplicate(phoenix: str, tmp_path: Path) -> None:
    want = as_json(SAMPLES / "multi-agent", tmp_path)
    walkback("export", "otlp", str(SAMPLES / "multi-agent"), "--endpoint", phoenix)
    walkback("export", "otlp", str(SAMPLES / "multi-agent"), "--endpoint", f"{phoenix}/v1/traces")
    time.sleep(3)
    assert len(settle(phoenix, want[0]["traceId"], len(want))) == len(want)


def test_a_big_session_goes_in_batches(phoenix: str, tmp_path: Path) -> None:
    synth_journal(tmp_path / "journal.jsonl", 2000)
    want = as_json(tmp_path / "journal.jsonl", tmp_path)
    assert len(want) > 2 * 512
    walkback("export", "otlp", str(tmp_path / "journal.jsonl"), "--endpoint", phoenix, "--header", "x-test=1")
    got = settle(phoenix, want[0]["traceId"], len(want))
    assert len(got) == len(want)
    chats = [s for s in got if s["name"] == "chat scripted"]
    assert sum(s["attributes"]["gen_ai.usage.output_tokens"] for s in chats) == 80 * len(chats) > 0
