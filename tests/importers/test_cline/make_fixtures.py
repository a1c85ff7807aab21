# ruff: noqa: E501 - message literals as Cline writes them, one per line
"""Writes the Cline and Roo Code task folders the tests read (run it to regenerate them).

There is no Cline task in the shared corpus; these follow what Cline's source writes
(``src/core/task``, ``ExtensionMessage.ts``, ``WriteToFileToolHandler.ts``, ``formatResponse``): a
task that reads a file, edits it with a SEARCH/REPLACE diff (approved), runs a command, creates a
file, has an edit denied with feedback, and completes; and a Roo Code task that starts with a
``say: text``, records its auto-approvals and stops while an approved edit is in flight.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
T0 = 1733145600000
ENV = (
    "<environment_details>\n# VSCode Visible Files\nsrc/calc.py\n\n# Current Time\n12/2/2024, 1:20:00 PM\n\n"
    "# Current Working Directory (/home/dev/calc) Files\nREADME.md\nsrc/\nsrc/calc.py\n\n# Current Mode\n"
    "ACT MODE\n</environment_details>"
)
DIFF = "------- SEARCH\ndef add(a, b):\n    return a - b\n=======\ndef add(a, b):\n    return a + b\n+++++++ REPLACE"
CALC_AFTER = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
TEST_PY = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def saved(path: str, content: str) -> str:
    return (
        f"The content was successfully saved to {path}.\n\nHere is the full, updated content of the file that was"
        f' saved:\n\n<final_file_content path="{path}">\n{content}\n</final_file_content>\n\nIMPORTANT: For any'
        " future changes to this file, use the final_file_content shown above as your reference."
    )


def req(request: str, tokens_in: int, tokens_out: int, cost: float, reads: int = 0, writes: int = 0) -> str:
    return json.dumps(
        {
            "request": request,
            "tokensIn": tokens_in,
            "tokensOut": tokens_out,
            "cacheWrites": writes,
            "cacheReads": reads,
            "cost": cost,
        },
        separators=(",", ":"),
    )


def tool(**fields: object) -> str:
    return json.dumps(fields, separators=(",", ":"))


MODEL = {"providerId": "anthropic", "modelId": "claude-sonnet-4-20250514", "mode": "act"}


def cline() -> None:
    task = "Fix the add function in src/calc.py and add a test"
    r1 = f"<task>\n{task}\n</task>\n\n{ENV}"
    r2 = "[read_file for 'src/calc.py'] Result:\ndef add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"
    r3 = f"[replace_in_file for 'src/calc.py'] Result:\n{saved('src/calc.py', CALC_AFTER)}\n\n{ENV}"
    r4 = "[execute_command for 'python -m pytest -q'] Result:\nCommand executed.\nOutput:\nno tests ran in 0.01s"
    r5 = f"[write_to_file for 'tests/test_calc.py'] Result:\n{saved('tests/test_calc.py', TEST_PY)}"
    r6 = "[replace_in_file for 'src/calc.py'] Result:\nThe user denied this operation. The file was not updated, and maintains its original contents.\nThe user provided the following feedback:\n<feedback>\nleave sub alone\n</feedback>"
    ui = [
        {
            "ts": T0,
            "type": "say",
            "say": "task",
            "text": task,
            "modelInfo": MODEL,
            "conversationHistoryIndex": -1,
        },
        {
            "ts": T0 + 900,
            "type": "say",
            "say": "api_req_started",
            "text": req(r1, 3, 211, 0.0153, 0, 11810),
            "modelInfo": MODEL,
            "conversationHistoryIndex": -1,
        },
        {
            "ts": T0 + 4200,
            "type": "say",
            "say": "reasoning",
            "text": "The add function subtracts; read the file first.",
            "partial": False,
            "conversationHistoryIndex": 0,
        },
        {
            "ts": T0 + 4300,
            "type": "say",
            "say": "text",
            "text": "I'll look at src/calc.py first.",
            "partial": False,
            "conversationHistoryIndex": 0,
        },
        {
            "ts": T0 + 4500,
            "type": "say",
            "say": "tool",
            "text": tool(
                tool="readFile",
                path="src/calc.py",
                content="/home/dev/calc/src/calc.py",
                operationIsLocatedInWorkspace=True,
            ),
            "conversationHistoryIndex": 0,
        },
        {
            "ts": T0 + 4800,
            "type": "say",
            "say": "api_req_started",
            "text": req(r2, 4, 188, 0.0071, 11810, 320),
            "modelInfo": MODEL,
            "conversationHistoryIndex": 1,
        },
        {
            "ts": T0 + 8100,
            "type": "ask",
            "ask": "tool",
            "text": tool(
                tool="editedExistingFile",
                path="src/calc.py",
                content=DIFF,
                operationIsLocatedInWorkspace=True,
            ),
            "conversationHistoryIndex": 2,
        },
        {
            "ts": T0 + 15300,
            "type": "say",
            "say": "checkpoint_created",
            "conversationHistoryIndex": 2,
            "lastCheckpointHash": "4f1c2b9e8d7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e",
            "isCheckpointCheckedOut": False,
        },
        {
            "ts": T0 + 15400,
            "type": "say",
            "say": "api_req_started",
            "text": req(r3, 4, 95, 0.0069, 12130, 410),
            "modelInfo": MODEL,
            "conversationHistoryIndex": 3,
        },
        {
            "ts": T0 + 18000,
            "type": "ask",
            "ask": "command",
            "text": "python -m pytest -q",
            "conversationHistoryIndex": 4,
        },
        {
            "ts": T0 + 21000,
            "type": "say",
            "say": "command_output",
            "text": "no tests ran in 0.01s",
            "conversationHistoryIndex": 4,
        },
        {
            "ts": T0 + 21500,
            "type": "say",
            "say": "api_req_started",
            "text": req(r4, 4, 160, 0.0062, 12540, 95),
            "modelInfo": MODEL,
            "conversationHistoryIndex": 5,
        },
        {
            "ts": T0 + 24000,
            "type": "say",
            "say": "text",
            "text": "No tests yet; I'll add one.",
            "partial": False,
            "conversationHistoryIndex": 6,
        },
        {
            "ts": T0 + 24200,
            "type": "say",
            "say": "tool",
            "text": tool(
                tool="newFileCreated",
                path="tests/test_calc.py",
                content=TEST_PY,
                operationIsLocatedInWorkspace=True,
            ),
            "conversationHistoryIndex": 6,
        },
        {
            "ts": T0 + 28000,
            "type": "say",
            "say": "checkpoint_created",
            "conversationHistoryIndex": 6,
            "lastCheckpointHash": "a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9",
            "isCheckpointCheckedOut": False,
        },
        {
            "ts": T0 + 28100,
            "type": "say",
            "say": "api_req_started",
            "text": req(r5, 4, 120, 0.0058, 12635, 150),
            "modelInfo": MODEL,
            "conversationHistoryIndex": 7,
        },
        {
            "ts": T0 + 30500,
            "type": "ask",
            "ask": "tool",
            "text": tool(
                tool="editedExistingFile",
                path="src/calc.py",
                content="------- SEARCH\ndef sub(a, b):\n=======\ndef subtract(a, b):\n+++++++ REPLACE",
                operationIsLocatedInWorkspace=True,
            ),
            "conversationHistoryIndex": 8,
        },
        {
            "ts": T0 + 37000,
            "type": "say",
            "say": "user_feedback",
            "text": "leave sub alone",
            "images": [],
            "files": [],
            "conversationHistoryIndex": 8,
        },
        {
            "ts": T0 + 37100,
            "type": "say",
            "say": "api_req_started",
            "text": req(r6, 4, 140, 0.0066, 12785, 220),
            "modelInfo": MODEL,
            "conversationHistoryIndex": 9,
        },
        {
            "ts": T0 + 40000,
            "type": "say",
            "say": "completion_result",
            "text": "Fixed add (it subtracted) and added tests/test_calc.py.",
            "partial": False,
            "conversationHistoryIndex": 10,
            "lastCheckpointHash": "c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2",
        },
        {
            "ts": T0 + 40100,
            "type": "ask",
            "ask": "completion_result",
            "text": "",
            "conversationHistoryIndex": 10,
        },
    ]

    def assistant(*blocks: str) -> dict[str, object]:
        return {"role": "assistant", "content": [{"type": "text", "text": b} for b in blocks]}

    def user(*blocks: str) -> dict[str, object]:
        return {"role": "user", "content": [{"type": "text", "text": b} for b in blocks]}

    api = [
        user(f"<task>\n{task}\n</task>", ENV),
        assistant(
            "<thinking>The add function subtracts; read the file first.</thinking>\n\nI'll look at src/calc.py first.\n\n<read_file>\n<path>src/calc.py</path>\n</read_file>"
        ),
        user(
            "[read_file for 'src/calc.py'] Result:",
            "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n",
            ENV,
        ),
        assistant(
            f"<replace_in_file>\n<path>src/calc.py</path>\n<diff>\n{DIFF}\n</diff>\n</replace_in_file>"
        ),
        user("[replace_in_file for 'src/calc.py'] Result:", saved("src/calc.py", CALC_AFTER), ENV),
        assistant(
            "<execute_command>\n<command>python -m pytest -q</command>\n<requires_approval>false</requires_approval>\n</execute_command>"
        ),
        user(
            "[execute_command for 'python -m pytest -q'] Result:",
            "Command executed.\nOutput:\nno tests ran in 0.01s",
            ENV,
        ),
        assistant(
            f"No tests yet; I'll add one.\n\n<write_to_file>\n<path>tests/test_calc.py</path>\n<content>\n{TEST_PY}</content>\n</write_to_file>"
        ),
        user("[write_to_file for 'tests/test_calc.py'] Result:", saved("tests/test_calc.py", TEST_PY), ENV),
        assistant(
            "<replace_in_file>\n<path>src/calc.py</path>\n<diff>\n------- SEARCH\ndef sub(a, b):\n=======\ndef subtract(a, b):\n+++++++ REPLACE\n</diff>\n</replace_in_file>"
        ),
        user(
            "[replace_in_file for 'src/calc.py'] Result:",
            "The user denied this operation. The file was not updated, and maintains its original contents.",
            "The user provided the following feedback:\n<feedback>\nleave sub alone\n</feedback>",
            ENV,
        ),
        assistant(
            "<attempt_completion>\n<result>\nFixed add (it subtracted) and added tests/test_calc.py.\n</result>\n</attempt_completion>"
        ),
    ]
    meta = {
        "files_in_context": [
            {
                "path": "src/calc.py",
                "record_state": "active",
                "record_source": "read_tool",
                "cline_read_date": T0 + 4600,
                "cline_edit_date": None,
                "user_edit_date": None,
            },
            {
                "path": "src/calc.py",
                "record_state": "active",
                "record_source": "cline_edited",
                "cline_read_date": T0 + 15200,
                "cline_edit_date": T0 + 15200,
                "user_edit_date": None,
            },
            {
                "path": "tests/test_calc.py",
                "record_state": "active",
                "record_source": "cline_edited",
                "cline_read_date": T0 + 27900,
                "cline_edit_date": T0 + 27900,
                "user_edit_date": None,
            },
        ],
        "model_usage": [
            {
                "ts": T0 + 900,
                "model_id": "claude-sonnet-4-20250514",
                "model_provider_id": "anthropic",
                "mode": "act",
            }
        ],
        "environment_history": [
            {
                "ts": T0,
                "os_name": "linux",
                "os_version": "6.8.0",
                "os_arch": "x64",
                "host_name": "Visual Studio Code",
                "host_version": "1.95.3",
                "cline_version": "3.17.8",
            }
        ],
    }
    write(HERE / str(T0), ui, api, meta)


def roo() -> None:
    task = "Rename the greeting in app.js to say hello world"
    api_proto = {"apiProtocol": "anthropic"}
    ui = [
        {"ts": T0 + 1, "type": "say", "say": "text", "text": task, "images": []},
        {
            "ts": T0 + 200,
            "type": "say",
            "say": "api_req_started",
            "text": json.dumps(
                {
                    **api_proto,
                    "tokensIn": 9120,
                    "tokensOut": 240,
                    "cacheWrites": 0,
                    "cacheReads": 0,
                    "cost": 0.0310,
                }
            ),
        },
        {
            "ts": T0 + 3000,
            "type": "ask",
            "ask": "tool",
            "text": tool(
                tool="readFile", path="app.js", isOutsideWorkspace=False, content="/home/dev/site/app.js"
            ),
            "partial": False,
            "isAnswered": True,
            "autoApprovalDecision": "approve",
        },
        {
            "ts": T0 + 3100,
            "type": "say",
            "say": "api_req_started",
            "text": json.dumps(
                {
                    **api_proto,
                    "tokensIn": 9400,
                    "tokensOut": 310,
                    "cacheWrites": 0,
                    "cacheReads": 0,
                    "cost": 0.0329,
                }
            ),
        },
        {
            "ts": T0 + 6000,
            "type": "say",
            "say": "reasoning",
            "text": "Replace the string literal.",
            "partial": False,
        },
        {
            "ts": T0 + 6500,
            "type": "ask",
            "ask": "tool",
            "text": tool(
                tool="appliedDiff",
                path="app.js",
                diff="<<<<<<< SEARCH\n:start_line:1\n-------\nconsole.log('hi');\n=======\nconsole.log('hello world');\n>>>>>>> REPLACE",
                isProtected=False,
            ),
            "partial": False,
            "isAnswered": True,
        },
        {"ts": T0 + 9000, "type": "ask", "ask": "command", "text": "node app.js", "partial": False},
    ]
    api = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": f"<task>\n{task}\n</task>"},
                {
                    "type": "text",
                    "text": "<environment_details>\n# Current Workspace Directory (/home/dev/site) Files\napp.js\n</environment_details>",
                },
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "toolu_01", "name": "read_file", "input": {"path": "app.js"}}
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": "1 | console.log('hi');\n"}
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Replace the string literal, then run it."},
                {
                    "type": "tool_use",
                    "id": "toolu_02",
                    "name": "apply_diff",
                    "input": {
                        "path": "app.js",
                        "diff": "<<<<<<< SEARCH\n:start_line:1\n-------\nconsole.log('hi');\n=======\nconsole.log('hello world');\n>>>>>>> REPLACE",
                    },
                },
                {
                    "type": "tool_use",
                    "id": "toolu_03",
                    "name": "execute_command",
                    "input": {"command": "node app.js"},
                },
            ],
        },
    ]
    write(HERE / "roo-8d2e41f0-crashed", ui, api, None)


def write(folder: Path, ui: list[object], api: list[object], meta: dict[str, object] | None) -> None:
    folder.mkdir(exist_ok=True)
    (folder / "ui_messages.json").write_text(json.dumps(ui, separators=(",", ":")))
    (folder / "api_conversation_history.json").write_text(json.dumps(api, separators=(",", ":")))
    if meta is not None:
        (folder / "task_metadata.json").write_text(json.dumps(meta, indent=2))


if __name__ == "__main__":
    cline()
    roo()
