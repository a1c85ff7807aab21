"""The OpenTelemetry importer: the corpus OTLP examples, GenAI traces written as the semantic
conventions say (``otlp_traces``), one test per mapping rule, folders merged by trace id, the
round trip through walkback's own OTLP export, the commands, and the mutation fuzz."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from fuzz import check
from otlp_traces import OTHER_TRACE, TRACE, agent_run, event, export, runs, span, write
from walkback.exporters import exporter
from walkback.importers import detect, documents, load, parts, scores
from walkback.journal import scan
from walkback.timeline import sources
from walkback.timeline.details import (
    AgentSpawn,
    ApprovalDecision,
    Error,
    Message,
    ModelCall,
    ModelResult,
    Other,
    RunStart,
    ToolCall,
    ToolResult,
)
from walkback.timeline.session import Session
from walkback.timeline.sources import JsonItemSpans
from walkback.timeline.views import approval_counts, approvals, files_summary
from walkback.viewer.store import discover

from walkback.cli import cli

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "otel" / "otlp-proto-examples"
SAMPLES = Path(__file__).resolve().parents[2] / "samples"


# -- the corpus: the canonical OTLP examples (not GenAI) -----------------------------------------
@pytest.mark.parametrize(
    ("name", "kinds"),
    [("trace.json", {"other": 1}), ("logs.json", {"other": 1}), ("events.json", {"other": 1})],
)
def test_every_corpus_example_loads_with_its_counts(name: str, kinds: dict[str, int]) -> None:
    s = load(CORPUS / name)
    assert s.format == "otel" and s.kinds() == kinds and list(s.agents) == ["my.service"]
    for i in range(len(s)):
        s.detail(i)


def test_the_corpus_span_and_log_records() -> None:
    s = load(CORPUS / "trace.json")
    e = s.event(0)
    assert (e.type, e.target, e.agent) == ("span", "I'm a server span", "my.service")
    assert s.task == "I'm a server span" and s.runs == ["5b8efff798038103d269b633813fc60c"]
    assert (
        s.where(0) == f"{CORPUS / 'trace.json'}#/resourceSpans/0/scopeSpans/0/spans/0"
    )  # indented: a document
    logs = load(CORPUS / "logs.json")
    d = logs.detail(0)
    assert isinstance(d, Other) and d.summary == "Example log record"
    assert logs.where(0) == f"{CORPUS / 'logs.json'}#/resourceLogs/0/scopeLogs/0/logRecords/0"
    named = load(CORPUS / "events.json").event(0)
    assert named.type == "browser.page_view" and named.target == "browser.page_view"


def test_the_corpus_folder_is_one_session() -> None:
    assert detect(CORPUS).name == "otel"
    s = load(CORPUS)
    assert len(s) == 3 and len(s.files()) == 3
    assert discover([CORPUS.parent], detect) == [CORPUS]


# -- a GenAI agent run ---------------------------------------------------------------------------
def run_rows(s: object) -> list[tuple[str, str, str, str, str]]:
    return [(e.kind, e.agent, e.tool, e.target, e.status) for e in s.events()]  # type: ignore[attr-defined]


def test_a_genai_agent_run_maps_spans_to_agents_calls_and_results(tmp_path: Path) -> None:
    s = load(write(tmp_path / "trace.json", export(agent_run())))
    assert run_rows(s) == [
        ("run_start", "asst_coder", "", "asst_coder", "completed"),
        ("model_call", "asst_coder", "", "", ""),
        ("model_result", "asst_coder", "", "", "ok"),
        ("tool_call", "asst_coder", "bash", "pytest -q", "ok"),
        ("other", "asst_coder", "", "GET https://pypi.org/simple/", ""),
        ("tool_result", "asst_coder", "", "", "ok"),
        ("tool_call", "asst_coder", "research", "", "ok"),
        ("agent_spawn", "asst_coder", "", "researcher", "completed"),
        ("model_call", "researcher", "", "", ""),
        ("message", "researcher", "", "", ""),
        ("model_result", "researcher", "", "", "ok"),
        ("agent_end", "asst_coder", "", "researcher", "completed"),
        ("tool_result", "asst_coder", "", "", "ok"),
        ("tool_call", "asst_coder", "write_file", "", "failed"),
        ("error", "asst_coder", "", "", "error"),
        ("tool_result", "asst_coder", "", "", "failed"),
        ("run_end", "asst_coder", "", "asst_coder", "completed"),
    ]
    assert s.task == "Fixes bugs" and s.status == "completed"
    coder, researcher = s.agents["asst_coder"], s.agents["researcher"]
    assert coder.label == "coder" and coder.parent is None and coder.run == TRACE
    assert researcher.parent == "asst_coder" and researcher.spawned_by == 6  # the tool call it ran under
    assert s.event(2).ref == 1 and s.event(11).ref == 7 and s.event(15).ref == 13


def test_a_chat_span_is_a_model_call_with_usage_old_and_new_names(tmp_path: Path) -> None:
    s = load(write(tmp_path / "trace.json", export(agent_run())))
    call, result = s.detail(1), s.detail(2)
    assert isinstance(call, ModelCall) and call.model == "gpt-4o" and call.summary == "Fix the failing test"
    assert (
        isinstance(result, ModelResult)
        and result.model == "gpt-4o-2024"
        and result.response_id == "chatcmpl-1"
    )
    assert result.stop_reason == "tool_calls" and result.text == "Running the tests."
    u = result.usage  # the conventions count cache reads in input_tokens; the contract does not
    assert (u.input_tokens, u.cache_read_tokens, u.output_tokens) == (200, 1000, 40)
    old = s.detail(10)
    assert isinstance(old, ModelResult) and (old.usage.input_tokens, old.usage.output_tokens) == (300, 20)
    said = s.detail(9)
    assert isinstance(said, Message) and said.role == "assistant" and said.text == "Look at conftest.py"


def test_an_execute_tool_span_is_a_tool_call_and_its_result(tmp_path: Path) -> None:
    s = load(write(tmp_path / "trace.json", export(agent_run())))
    call, result = s.detail(3), s.detail(5)
    assert isinstance(call, ToolCall) and (call.name, call.call_id, call.command) == (
        "bash",
        "call_1",
        "pytest -q",
    )
    assert call.arguments == {"command": "pytest -q"}
    assert isinstance(result, ToolResult) and result.ok and result.output == "1 failed, 3 passed"
    failed, error = s.detail(15), s.detail(14)
    assert isinstance(failed, ToolResult) and failed.ok is False and failed.error == "permission denied"
    assert isinstance(error, Error) and error.error_type == "PermissionError"
    assert s.where(14) == f"{tmp_path / 'trace.json'}:1#/resourceSpans/0/scopeSpans/0/spans/7"  # one line


def test_invoke_agent_spans_are_the_run_and_its_subagents(tmp_path: Path) -> None:
    s = load(write(tmp_path / "trace.json", export(agent_run())))
    start, spawn = s.detail(0), s.detail(7)
    assert isinstance(start, RunStart) and start.task == "Fixes bugs"
    assert start.settings["gen_ai.provider.name"] == "openai"
    assert isinstance(spawn, AgentSpawn) and spawn.child == "researcher" and spawn.agent_type == "researcher"


def test_a_failed_root_agent_fails_the_session(tmp_path: Path) -> None:
    spans = agent_run()
    spans[0]["status"] = {"code": 2, "message": "max turns"}
    s = load(write(tmp_path / "trace.json", export(spans)))
    assert s.status == "failed" and s.agents["asst_coder"].outcome == "failed"
    assert s.event(len(s) - 1).status == "failed"


def test_spans_outside_any_agent_are_in_their_services_lane(tmp_path: Path) -> None:
    spans = [
        span("b000000000000001", "POST /v1/chat/completions", 0, 10),
        span("c000000000000009", "chat gpt-4o", 1, 9, "b000000000000001", gen_ai__operation__name="chat"),
    ]
    s = load(write(tmp_path / "t.json", export(spans, service="gateway")))
    assert run_rows(s) == [
        ("other", "gateway", "", "POST /v1/chat/completions", ""),
        ("model_call", "gateway", "", "", ""),
        ("model_result", "gateway", "", "", "ok"),
    ]


def test_the_older_batches_layout_and_base64_ids(tmp_path: Path) -> None:
    spans = agent_run()[:3]
    for sp in spans:
        for key in ("traceId", "spanId", "parentSpanId"):
            if key in sp:
                sp[key] = base64.b64encode(bytes.fromhex(sp[key])).decode()
    doc = {
        "batches": [
            {
                "resource": {"attributes": []},
                "instrumentationLibrarySpans": [{"instrumentationLibrary": {"name": "x"}, "spans": spans}],
            }
        ]
    }
    path = write(tmp_path / "tempo.json", doc)
    assert detect(path).name == "otel"
    s = load(path)
    assert [e.kind for e in s.events()] == [
        "run_start",
        "model_call",
        "model_result",
        "tool_call",
        "tool_result",
        "run_end",
    ]
    assert s.runs == [TRACE]


def test_json_lines_of_exports_address_each_span_by_line(tmp_path: Path) -> None:
    spans = agent_run()
    path = write(tmp_path / "spans.jsonl", None, lines=[export(spans[4:]), export(spans[:4])])
    s = load(path)
    assert len(s) == 17 and s.agents["researcher"].parent == "asst_coder"
    assert s.where(0) == f"{path}:2#/resourceSpans/0/scopeSpans/0/spans/0"
    assert s.event(0).line == 2 and s.raw(0)["name"] == "invoke_agent coder"


def test_a_broken_line_is_a_placeholder(tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    path.write_bytes(orjson.dumps(export(agent_run()[:3])) + b'\n{"resourceSpans": [\n')
    s = load(path)
    assert [(e.kind, e.status) for e in s.events()][:1] == [("integrity", "corrupt")] and len(s) == 7
    assert s.event(0).line == 2


def test_a_folder_of_services_merges_by_trace_id(tmp_path: Path) -> None:
    spans = agent_run()
    folder = tmp_path / "traces"
    folder.mkdir()
    write(folder / "coder.json", export(spans[:5] + spans[7:], service="coder"))
    write(folder / "researcher.json", export(spans[5:7], service="researcher"), indent=True)
    assert detect(folder).name == "otel"
    s = load(folder)
    assert run_rows(s) == run_rows(load(write(tmp_path / "one.json", export(spans))))
    assert s.header["services"] == ["coder", "researcher"] and len(s.files()) == 2


def test_several_traces_are_parts(tmp_path: Path) -> None:
    second = [
        span(
            "a00000000000000f",
            "invoke_agent reviewer",
            0,
            50,
            trace=OTHER_TRACE,
            gen_ai__operation__name="invoke_agent",
            gen_ai__agent__name="reviewer",
        )
    ]
    path = write(tmp_path / "two.json", export(agent_run() + second))
    assert parts(path) == [TRACE, OTHER_TRACE]
    both = load(path)
    assert f"{TRACE[:8]}/asst_coder" in both.agents and f"{OTHER_TRACE[:8]}/reviewer" in both.agents
    one = load(f"{path}#{OTHER_TRACE}")
    assert list(one.agents) == ["reviewer"] and len(one) == 2
    assert [p.name for p in discover([path], detect)] == [f"two.json#{TRACE}", f"two.json#{OTHER_TRACE}"]
    result = CliRunner().invoke(cli, ["show", f"{path}#{'0' * 32}"])
    assert result.exit_code == 2 and "no trace" in result.output and TRACE in result.output


def test_log_records_join_the_lane_of_their_span(tmp_path: Path) -> None:
    logs = {
        "resourceLogs": [
            {
                "resource": {"attributes": []},
                "scopeLogs": [
                    {
                        "scope": {},
                        "logRecords": [
                            {
                                "timeUnixNano": str(1_760_000_000_150_000_000),
                                "eventName": "gen_ai.user.message",
                                "traceId": TRACE,
                                "spanId": "c000000000000002",
                                "body": {
                                    "kvlistValue": {
                                        "values": [
                                            {
                                                "key": "content",
                                                "value": {"stringValue": "What does conftest do?"},
                                            }
                                        ]
                                    }
                                },
                            },
                            {
                                "timeUnixNano": str(1_760_000_000_160_000_000),
                                "severityNumber": 17,
                                "severityText": "ERROR",
                                "body": {"stringValue": "rate limited"},
                            },
                        ],
                    }
                ],
            }
        ]
    }
    folder = tmp_path / "t"
    folder.mkdir()
    write(folder / "spans.json", export(agent_run()))
    write(folder / "logs.json", logs)
    s = load(folder)
    user = next(i for i in range(len(s)) if s.event(i).type == "gen_ai.user.message")
    assert s.event(user).agent == "researcher" and s.event(user).kind == "message"
    d = s.detail(user)
    assert isinstance(d, Message) and d.role == "user" and d.text == "What does conftest do?"
    err = next(i for i in range(len(s)) if s.event(i).kind == "error" and s.event(i).type == "log")
    assert s.detail(err) == Error(message="rate limited", error_type="ERROR")


def test_walkback_span_events_come_back_as_their_kinds(tmp_path: Path) -> None:
    root = span(
        "a000000000000001",
        "invoke_agent main",
        0,
        100,
        gen_ai__operation__name="invoke_agent",
        gen_ai__agent__id="main",
        events=[
            event(
                "walkback.approval_request",
                10,
                walkback__approval__tool="bash",
                walkback__approval__target="rm -rf build",
            ),
            event(
                "walkback.approval_decision",
                20,
                walkback__approval__decision="denied",
                walkback__approval__approver="alice",
            ),
            event("walkback.checkpoint", 30, walkback__checkpoint__git="abc123"),
            event("custom.thing", 40, x=1),
        ],
    )
    s = load(write(tmp_path / "t.json", export([root])))
    assert [(e.kind, e.type, e.status) for e in s.events()][1:5] == [
        ("approval_request", "walkback.approval_request", "denied"),
        ("approval_decision", "walkback.approval_decision", "denied"),
        ("checkpoint", "walkback.checkpoint", ""),
        ("other", "custom.thing", ""),
    ]
    (a,) = approvals(s)
    assert (a.decision, a.approver, a.tool, a.target) == ("denied", "alice", "bash", "rm -rf build")
    d = s.detail(2)
    assert isinstance(d, ApprovalDecision) and d.decision == "denied"


def test_detection_claims_otlp_only(tmp_path: Path) -> None:
    other = write(tmp_path / "x.json", {"data": [{"traceID": TRACE, "spans": []}]})
    assert {name: score for score, name in scores(other)}["otel"] == 0
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    write(mixed / "a.json", export(agent_run()))
    write(mixed / "b.json", {"not": "otlp"})
    assert {name: score for score, name in scores(mixed)}["otel"] == 0
    assert detect(write(tmp_path / "renamed.log", export(agent_run()))).name == "otel"


def test_not_json_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(b'{"resourceSpans": [\n  {"resource": }\n]}')
    result = CliRunner().invoke(cli, ["show", str(path)])
    assert result.exit_code == 2 and "not OTLP/JSON" in result.output and "Traceback" not in result.output


# -- one document, read a span at a time --------------------------------------------------------
LAYOUTS = {
    "indented": lambda doc: orjson.dumps(doc, option=orjson.OPT_INDENT_2),
    "tabs, keys sorted": lambda doc: json.dumps(doc, indent="\t", sort_keys=True).encode(),
    "a span a line": lambda doc: orjson.dumps(doc).replace(b'},{"traceId"', b'},\n{"traceId"'),
}


def span_starts(indented: bytes) -> list[int]:
    """Where each span's line starts in an indented export (its ``{`` is 12 spaces in)."""
    return [m.start() for m in re.finditer(rb"\n {12}\{", indented)]


def older(doc: dict[str, Any]) -> dict[str, Any]:
    """An export in the layout Tempo and Jaeger write (``batches``: sorted by key, its scopes come
    before its resource)."""
    (res,) = doc["resourceSpans"]
    (group,) = res["scopeSpans"]
    lib = {"instrumentationLibrary": group["scope"], "spans": group["spans"]}
    return {"batches": [{"resource": res["resource"], "instrumentationLibrarySpans": [lib]}]}


def same_as_one_line(path: Path, doc: dict[str, Any], tmp_path: Path) -> Session:
    """``path`` (``doc`` in some layout) loads as ``doc`` on one line does, addressed the same."""
    one = write(tmp_path / "one.jsonl", None, lines=[doc])
    s, line = load(path), load(one)
    assert s.kinds() == line.kinds() and run_rows(s) == run_rows(line)
    assert [s.where(i) for i in range(len(s))] == [
        line.where(i).replace(f"{one}:1#", f"{path}#") for i in range(len(line))
    ]
    assert [s.raw(i) for i in range(len(s))] == [line.raw(i) for i in range(len(line))]
    return s


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", [export, lambda spans: older(export(spans))], ids=["scopeSpans", "batches"])
def test_any_layout_reads_as_the_same_data_on_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str, shape: Any
) -> None:
    monkeypatch.setattr(documents, "BLOCK", 4096)  # spans across the ends of the blocks read
    doc = shape(runs(20))
    path = tmp_path / "trace.json"
    path.write_bytes(LAYOUTS[layout](doc))
    assert len(same_as_one_line(path, doc, tmp_path)) == 20 * 17


def test_a_big_indented_document_reads_as_the_same_data_on_one_line(tmp_path: Path) -> None:
    doc = export(runs(700))
    path = tmp_path / "trace.json"
    path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    assert path.stat().st_size > 2 * documents.BLOCK
    s = same_as_one_line(path, doc, tmp_path)
    assert len(s) == 700 * 17 and s.where(len(s) - 1).endswith("/resourceSpans/0/scopeSpans/0/spans/5592")


def test_a_span_is_read_again_from_its_own_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spans = agent_run()
    data = orjson.dumps(export(spans), option=orjson.OPT_INDENT_2)
    path = tmp_path / "trace.json"
    path.write_bytes(data)
    s = load(path)

    def whole(*args: object) -> None:
        raise AssertionError("the whole document parsed to read one span")

    monkeypatch.setattr(sources, "_document", whole)
    for i in range(len(s)):
        assert s.raw(i) == spans[int(s.where(i).rsplit("/", 1)[1])]
    (src,) = s.sources
    assert isinstance(src, JsonItemSpans)
    for k, sp in enumerate(spans):
        assert orjson.loads(data[src.starts[k] : src.starts[k] + src.lengths[k]]) == sp


def test_a_span_that_is_not_json_is_a_placeholder_at_its_line(tmp_path: Path) -> None:
    data = orjson.dumps(export(agent_run()), option=orjson.OPT_INDENT_2)
    at = data.index(b'"name": "execute_tool bash"')
    path = tmp_path / "trace.json"
    path.write_bytes(data[:at] + b", " + data[at:])  # span 2 has a syntax error, its brackets hold
    s = load(path)
    (bad,) = [i for i in range(len(s)) if s.event(i).kind == "integrity"]
    line = data[: span_starts(data)[2] + 1].count(b"\n") + 1
    assert s.event(bad).status == "corrupt" and s.where(bad) == f"{path}:{line}"
    assert s.raw(bad)["reason"].startswith(f"line {line}: not JSON")
    others = load(write(tmp_path / "others.json", export(agent_run()[:2] + agent_run()[3:])))
    assert [r for r in run_rows(s) if r[0] != "integrity"] == run_rows(others)


@pytest.mark.parametrize("inside", [True, False], ids=["inside a span", "between spans"])
def test_a_document_cut_in_its_spans_keeps_the_spans_before_the_cut(tmp_path: Path, inside: bool) -> None:
    data = orjson.dumps(export(agent_run()), option=orjson.OPT_INDENT_2)
    at = data.index(b'"name": "execute_tool research"') if inside else span_starts(data)[4]
    path = tmp_path / "trace.json"
    path.write_bytes(data[:at])
    s = load(path)
    (torn,) = [i for i in range(len(s)) if s.event(i).kind == "integrity"]
    why = "the document ends inside it" if inside else "the document ends here"
    line = data[: span_starts(data)[4] + 1 if inside else at].count(b"\n") + 1
    assert (
        s.event(torn).status == "torn" and why in s.raw(torn)["reason"] and s.where(torn) == f"{path}:{line}"
    )
    before = load(write(tmp_path / "before.json", export(agent_run()[:4])))
    assert [r for r in run_rows(s) if r[0] != "integrity"] == run_rows(before)


# -- the round trip through walkback's own export -------------------------------------------------
@pytest.mark.parametrize("sample", ["demo", "release-in-doubt", "rename-crashed"])
def test_walkbacks_otlp_export_reads_back_to_the_same_agents_calls_and_counts(
    tmp_path: Path, sample: str
) -> None:
    s = load(SAMPLES / sample)
    out = exporter("otlp").export(s, tmp_path / "trace.json")
    back = load(out)
    assert back.format == "otel"
    assert {a.id: a.parent for a in back.agents.values()} == {
        a.id: a.parent for a in s.agents.values() if a.events
    }
    for kind in ("tool_call", "approval_request", "approval_decision", "checkpoint"):
        assert back.kinds().get(kind) == s.kinds().get(kind), kind
    assert len(back.pending()) == len(s.pending())
    assert approval_counts(approvals(back)) == approval_counts(approvals(s))
    assert [(f["path"], f["changes"]) for f in files_summary(back)] == [
        (f["path"], f["changes"]) for f in files_summary(s)
    ]
    assert back.task == s.task and back.status == s.status


# -- the commands -----------------------------------------------------------------------------------
def test_show_json_and_import_work(tmp_path: Path) -> None:
    path = write(tmp_path / "trace.json", export(agent_run()))
    runner = CliRunner()
    shown = runner.invoke(cli, ["show", "--json", str(path)])
    assert shown.exit_code == 0, shown.output
    data = orjson.loads(shown.output)
    assert data["format"] == "otel" and data["events"] == 17
    assert [(a["id"], a["parent"]) for a in data["agents"]] == [
        ("asst_coder", None),
        ("researcher", "asst_coder"),
    ]
    done = runner.invoke(cli, ["import", str(path), "-o", str(tmp_path / "run")])
    assert done.exit_code == 0, done.output
    res = scan(tmp_path / "run" / "journal.jsonl")
    assert res.intact and res.header is not None and res.header["source"]["format"] == "otel"


# -- mutation fuzz --------------------------------------------------------------------------------
def fuzz_inputs(tmp: Path) -> list[Path]:
    return [
        CORPUS / "trace.json",
        CORPUS / "logs.json",
        write(tmp / "genai.json", export(agent_run())),
        write(tmp / "genai-indented.json", export(agent_run()), indent=True),
        write(tmp / "genai.jsonl", None, lines=[export(agent_run()[:4]), export(agent_run()[4:])]),
    ]


def test_mutated_traces_never_raise_a_traceback(tmp_path: Path) -> None:
    for path in fuzz_inputs(tmp_path):
        assert check(path, 300) == [], path.name


@pytest.mark.soak
def test_ten_thousand_mutated_traces_never_raise_a_traceback(tmp_path: Path) -> None:
    for path in fuzz_inputs(tmp_path):
        assert check(path, 10_000) == [], path.name
