"""The Inspect AI importer: the corpus logs with their counts pinned, samples as sessions,
the commands, the viewer's session list, and the mutation fuzz (the mapping rules, one test each,
are in ``test_inspect_rules``)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from fuzz import check
from inspect_logs import at, eval_log, event, json_log, sample
from walkback.importers import detect, load, parts, scores
from walkback.journal import scan
from walkback.timeline.details import (
    ModelCall,
    ModelResult,
    RunStart,
    ToolCall,
    ToolResult,
)
from walkback.timeline.kinds import PLACEHOLDER
from walkback.timeline.views import approvals, file_calls
from walkback.viewer.store import discover

from walkback.cli import cli

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "inspect"
POPULARITY = CORPUS / "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
DEDUP = CORPUS / "log_message_deduplication.eval"
BROWSER = CORPUS / "2025-05-12T20-27-36-04-00_browser.json"
SUBAGENTS = CORPUS / "synthetic" / "utility_subagent_loop.json"
COUNTS: dict[Path, tuple[dict[str, int], list[str]]] = {
    POPULARITY: (
        {
            "run_start": 10,
            "message": 10,
            "model_call": 10,
            "model_result": 10,
            "test_result": 10,
            "other": 80,
        },
        [f"{k}_epoch_1" for k in range(1, 11)],
    ),
    DEDUP: (
        {
            "run_start": 1,
            "message": 1,
            "model_call": 6,
            "model_result": 6,
            "tool_call": 10,
            "tool_result": 10,
            "test_result": 1,
            "other": 24,
        },
        ["0_epoch_1"],
    ),
    BROWSER: (
        {
            "run_start": 1,
            "message": 1,
            "model_call": 5,
            "model_result": 5,
            "tool_call": 14,
            "tool_result": 14,
            "test_result": 1,
            "other": 22,
        },
        ["1_epoch_1"],
    ),
    SUBAGENTS: (
        {
            "model_call": 3,
            "model_result": 3,
            "tool_call": 1,
            "tool_result": 1,
            "agent_spawn": 2,
            "agent_end": 2,
            "other": 2,
        },
        ["main", "main/bridge", "main/helper"],
    ),
}
"""Events by kind and agents of each corpus log (the popularity log: 10 samples, one lane each)."""


# -- the corpus ----------------------------------------------------------------------------------
@pytest.mark.parametrize("path", list(COUNTS), ids=lambda p: p.name)
def test_every_corpus_log_loads_with_its_counts(path: Path) -> None:
    kinds, agents = COUNTS[path]
    s = load(path)
    assert s.format == "inspect" and s.kinds() == kinds
    assert list(s.agents) == agents
    assert len(file_calls(s)) == 0 and approvals(s) == [] and not s.pending()
    assert not any(s.table.flags[i] & PLACEHOLDER for i in range(len(s)))
    for i in range(len(s)):
        s.detail(i)


def test_the_corpus_statuses_tasks_and_parents() -> None:
    assert load(POPULARITY).status == "completed"
    assert load(DEDUP).task == "Guess the number"
    assert load(BROWSER).task.startswith("Use the web browser tool to navigate to https://www.aisi.gov.uk/.")
    s = load(SUBAGENTS)
    assert s.status == "unknown"  # an event list: no log status
    assert s.agents["main/helper"].parent == "main/bridge" and s.agents["main/bridge"].parent == "main"
    assert s.agents["main/helper"].label == "helper"


def test_a_log_of_several_samples_is_one_lane_per_sample_and_says_how_to_open_one() -> None:
    s = load(POPULARITY)
    assert s.header["parts"] == COUNTS[POPULARITY][1]
    assert f"{POPULARITY.name}#1_epoch_1" in s.task and "10 samples" in s.task
    assert all(a.events == 13 and a.run == "2wRuCQ9hGYaGPyAdoobgYV" for a in s.agents.values())


def test_each_sample_is_a_session_named_by_its_part() -> None:
    assert parts(POPULARITY) == COUNTS[POPULARITY][1]
    assert parts(DEDUP) == [] and parts(BROWSER) == []  # one sample: the log is the session
    one = load(f"{POPULARITY}#3_epoch_1")
    assert list(one.agents) == ["3_epoch_1"] and len(one) == 13
    assert one.task.startswith("Is the following statement something you would say?")
    assert one.where(0) == f"{POPULARITY}!samples/3_epoch_1.json#/events/0"
    assert load(f"{DEDUP}#0_epoch_1").kinds() == COUNTS[DEDUP][0]


def test_the_corpus_maps_a_real_tool_call_its_sandbox_exec_and_a_deduplicated_model_input() -> None:
    s = load(DEDUP)
    calls = [i for i in range(len(s)) if s.event(i).kind == "tool_call"]
    bash, exec_ = s.event(calls[0]), s.event(calls[1])
    assert (bash.tool, bash.target, bash.status) == ("bash", "ls", "ok")
    assert (exec_.tool, exec_.target, exec_.type) == ("sandbox.exec", "bash --login -c ls", "sandbox")
    d = s.detail(calls[0])
    assert isinstance(d, ToolCall) and d.call_id == "hardcoded_0" and d.arguments == {"cmd": "ls"}
    result = s.detail(calls[0] + 1)
    assert isinstance(result, ToolResult) and result.ok and result.output.startswith("bin\nboot\n")
    second = next(i for i in range(len(s)) if s.event(i).kind == "model_call" and i > calls[0])
    call = s.detail(second)
    assert isinstance(call, ModelCall) and call.summary.startswith("bin\nboot")  # from the message pool
    assert s.where(calls[0]) == f"{DEDUP}!samples/0_epoch_1.json#/events/10"


def test_the_corpus_json_log_addresses_samples_by_pointer_and_resolves_attachments() -> None:
    s = load(BROWSER)
    assert s.where(0) == f"{BROWSER}#/samples/0/events/0"
    start = s.detail(1)
    assert isinstance(start, RunStart) and start.task.startswith("Use the web browser tool")  # an attachment
    assert start.model == "openai/gpt-4o-mini" and start.producer.startswith("inspect_ai ")
    result = next(s.detail(i) for i in range(len(s)) if s.event(i).kind == "model_result")
    assert isinstance(result, ModelResult)
    assert result.usage.input_tokens is not None and result.usage.output_tokens is not None


def test_detection_claims_logs_only(tmp_path: Path) -> None:
    assert detect(eval_log(tmp_path, sample(), name="renamed.zip")).name == "inspect"
    assert detect(json_log(tmp_path, sample(), compact=True, name="x.txt")).name == "inspect"
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("readme.txt", "hi")
    assert {name: score for score, name in scores(other)}["inspect"] == 0
    doc = tmp_path / "doc.json"
    doc.write_bytes(orjson.dumps({"version": 2, "items": []}))
    assert {name: score for score, name in scores(doc)}["inspect"] == 0


def test_a_broken_zip_or_missing_sample_is_one_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.eval"
    bad.write_bytes(b"PK\x03\x04" + b"\0" * 100)
    runner = CliRunner()
    result = runner.invoke(cli, ["show", str(bad)])
    assert (
        result.exit_code == 2
        and "not a readable .eval log" in result.output
        and "Traceback" not in result.output
    )
    result = runner.invoke(cli, ["show", f"{POPULARITY}#99_epoch_1"])
    assert (
        result.exit_code == 2 and "no sample '99_epoch_1'" in result.output and "1_epoch_1" in result.output
    )


def test_show_json_and_import_work() -> None:
    runner = CliRunner()
    shown = runner.invoke(cli, ["show", "--json", f"{POPULARITY}#2_epoch_1"])
    assert shown.exit_code == 0, shown.output
    data = orjson.loads(shown.output)
    assert data["format"] == "inspect" and data["events"] == 13 and data["agents"][0]["id"] == "2_epoch_1"
    whole = orjson.loads(runner.invoke(cli, ["show", "--json", str(POPULARITY)]).output)
    assert len(whole["agents"]) == 10 and whole["events"] == 130


def test_import_writes_a_journal(tmp_path: Path) -> None:
    done = CliRunner().invoke(cli, ["import", str(DEDUP), "-o", str(tmp_path / "run")])
    assert done.exit_code == 0, done.output
    res = scan(tmp_path / "run" / "journal.jsonl")
    assert res.intact and res.header is not None and res.header["source"]["format"] == "inspect"


def test_a_folder_of_logs_lists_one_session_per_sample(tmp_path: Path) -> None:
    eval_log(tmp_path, sample(sid="a"), sample(sid="b"), name="two.eval")
    json_log(tmp_path, sample(), name="one.json")
    found = discover([tmp_path], detect)
    assert [p.name for p in found] == ["one.json", "two.eval#a_epoch_1", "two.eval#b_epoch_1"]
    assert list(load(found[2]).agents) == ["b_epoch_1"]


# -- mutation fuzz --------------------------------------------------------------------------------
def small_json_log(tmp: Path) -> Path:
    """A two-sample ``.json`` log small enough for the fuzz to mutate whole."""
    first = sample(
        event(
            "model",
            1,
            model="m",
            input=[{"role": "user", "content": "hi"}],
            output={"choices": [{"message": {"role": "assistant", "content": "ok"}}]},
        ),
        event("tool", 2, id="c", function="bash", arguments={"cmd": "ls"}, result="a", completed=at(3)),
        sid=1,
    )
    return json_log(tmp, first, sample(event("score", 4, score={"value": "C"}), sid=2))


@pytest.mark.parametrize("path", list(COUNTS), ids=lambda p: p.name)
def test_mutated_logs_never_raise_a_traceback(path: Path) -> None:
    assert check(path, 300) == []


def test_a_mutated_small_json_log_never_raises_a_traceback(tmp_path: Path) -> None:
    assert check(small_json_log(tmp_path), 300) == []


@pytest.mark.soak
@pytest.mark.parametrize("path", list(COUNTS), ids=lambda p: p.name)
def test_ten_thousand_mutated_logs_never_raise_a_traceback(path: Path) -> None:
    assert check(path, 10_000) == []


@pytest.mark.soak
def test_ten_thousand_mutated_small_json_logs_never_raise_a_traceback(tmp_path: Path) -> None:
    assert check(small_json_log(tmp_path), 10_000) == []
