"""``walkback export otlp -o OUT.json``: one GenAI-semconv trace per session, deterministic ids,
and one-line errors for everything a user can get wrong."""

from __future__ import annotations

import shutil
import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from walkback.exporters import exporter
from walkback.importers import load
from walkback.journal.testing import synth_journal
from walkback.timeline.session import Session

from walkback.cli import cli

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def spans_of(path: Path) -> list[dict[str, Any]]:
    doc = orjson.loads(path.read_bytes())
    (rs,) = doc["resourceSpans"]
    (ss,) = rs["scopeSpans"]
    return list(ss["spans"])


def attrs(obj: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for a in obj.get("attributes", []):
        ((kind, value),) = a["value"].items()
        out[a["key"]] = int(value) if kind == "intValue" else value
    return out


@pytest.fixture(scope="module")
def multi() -> Session:
    return load(SAMPLES / "multi-agent")


@pytest.fixture(scope="module")
def multi_spans(multi: Session, tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    out = tmp_path_factory.mktemp("otlp") / "trace.json"
    exporter("otlp").export(multi, out)
    return spans_of(out)


def export(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, ["export", "otlp", *args])
    assert "Traceback" not in res.output
    return res.exit_code, res.output


def test_one_trace_an_invoke_agent_span_per_agent_parented_by_spawn(
    multi: Session, multi_spans: list[dict[str, Any]]
) -> None:
    assert len({s["traceId"] for s in multi_spans}) == 1
    agents = {attrs(s)["gen_ai.agent.id"]: s for s in multi_spans if s["name"].startswith("invoke_agent")}
    assert set(agents) == set(multi.agents)
    assert "parentSpanId" not in agents["main"]
    for name, a in multi.agents.items():
        span = agents[name]
        assert attrs(span)["gen_ai.operation.name"] == "invoke_agent" and span["kind"] == 1
        if a.parent:  # spawned by a spawn record: the parent agent's span
            assert span["parentSpanId"] == agents[a.parent]["spanId"]
            assert int(span["startTimeUnixNano"]) >= int(agents[a.parent]["startTimeUnixNano"])
            assert int(span["endTimeUnixNano"]) <= int(agents[a.parent]["endTimeUnixNano"])


def test_an_execute_tool_span_per_call_from_call_to_result(
    multi: Session, multi_spans: list[dict[str, Any]]
) -> None:
    tools = [s for s in multi_spans if s["name"].startswith("execute_tool")]
    calls = multi.indices_where(kind="tool_call")
    assert len(tools) == len(calls)
    by_agent = {
        attrs(s)["gen_ai.agent.id"]: s["spanId"] for s in multi_spans if s["name"].startswith("invoke")
    }
    for span, i in zip(tools, calls, strict=True):
        a, ev = attrs(span), multi.event(i)
        assert a["gen_ai.tool.name"] == ev.tool and span["name"] == f"execute_tool {ev.tool}"
        assert a["gen_ai.tool.call.id"] and a["walkback.lsn"] == ev.lsn
        assert span["parentSpanId"] == by_agent[ev.agent]
        done = multi.completion_of(i)
        assert done is not None and int(span["endTimeUnixNano"]) == int(multi.event(done).ts * 1e9)  # type: ignore[operator]
    files = [attrs(s) for s in tools if "walkback.file.path" in attrs(s)]
    assert files and all(len(f["walkback.file.pre_sha256"]) == 64 for f in files)


def test_approvals_and_checkpoints_are_span_events(multi_spans: list[dict[str, Any]]) -> None:
    events = [e for s in multi_spans for e in s.get("events", [])]
    names = [e["name"] for e in events]
    assert names.count("walkback.approval_request") == 1 and names.count("walkback.approval_decision") == 1
    assert names.count("walkback.checkpoint") == 2
    decision = next(attrs(e) for e in events if e["name"] == "walkback.approval_decision")
    assert decision["walkback.approval.decision"] == "approved" and decision["walkback.approval.approver"]
    checkpoint = next(attrs(e) for e in events if e["name"] == "walkback.checkpoint")
    assert len(checkpoint["walkback.checkpoint.git"]) == 40


def test_chat_spans_carry_model_and_token_usage(tmp_path: Path) -> None:
    synth_journal(tmp_path / "journal.jsonl", 301)
    s = load(tmp_path / "journal.jsonl")
    exporter("otlp").export(s, tmp_path / "t.json")
    chats = [attrs(x) for x in spans_of(tmp_path / "t.json") if x["name"].startswith("chat")]
    assert len(chats) == s.kinds()["model_result"] == 100
    assert all(
        c["gen_ai.request.model"] == "scripted" and c["gen_ai.operation.name"] == "chat" for c in chats
    )
    assert sum(c["gen_ai.usage.output_tokens"] for c in chats) == 8000
    assert sum(c["gen_ai.usage.input_tokens"] for c in chats) == sum(
        1200 + lsn % 500 for lsn in range(0, 301, 3)[1:]
    )


def test_a_crashed_run_has_its_pending_call_open_and_unset(tmp_path: Path) -> None:
    s = load(SAMPLES / "rename-crashed")
    exporter("otlp").export(s, tmp_path / "t.json")
    pending = [x for x in spans_of(tmp_path / "t.json") if attrs(x).get("walkback.status") == "pending"]
    assert len(pending) == len(s.pending()) >= 1
    assert all("status" not in x and x["startTimeUnixNano"] == x["endTimeUnixNano"] for x in pending)


def test_ids_are_the_same_on_every_export_and_wherever_the_files_lie(tmp_path: Path) -> None:
    shutil.copytree(SAMPLES / "multi-agent", tmp_path / "copy")
    assert export(str(SAMPLES / "multi-agent"), "-o", str(tmp_path / "a.json"))[0] == 0
    assert export(str(SAMPLES / "multi-agent"), "-o", str(tmp_path / "b.json"))[0] == 0
    assert export(str(tmp_path / "copy"), "-o", str(tmp_path / "c.json"))[0] == 0
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    ids = [
        [(s["traceId"], s["spanId"], s.get("parentSpanId")) for s in spans_of(tmp_path / f"{n}.json")]
        for n in "ac"
    ]
    assert ids[0] == ids[1] and len({sid for _, sid, _ in ids[0]}) == len(ids[0])


def test_a_grown_journal_keeps_the_ids_of_its_earlier_events(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    synth_journal(path, 301)
    lines = path.read_bytes().splitlines(keepends=True)
    part = tmp_path / "part" / "journal.jsonl"
    part.parent.mkdir()
    part.write_bytes(b"".join(lines[:151]))
    whole, head = (exporter("otlp").export(load(p), tmp_path / f"{p.parent.name}.json") for p in (path, part))
    tools = [
        {s["spanId"] for s in spans_of(Path(str(x))) if s["name"].startswith("execute")}
        for x in (whole, head)
    ]
    assert tools[1] and tools[1] <= tools[0]


def test_the_user_errors_are_one_line_each(tmp_path: Path) -> None:
    code, said = export(str(SAMPLES / "multi-agent"))
    assert code == 1 and said.strip() == "Error: otlp needs -o OUT.json or --endpoint URL"
    code, said = export(str(SAMPLES / "multi-agent"), "--endpoint", "ftp://example")
    assert code == 1 and "not an http(s) URL" in said
    code, said = export(
        str(SAMPLES / "multi-agent"), "--endpoint", "http://127.0.0.1:1", "--header", "novalue"
    )
    assert code == 1 and "a header is KEY=VALUE" in said
    code, said = export(str(SAMPLES / "multi-agent"), "--endpoint", "http://127.0.0.1:1", "--timeout", "soon")
    assert code == 1 and "--timeout is a number of seconds" in said
    code, said = export(str(tmp_path / "missing"), "-o", str(tmp_path / "t.json"))
    assert code == 2 and len(said.strip().splitlines()) == 1


def test_an_unreachable_collector_is_one_line_at_once() -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code, said = export(
        str(SAMPLES / "multi-agent"), "--endpoint", f"http://127.0.0.1:{port}", "--timeout", "2"
    )
    assert code == 1
    assert (
        said.strip()
        == f"Error: cannot reach the OTLP collector at http://127.0.0.1:{port}/v1/traces: Connection refused"
    )


class _Collector(BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver that answers 503 to its first request, then takes every batch."""

    batches: list[ExportTraceServiceRequest] = []
    refused = 0
    headers_seen: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 - the http.server hook's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).headers_seen.append(self.headers.get("x-api-key", ""))
        if not type(self).refused:
            type(self).refused += 1
            self.send_response(503)
            self.end_headers()
            return
        type(self).batches.append(ExportTraceServiceRequest.FromString(body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()
        self.wfile.write(b"")

    def log_message(self, *args: Any) -> None:
        pass


def test_push_sends_protobuf_in_batches_and_retries_a_busy_collector(tmp_path: Path) -> None:
    synth_journal(tmp_path / "journal.jsonl", 2000)
    server = HTTPServer(("127.0.0.1", 0), _Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        code, said = export(str(tmp_path / "journal.jsonl"), "--endpoint", url, "--header", "x-api-key=k1")
    finally:
        server.shutdown()
        server.server_close()
    assert code == 0, said
    assert _Collector.refused == 1 and set(_Collector.headers_seen) == {"k1"}
    spans = [
        s for b in _Collector.batches for r in b.resource_spans for ss in r.scope_spans for s in ss.spans
    ]
    assert (
        len(_Collector.batches) == 3
        and max(len(b.resource_spans[0].scope_spans[0].spans) for b in _Collector.batches) == 512
    )
    exporter("otlp").export(load(tmp_path / "journal.jsonl"), tmp_path / "t.json")
    want = spans_of(tmp_path / "t.json")
    assert sorted(s.span_id.hex() for s in spans) == sorted(s["spanId"] for s in want)
    assert {s.name for s in spans} == {s["name"] for s in want}
