"""``walkback export otlp --endpoint``: spans pushed over OTLP/HTTP (protobuf) reach a real backend.

The backend is Arize Phoenix, installed from PyPI into its own venv and started on 127.0.0.1
ahead of these tests (``phoenix_server.py``, the ``phoenix`` fixture in ``conftest.py``); the tests then
ask Phoenix's REST API which spans it stored. Where Phoenix cannot be installed or started, they
skip.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from click.testing import CliRunner
from walkback.journal.testing import synth_journal

from walkback.cli import cli

pytestmark = pytest.mark.slow

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


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
