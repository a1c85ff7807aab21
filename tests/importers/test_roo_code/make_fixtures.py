# ruff: noqa: E501 - message literals as Roo Code writes them
"""Writes the Roo Code ``tasks`` folder the tests read (run it to regenerate it).

There is no Roo Code task in the shared corpus. These follow what Roo Code's source writes: each
task a folder ``tasks/<task id>/`` with ``ui_messages.json`` and ``api_conversation_history.json``
(``GlobalFileNames``); a task starts with ``say("text", task)`` (``Task.startTask``); ``new_task``
asks ``ask("tool", {"tool": "newTask", "mode", "content"})`` (``NewTaskTool``), its result to the
model is "Successfully created new task in <mode> mode with message: …", and the subtask is a new
task folder whose first message is that content; a subtask's ``attempt_completion`` says
``completion_result`` and asks ``{"tool": "finishTask"}`` (``askFinishSubTaskApproval``); the parent
then says ``subtask_result`` with the result and adds ``[new_task completed] Result: …`` to its API
history (``Task.completeSubtask``); requests are ``say: api_req_started`` with ``apiProtocol``,
auto-approvals carry ``isAnswered`` / ``autoApprovalDecision``. The tasks are ours: an orchestrator
that delegates writing a module to a Code subtask, which delegates its test to a Debug subtask of its
own, then delegates a second piece of work and is killed while that subtask runs; beside them an
unrelated task of the same user, and one given the same text an hour before the call (neither is a
subtask).
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent / "tasks"
T0 = 1760000000000
PARENT, CHILD, GRANDCHILD, SECOND, OTHER, EARLIER = (
    "0199c3a0-0000-7000-8000-00000000a001",
    "0199c3a0-0000-7000-8000-00000000b002",
    "0199c3a0-0000-7000-8000-00000000c003",
    "0199c3a0-0000-7000-8000-00000000d004",
    "0199c3a0-0000-7000-8000-00000000e005",
    "0199c3a0-0000-7000-8000-00000000f006",
)
WRITE = "Write greet.py with a function greet(name) that returns 'Hello, <name>!'. Then report what you did."
TEST = "Run a quick check that greet('Ada') returns 'Hello, Ada!' and report the output."
DOCS = "Add a README section about greet()."


def req(ms: int, cost: float) -> dict[str, object]:
    info = {
        "apiProtocol": "anthropic",
        "tokensIn": 4000,
        "tokensOut": 200,
        "cacheWrites": 0,
        "cacheReads": 0,
        "cost": cost,
    }
    return {"ts": T0 + ms, "type": "say", "say": "api_req_started", "text": json.dumps(info)}


def ask_tool(ms: int, **fields: object) -> dict[str, object]:
    return {
        "ts": T0 + ms, "type": "ask", "ask": "tool", "text": json.dumps(fields, separators=(",", ":")),
        "partial": False, "isAnswered": True, "autoApprovalDecision": "approve",
    }  # fmt: skip


def say(ms: int, what: str, text: str) -> dict[str, object]:
    return {"ts": T0 + ms, "type": "say", "say": what, "text": text}


def new_task(ms: int, mode: str, content: str) -> dict[str, object]:
    return ask_tool(ms, tool="newTask", mode=mode, content=content, todos=[])


def created(mode: str, content: str) -> str:
    return f"Successfully created new task in {mode} mode with message: {content}"


def tasks() -> dict[str, tuple[list[dict[str, object]], list[dict[str, object]]]]:
    parent_ui = [
        say(0, "text", "Build a greeting module and document it. Delegate the pieces."),
        req(100, 0.012),
        new_task(2000, "💻 Code", WRITE),
        say(
            60000,
            "subtask_result",
            "Created greet.py with greet(name); the Debug subtask confirmed greet('Ada') == 'Hello, Ada!'.",
        ),
        req(60100, 0.015),
        new_task(62000, "💻 Code", DOCS),
    ]
    parent_api = [
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "<task>\nBuild a greeting module and document it. Delegate the pieces.\n</task>",
                }
            ],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_p1",
                    "name": "new_task",
                    "input": {"mode": "code", "message": WRITE},
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_p1", "content": created("💻 Code", WRITE)}
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "[new_task completed] Result: Created greet.py with greet(name); the Debug subtask confirmed greet('Ada') == 'Hello, Ada!'.",
                }
            ],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_p2",
                    "name": "new_task",
                    "input": {"mode": "code", "message": DOCS},
                }
            ],
        },
    ]
    child_ui = [
        say(2500, "text", WRITE),
        req(2600, 0.02),
        ask_tool(
            5000,
            tool="newFileCreated",
            path="greet.py",
            content="def greet(name):\n    return f'Hello, {name}!'\n",
            isOutsideWorkspace=False,
        ),
        req(5100, 0.01),
        new_task(7000, "🪲 Debug", TEST),
        say(40000, "subtask_result", "greet('Ada') printed Hello, Ada!"),
        req(40100, 0.01),
        say(
            42000,
            "completion_result",
            "Created greet.py with greet(name); the Debug subtask confirmed greet('Ada') == 'Hello, Ada!'.",
        ),
        ask_tool(42001, tool="finishTask"),
    ]
    child_api = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": f"<task>\n{WRITE}\n</task>"},
                {
                    "type": "text",
                    "text": "<environment_details>\n# Current Workspace Directory (/home/dev/greet) Files\nREADME.md\n</environment_details>",
                },
            ],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_c1",
                    "name": "write_to_file",
                    "input": {
                        "path": "greet.py",
                        "content": "def greet(name):\n    return f'Hello, {name}!'\n",
                    },
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_c1", "content": "File created: greet.py"}
            ],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_c2",
                    "name": "new_task",
                    "input": {"mode": "debug", "message": TEST},
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_c2", "content": created("🪲 Debug", TEST)}
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "[new_task completed] Result: greet('Ada') printed Hello, Ada!"}
            ],
        },
    ]
    grandchild_ui = [
        say(7500, "text", TEST),
        req(7600, 0.005),
        {
            "ts": T0 + 9000,
            "type": "ask",
            "ask": "command",
            "text": "python -c \"from greet import greet; print(greet('Ada'))\"",
            "partial": False,
            "isAnswered": True,
            "autoApprovalDecision": "approve",
        },
        {"ts": T0 + 9500, "type": "say", "say": "command_output", "text": "Hello, Ada!"},
        req(9600, 0.004),
        say(11000, "completion_result", "greet('Ada') printed Hello, Ada!"),
        ask_tool(11001, tool="finishTask"),
    ]
    second_ui = [say(62500, "text", DOCS), req(62600, 0.01)]  # killed while it ran
    other_ui = [
        say(-3600000, "text", "Explain what a monad is."),
        req(-3599900, 0.01),
        say(-3590000, "completion_result", "…"),
    ]
    earlier_ui = [say(-3600000, "text", WRITE), req(-3599900, 0.01)]  # the same text, before the call
    return {
        PARENT: (parent_ui, parent_api),
        CHILD: (child_ui, child_api),
        GRANDCHILD: (grandchild_ui, []),
        SECOND: (second_ui, []),
        OTHER: (other_ui, []),
        EARLIER: (earlier_ui, []),
    }


def write() -> None:
    for name, (ui, api) in tasks().items():
        folder = HERE / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "ui_messages.json").write_text(json.dumps(ui, separators=(",", ":"), ensure_ascii=False))
        if api:
            (folder / "api_conversation_history.json").write_text(
                json.dumps(api, separators=(",", ":"), ensure_ascii=False)
            )


if __name__ == "__main__":
    write()
