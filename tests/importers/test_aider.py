"""The Aider importer: the corpus history with its counts pinned, one test per mapping rule on a
minimal history written the way ``aider/io.py`` writes one, the commands on real files, and the
mutation fuzz."""

from __future__ import annotations

import os
from dataclasses import astuple
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from fuzz import check
from walkback.importers import detect, load, parts, scores
from walkback.journal import scan
from walkback.timeline.details import (
    ApprovalDecision,
    Checkpoint,
    Error,
    Message,
    ModelCall,
    ModelResult,
    Other,
    RunEnd,
    RunStart,
    ToolCall,
    ToolResult,
    text_hash,
)
from walkback.timeline.kinds import FILE, INFERRED
from walkback.timeline.views import approvals, file_calls, file_change, files_summary

from walkback.cli import cli

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "aider"
FIXTURE = CORPUS / "aider-repo-fixture" / "chat-history.EXCERPT.md"
OLD = 1_600_000_000
KINDS = {
    "run_start": 79,
    "message": 192,
    "model_result": 57,
    "tool_call": 56,
    "tool_result": 50,
    "approval_request": 10,
    "approval_decision": 10,
    "checkpoint": 67,
    "error": 40,
    "run_end": 16,
    "other": 140,
}
"""Events by kind in the corpus history (79 runs of the Aider author's own history, 2024-08)."""


def test_the_corpus_history_loads_with_its_counts() -> None:
    s = load(FIXTURE)
    assert s.format == "aider" and dict(s.kinds()) == KINDS
    calls = file_calls(s)
    assert len(calls) == 52 and len(files_summary(s)) == 15
    statuses = [s.event(int(i)).status for i in calls]
    assert statuses.count("ok") == 37 and statuses.count("failed") == 15 and not s.pending()
    assert len(approvals(s)) == 10 and sum(a.approved is True for a in approvals(s)) == 6
    assert list(s.agents) == ["main"] and len(s.runs) == 79 and len(parts(FIXTURE)) == 79
    assert s.status == "cancelled"  # the last run ends with ^C KeyboardInterrupt
    for i in range(len(s)):
        s.detail(i)


def test_the_corpus_history_maps_a_real_edit() -> None:
    s = load(FIXTURE)
    first = file_change(s, int(file_calls(s)[0]))
    assert first is not None and first.path == "aider/utils.py" and first.tool == "edit"
    assert first.edit.old_string is not None and first.edit.old_string.startswith("def run_install(cmd):\n")
    assert "spinner = Spinner(" in (first.edit.new_string or "")
    done = s.detail(first.result) if first.result is not None else None
    assert isinstance(done, ToolResult) and done.ok and done.output == "Applied edit to aider/utils.py"
    start = s.detail(8)
    assert isinstance(start, RunStart) and start.model == "claude-3-5-sonnet-20240620"
    assert start.producer == "aider 0.47.2-dev" and start.settings["edit_format"] == "diff"
    assert start.task == "Use the Spinner instead of the inlined custom spinner"


# -- writing histories the way Aider does -----------------------------------------------------------
def run(started: str = "2024-08-05 19:33:02", model: str = "gpt-4o", fmt: str = "diff") -> str:
    """``InputOutput.__init__`` then the banner ``main`` prints through ``tool_output``."""
    banner = ["/usr/bin/aider src/a.py", "Aider v0.50.0", f"Model: {model} with {fmt} edit format"]
    return f"\n# aider chat started at {started}\n\n" + "".join(tool(line) for line in banner)


def user(text: str) -> str:
    """``user_input``: every line after ``#### ``, each ending in a markdown line break."""
    return "\n" + "\n".join(f"#### {line}  " for line in text.split("\n")) + "\n"


def reply(text: str) -> str:
    """``ai_output``: the reply stripped, between blank lines."""
    return "\n" + text.strip() + "\n\n"


def tool(text: str) -> str:
    """``tool_output``: ``> `` on the first line only, the line break after the last."""
    return f"> {text.strip()}  \n"


def block(path: str, old: str, new: str) -> str:
    return f"{path}\n```python\n<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE\n```\n"


def history(tmp_path: Path, *pieces: str, name: str = ".aider.chat.history.md") -> Path:
    path = tmp_path / name
    path.write_text("".join(pieces), encoding="utf-8")
    os.utime(path, (OLD, OLD))
    return path


def kinds(s: object) -> list[tuple[str, str, str]]:
    return [(e.kind, e.type, e.status) for e in s.events()]  # type: ignore[attr-defined]


def test_runs_are_consecutive_segments_and_each_is_a_part(tmp_path: Path) -> None:
    path = history(tmp_path, run(), user("hi"), reply("Hello!"), run("2024-08-06 09:00:00"), user("bye"))
    s = load(path)
    assert [e.kind for e in s.events()] == ["run_start", "message", "message", "run_start", "message"]
    assert s.runs == ["2024-08-05 19:33:02", "2024-08-06 09:00:00"] and s.task == "hi"
    assert s.event(0).ts == pytest.approx(1722886382.0) and s.event(1).ts is None
    assert parts(path) == ["1", "2"]
    second = load(f"{path}#2")
    assert [e.kind for e in second.events()] == ["run_start", "message"] and second.task == "bye"
    assert second.event(1).line == s.event(4).line


def test_user_input_and_replies_are_messages_with_their_exact_bytes(tmp_path: Path) -> None:
    path = history(tmp_path, run(), user("add a test\nfor the parser"), reply("Sure, **here**:\n\n> a quote"))
    s = load(path)
    asked, said = s.detail(1), s.detail(2)
    assert isinstance(asked, Message) and asked.role == "user" and asked.text == "add a test\nfor the parser"
    assert isinstance(said, Message) and said.role == "assistant" and said.model == "gpt-4o"
    assert said.text == "Sure, **here**:\n\n> a quote"  # a markdown quote in a reply stays in it
    data = path.read_bytes()
    t = s.table
    assert data[t.offset[2] : t.offset[2] + t.length[2]].decode() == said.text
    assert s.where(1) == f"{path}:{s.event(1).line}" and s.event(1).line == 8


def test_a_search_replace_block_is_a_file_change_paired_with_applied_edit(tmp_path: Path) -> None:
    path = history(
        tmp_path,
        run(),
        user("rename"),
        reply("Here:\n\n" + block("src/a.py", "x = 1\n", "y = 1\n")),
        tool("Tokens: 5,244 sent, 604 received. Cost: $0.02 request, $0.02 session."),
        tool("Applied edit to src/a.py"),
        tool("Commit fd43cd4 feat: rename x"),
    )
    s = load(path)
    assert [k for k, _, _ in kinds(s)][2:] == [
        "message",
        "tool_call",
        "model_result",
        "tool_result",
        "checkpoint",
    ]
    call = s.detail(3)
    assert isinstance(call, ToolCall) and call.name == "edit" and call.target == "src/a.py"
    assert call.edit is not None and (call.edit.old_string, call.edit.new_string) == ("x = 1\n", "y = 1\n")
    assert call.edit.pre is None and call.edit.post is None  # the file's text before is not known
    assert s.table.flags[3] & FILE and s.event(3).status == "ok" and s.event(5).ref == 3
    raw = s.raw(3)["text"]
    assert raw.startswith("src/a.py\n```python\n<<<<<<< SEARCH") and raw.endswith(">>>>>>> REPLACE\n")
    usage = s.detail(4)
    assert isinstance(usage, ModelResult) and usage.model == "gpt-4o" and usage.cost == 0.02
    assert (usage.usage.input_tokens, usage.usage.output_tokens) == (5244, 604)
    commit = s.detail(6)
    assert isinstance(commit, Checkpoint) and commit.git == "fd43cd4" and commit.label == "feat: rename x"


def test_several_blocks_of_one_file_are_one_change_with_edits(tmp_path: Path) -> None:
    text = (
        block("src/a.py", "a\n", "b\n")
        + "\n"
        + block("src/b.py", "c\n", "d\n")
        + block("src/a.py", "e\n", "f\n")
    )
    s = load(history(tmp_path, run(), user("go"), reply(text), tool("Applied edit to src/a.py")))
    calls = [int(i) for i in file_calls(s)]
    assert [s.event(i).target for i in calls] == ["src/a.py", "src/b.py"]
    a = s.detail(calls[0])
    assert isinstance(a, ToolCall) and a.edit is not None and a.edit.edits == [("a\n", "b\n"), ("e\n", "f\n")]
    assert [s.event(i).status for i in calls] == ["ok", "pending"]  # b.py never reported: a crash


def test_a_whole_file_reply_hashes_its_content(tmp_path: Path) -> None:
    s = load(
        history(
            tmp_path,
            run(fmt="whole"),
            user("write it"),
            reply("Here is the file:\n\nsrc/new.py\n```python\nprint('hi')\n```\n\nDone."),
            tool("Applied edit to src/new.py"),
        )
    )
    fc = file_change(s, int(file_calls(s)[0]))
    assert fc is not None and fc.tool == "write" and fc.edit.post_text == "print('hi')\n"
    assert fc.post == text_hash("print('hi')\n")


def test_a_udiff_reply_is_a_patch(tmp_path: Path) -> None:
    diff = "```diff\n--- src/a.py\n+++ src/a.py\n@@ ... @@\n-x = 1\n+x = 2\n```"
    s = load(history(tmp_path, run(fmt="udiff"), user("bump"), reply(diff), tool("Applied edit to src/a.py")))
    fc = file_change(s, int(file_calls(s)[0]))
    assert fc is not None and fc.tool == "patch" and fc.patch is not None and "+x = 2\n" in fc.patch


def test_an_ask_reply_edits_nothing(tmp_path: Path) -> None:
    s = load(history(tmp_path, run(), user("/ask how?"), reply(block("src/a.py", "a\n", "b\n"))))
    assert not len(file_calls(s)) and s.event(1).type == "command"


def test_tokens_with_cache_counts(tmp_path: Path) -> None:
    line = "Tokens: 12k sent, 1.1k cache write, 2.5k cache hit, 245 received. Cost: $0.05 message, $0.1 all."
    s = load(history(tmp_path, run(), user("go"), reply("ok"), tool(line)))
    d = s.detail(3)
    assert isinstance(d, ModelResult) and d.cost == 0.05
    u = d.usage
    assert (u.input_tokens, u.cache_read_tokens, u.cache_write_tokens, u.output_tokens) == (
        9500,
        2500,
        1100,
        245,
    )


def test_run_command_with_its_output(tmp_path: Path) -> None:
    out = "> total 2\nsrc\nREADME.md  \n"  # a multi-line tool_output: "> " on its first line only
    s = load(history(tmp_path, run(), user("/run ls -l"), out, user("thanks")))
    assert kinds(s)[1:4] == [
        ("tool_call", "/run", "ok"),
        ("tool_result", "command output", "ok"),
        ("message", "user", ""),
    ]
    call, res = s.detail(1), s.detail(2)
    assert isinstance(call, ToolCall) and call.command == "ls -l" and call.name == "run"
    assert isinstance(res, ToolResult) and res.ok and res.output == "total 2\nsrc\nREADME.md"


def test_run_command_then_the_add_output_prompt(tmp_path: Path) -> None:
    asked = tool("Add 0.1k tokens of command output to the chat? (Y)es/(N)o [Yes]: y")
    s = load(
        history(tmp_path, run(), user("!pytest -q"), asked, tool("Added 3 lines of output to the chat."))
    )
    assert kinds(s)[1:5] == [
        ("tool_call", "!", "ok"),
        ("tool_result", "no output", "ok"),
        ("approval_request", "question", "approved"),
        ("approval_decision", "answer", "approved"),
    ]
    assert s.table.flags[2] & INFERRED and s.event(1).target == "pytest -q"
    d = s.detail(4)
    assert isinstance(d, ApprovalDecision) and d.decision == "approved" and d.approver == "user"


def test_a_suggested_shell_command_is_gated_by_its_approval(tmp_path: Path) -> None:
    s = load(
        history(
            tmp_path,
            run(),
            user("run the tests"),
            reply("Run this:\n\n```bash\nnpm test\n```"),
            tool(""),
            tool("npm test"),
            tool("Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]: y"),
            tool("Running npm test"),
            tool("Add command output to the chat? (Y)es/(N)o/(D)on't ask again [Yes]: n"),
        )
    )
    [first, second] = approvals(s)
    assert first.tool == "shell" and first.target == "npm test" and first.approved is True
    assert first.gated is not None and s.event(first.gated).kind == "tool_call"
    call = s.detail(first.gated)
    assert isinstance(call, ToolCall) and call.command == "npm test" and s.event(first.gated).status == "ok"
    assert second.approved is False


def test_interrupts(tmp_path: Path) -> None:
    s = load(
        history(
            tmp_path,
            run(),
            user("go"),
            reply("Starting:\n\nsrc/a.py\n```python\n<<<<<<< SEARCH\nx"),
            tool(""),
            tool("^C again to exit"),
            user("stop"),
            tool("^C KeyboardInterrupt"),
        )
    )
    assert not len(file_calls(s))  # an unfinished block is no edit
    err, end = s.detail(4), s.detail(6)
    assert isinstance(err, Error) and err.error_type == "interrupt"
    assert isinstance(end, RunEnd) and end.status == "cancelled" and s.status == "cancelled"


def test_a_block_that_did_not_match_failed(tmp_path: Path) -> None:
    s = load(
        history(
            tmp_path,
            run(),
            user("go"),
            reply(block("src/a.py", "nope\n", "yes\n")),
            tool("The LLM did not conform to the edit format."),
            tool("https://aider.chat/docs/troubleshooting/edit-errors.html"),
            tool("# 1 SEARCH/REPLACE block failed to match!"),
            tool("## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in src/a.py"),
            tool("<<<<<<< SEARCH"),
            tool("nope"),
        )
    )
    assert [k for k, _, _ in kinds(s)][4:] == ["error", "tool_result"]
    assert s.event(3).status == "failed" and s.event(5).ref == 3
    res = s.detail(5)
    assert isinstance(res, ToolResult) and res.ok is False and res.error.endswith("<<<<<<< SEARCH\nnope")


def test_edits_never_reported_applied_failed_when_the_chat_moved_on(tmp_path: Path) -> None:
    s = load(history(tmp_path, run(), user("go"), reply(block("src/a.py", "a\n", "b\n")), user("next")))
    assert s.event(3).status == "failed" and not s.pending() and s.status == "unknown"


def test_a_crash_leaves_the_last_edits_and_commands_pending(tmp_path: Path) -> None:
    s = load(history(tmp_path, run(), user("go"), reply(block("src/a.py", "a\n", "b\n"))))
    assert s.pending() == [3] and s.status == "crashed"
    s = load(history(tmp_path, run(), user("/test npm test"), name="b.md"))
    assert s.pending() == [1] and s.event(1).tool == "test"


def test_a_run_that_stopped_mid_edit_ends_inferred_before_the_next(tmp_path: Path) -> None:
    s = load(
        history(
            tmp_path, run(), user("go"), reply(block("src/a.py", "a\n", "b\n")), run("2024-08-06 09:00:00")
        )
    )
    assert kinds(s)[4] == ("run_end", "no end", "crashed") and s.table.flags[4] & INFERRED
    assert s.event(3).status == "failed" and not s.pending()


def test_the_input_and_llm_histories_give_times_and_prompts(tmp_path: Path) -> None:
    (tmp_path / ".aider.input.history").write_text(
        "\n# 2024-08-05 19:33:10.500000\n+add a test\n+please\n\n# 2024-08-05 19:34:00.000000\n+/run ls\n"
    )
    (tmp_path / ".aider.llm.history").write_text(
        "TO LLM 2024-08-05T19:33:11\n-------\nSYSTEM You are Aider.\n-------\nUSER add a test\nUSER please\n"
        "LLM RESPONSE 2024-08-05T19:33:20\nASSISTANT Sure,\nASSISTANT done.\n"
    )
    s = load(history(tmp_path, run(), user("add a test\nplease"), reply("Sure,\ndone."), user("/run ls")))
    assert [e.kind for e in s.events()] == ["run_start", "message", "model_call", "message", "tool_call"]
    assert s.event(1).ts == pytest.approx(1722886390.5) and s.event(4).ts == pytest.approx(1722886440.0)
    assert s.event(2).ts == pytest.approx(1722886391.0) and s.event(3).ts == pytest.approx(1722886400.0)
    call = s.detail(2)
    assert isinstance(call, ModelCall) and call.summary == "please" and call.model == "gpt-4o"
    assert s.raw(2)["text"].startswith("TO LLM 2024-08-05T19:33:11\n") and s.where(2).endswith(
        ".aider.llm.history:1"
    )
    assert len(s.files()) == 2


# -- detection and the commands -------------------------------------------------------------------
def test_detection_by_the_run_header_whatever_the_name(tmp_path: Path) -> None:
    assert detect(history(tmp_path, run(), name="notes.md")).name == "aider"
    plain = history(tmp_path, "# Notes\n\n#### not aider  \n", name="other.md")
    assert {name: score for score, name in scores(plain)}["aider"] == 0
    assert detect(FIXTURE).name == "aider"


def test_show_json_and_import_work(tmp_path: Path) -> None:
    runner = CliRunner()
    shown = runner.invoke(cli, ["show", "--json", str(FIXTURE)])
    assert shown.exit_code == 0, shown.output
    data = orjson.loads(shown.output)
    assert data["format"] == "aider" and data["events"] == sum(KINDS.values())
    done = runner.invoke(cli, ["import", str(FIXTURE), "-o", str(tmp_path / "run")])
    assert done.exit_code == 0, done.output
    res = scan(tmp_path / "run" / "journal.jsonl")
    assert res.intact and res.header is not None and res.header["source"]["format"] == "aider"


@pytest.mark.parametrize("size", [5, 64, 300])
def test_the_block_size_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    """The file is scanned a block at a time and records are read from the block that holds them:
    small blocks put a block's start on every kind of line and records across block ends."""
    path = history(
        tmp_path,
        run(),
        user("fix it\n\nplease"),
        "####\n#### and this  \n",
        reply("Here:\n\n# a heading\n> a quote\n\n" + block("src/a.py", "x = 1\n", "y = 1\n")),
        tool("Tokens: 5,244 sent, 604 received. Cost: $0.02 request, $0.02 session."),
        tool("Applied edit to src/a.py"),
        "> Running pytest\n   \nlast line of it  \n> done  \n",
        tool("Run shell command? (Y)es/(N)o [Yes]: y"),
        tool("Commit fd43cd4 feat: rename x"),
    )

    def read() -> list[tuple[object, ...]]:
        s = load(path)
        return [(*astuple(e), s.where(i), s.raw(i), s.detail(i)) for i, e in enumerate(s.events())]

    whole = read()
    assert [kind for _, kind, *_ in whole] == [
        "run_start",
        "message",
        "message",
        "tool_call",
        "model_result",
        "tool_result",
        "other",
        "approval_request",
        "approval_decision",
        "checkpoint",
    ]
    asked, output = whole[1][-1], whole[6][-1]
    assert isinstance(asked, Message) and asked.text == "fix it\n\nplease\n\nand this"
    assert isinstance(output, Other) and output.summary == "Running pytest"
    monkeypatch.setattr("walkback.importers.aider._scan.BLOCK", size)
    assert read() == whole


def test_a_missing_run_is_one_clear_error(tmp_path: Path) -> None:
    path = history(tmp_path, run(), user("hi"), run("2024-08-06 09:00:00"))
    result = CliRunner().invoke(cli, ["show", f"{path}#7"])
    assert result.exit_code == 2 and "no run '7'" in result.output and "Traceback" not in result.output


# -- mutation fuzz --------------------------------------------------------------------------------
def test_mutated_histories_never_raise_a_traceback() -> None:
    assert check(FIXTURE, 300) == []


@pytest.mark.soak
def test_ten_thousand_mutated_histories_never_raise_a_traceback() -> None:
    assert check(FIXTURE, 10_000) == []
