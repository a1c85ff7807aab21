# ruff: noqa: E501 - prompt and observation literals as mini-swe-agent 1.x renders them
"""Writes the mini-swe-agent 1.x trajectory the tests read (run it to regenerate it).

There is no 1.x trajectory in the shared corpus (its file is 2.x, ``mini-swe-agent-1.1``). This one
follows what mini-swe-agent 1.x writes, from its source: ``minisweagent/run/utils/save.py``
``save_traj`` (``{"info": {exit_status, submission, model_stats: {instance_cost, api_calls},
mini_version, config}, "messages": agent.messages, "trajectory_format": "mini-swe-agent-1"} |
kwargs``, written with ``json.dumps(data, indent=2)``; the SWE-bench runner passes
``instance_id``), ``agents/default.py`` (the system and instance messages, then per step the
model's ``{"role": "assistant", "content", "extra": {"response": ...}}`` and the user message
rendering the observation; exactly one ```` ```bash ```` block runs, else the format error is the
next user message; a timeout is the timeout template; ``Submitted`` adds the output after
``COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`` as the last user message) and
``config/extra/swebench.yaml`` (the observation and error templates), as in the repository's
``tests/test_data/github_issue.traj.json``. The task and commands are ours: 29 steps on a small
repository, one of them a format error (two blocks: nothing ran), one a timeout, two failing
commands, the last one submitting the diff.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
SYSTEM = (
    "You are a helpful assistant that can interact multiple times with a computer shell to solve programming tasks.\n"
    "Your response must contain exactly ONE bash code block with ONE command (or commands connected with && or ||).\n\n"
    "Include a THOUGHT section before your command where you explain your reasoning process.\n"
    "Format your response as shown in <format_example>.\n\n<format_example>\nTHOUGHT: Your reasoning and analysis here\n\n"
    "```bash\nyour_command_here\n```\n</format_example>\n\nFailure to follow these rules will cause your response to be rejected."
)
ISSUE = "`calc.add` subtracts: add(2, 3) returns -1.\nIt should return 5."
TASK = (
    f"<pr_description>\nConsider the following PR description:\n{ISSUE}\n</pr_description>\n\n<instructions>\n"
    "# Task Instructions\n\n## Overview\nYou're a software engineer interacting continuously with a computer by submitting commands.\n"
    "## Submission\nWhen you've completed your work (reading, editing, testing), and cannot make further progress\n"
    "issue exactly the following command:\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached\n```\n"
    "</instructions>"
)
FORMAT_ERROR = (
    "Please always provide EXACTLY ONE action in triple backticks, found 2 actions.\n\n"
    "Please format your action in triple backticks as shown in <response_example>.\n\n<response_example>\n"
    "Here are some thoughts about why you want to perform the action.\n\n```bash\n<action>\n```\n</response_example>\n\n"
    "If you have completed your assignment, please consult the first message about how to\nsubmit your solution (you will not be able to continue working on this task after that)."
)
DIFF = (
    "diff --git a/calc/ops.py b/calc/ops.py\nindex 3b18e51..9d2a1c4 100644\n--- a/calc/ops.py\n+++ b/calc/ops.py\n"
    "@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"
    "diff --git a/tests/test_ops.py b/tests/test_ops.py\nnew file mode 100644\nindex 0000000..5b7c2a9\n--- /dev/null\n+++ b/tests/test_ops.py\n"
    "@@ -0,0 +1,5 @@\n+from calc.ops import add\n+\n+\n+def test_add():\n+    assert add(2, 3) == 5\n"
)
STEPS: list[tuple[str, str | None, int | None, str]] = [
    (
        "Let me look at the repository first.",
        "ls -la",
        0,
        "total 16\ndrwxr-xr-x 4 root root 4096 .\n-rw-r--r-- 1 root root  120 README.md\ndrwxr-xr-x 2 root root 4096 calc\ndrwxr-xr-x 2 root root 4096 tests\n",
    ),
    ("Find the add function.", "grep -rn 'def add' .", 0, "./calc/ops.py:1:def add(a, b):\n"),
    (
        "Read the module.",
        "cat calc/ops.py",
        0,
        "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n",
    ),
    ("Check the tests folder.", "ls tests", 0, "__init__.py\n"),
    ("Reproduce the bug.", "python -c 'from calc.ops import add; print(add(2, 3))'", 0, "-1\n"),
    ("Look at the package init.", "cat calc/__init__.py", 0, ""),
    ("Is there a test runner?", "python -m pytest --version", 1, "/usr/bin/python: No module named pytest\n"),
    ("Install pytest.", "pip install -q pytest", 0, ""),
    ("Run the (empty) test suite.", "python -m pytest -q", 5, "no tests ran in 0.01s\n"),
    ("Check git state.", "git status --short", 0, ""),
    ("Read the README for conventions.", "cat README.md", 0, "# calc\nA tiny calculator.\n"),
    ("Look at the history of the file.", "git log --oneline -- calc/ops.py", 0, "3b18e51 ops: add and sub\n"),
    ("See the commit.", "git show --stat HEAD", 0, "commit 3b18e51\n calc/ops.py | 6 ++++++\n"),
    ("Both at once.", None, None, ""),  # a format error: two blocks, nothing runs
    ("Fix the operator in add.", "sed -i '2s/a - b/a + b/' calc/ops.py", 0, ""),
    (
        "Verify the edit.",
        "nl -ba calc/ops.py | sed -n '1,3p'",
        0,
        "     1\tdef add(a, b):\n     2\t    return a + b\n     3\t\n",
    ),
    ("Reproduce again.", "python -c 'from calc.ops import add; print(add(2, 3))'", 0, "5\n"),
    ("Make sure sub is untouched.", "python -c 'from calc.ops import sub; print(sub(2, 3))'", 0, "-1\n"),
    (
        "Write a regression test.",
        "cat <<'EOF' > tests/test_ops.py\nfrom calc.ops import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\nEOF",
        0,
        "",
    ),
    (
        "Run it.",
        "python -m pytest -q tests/test_ops.py",
        0,
        ".                                                                        [100%]\n1 passed in 0.01s\n",
    ),
    (
        "Run the whole suite in watch mode to be sure.",
        "python -m pytest -q --looponfail",
        None,
        "",
    ),  # a timeout
    ("Run the whole suite once.", "python -m pytest -q", 0, "1 passed in 0.01s\n"),
    ("Negative numbers.", "python -c 'from calc.ops import add; print(add(-2, -3))'", 0, "-5\n"),
    ("Floats.", "python -c 'from calc.ops import add; print(add(0.5, 0.25))'", 0, "0.75\n"),
    ("Lint the file.", "python -m pyflakes calc/ops.py", 1, "/usr/bin/python: No module named pyflakes\n"),
    ("Compile check instead.", "python -m py_compile calc/ops.py && echo ok", 0, "ok\n"),
    ("Review the diff.", "git diff", 0, DIFF.split("diff --git a/tests")[0]),
    (
        "Stage and review everything.",
        "git add -A && git diff --cached --stat",
        0,
        " calc/ops.py       | 2 +-\n tests/test_ops.py | 5 +++++\n",
    ),
    (
        "The fix and its test are in place. Submitting.",
        "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached",
        None,
        DIFF,
    ),
]


def response(n: int, content: str) -> dict[str, object]:
    """The litellm response mini 1.x keeps under ``extra`` (``response.model_dump()``)."""
    return {
        "id": f"chatcmpl-{n:04d}",
        "created": 1750000000 + 7 * n,
        "model": "gpt-4.1-mini-2025-04-14",
        "object": "chat.completion",
        "choices": [
            {"finish_reason": "stop", "index": 0, "message": {"content": content, "role": "assistant"}}
        ],
        "usage": {
            "completion_tokens": 60 + n,
            "prompt_tokens": 1500 + 180 * n,
            "total_tokens": 1560 + 181 * n,
        },
    }


def observation(code: int, output: str) -> str:
    return f"<returncode>{code}</returncode>\n<output>\n{output}</output>"


def mini_1() -> dict[str, object]:
    messages: list[dict[str, object]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": TASK},
    ]
    for n, (thought, command, code, output) in enumerate(STEPS):
        if command is None:
            content = f"THOUGHT: {thought}\n\n```bash\ngit diff\n```\n\n```bash\ngit status\n```"
        else:
            content = f"THOUGHT: {thought}\n\n```bash\n{command}\n```"
        messages.append(
            {"role": "assistant", "content": content, "extra": {"response": response(n, content)}}
        )
        if command is None:
            messages.append({"role": "user", "content": FORMAT_ERROR})
        elif code is not None:
            messages.append({"role": "user", "content": observation(code, output)})
        elif "looponfail" in command:
            messages.append({
                "role": "user",
                "content": f"The last command <command>{command}</command> timed out and has been killed.\nThe output of the command was:\n <output>\n\n</output>\nPlease try another command and make sure to avoid those requiring interactive input.",
            })  # fmt: skip
        else:
            messages.append({"role": "user", "content": output})
    config = {
        "agent": {"system_template": SYSTEM, "step_limit": 250, "cost_limit": 3.0},
        "model": {"model_name": "gpt-4.1-mini", "model_kwargs": {"temperature": 0.0}},
        "environment": {"image": "calc:latest", "cwd": "/testbed", "timeout": 60},
        "agent_type": "minisweagent.agents.default.DefaultAgent",
        "model_type": "minisweagent.models.litellm_model.LitellmModel",
        "environment_type": "minisweagent.environments.docker.DockerEnvironment",
    }
    return {
        "info": {
            "exit_status": "Submitted",
            "submission": DIFF,
            "model_stats": {"instance_cost": 0.0213, "api_calls": len(STEPS)},
            "mini_version": "1.9.1",
            "config": config,
        },
        "messages": messages,
        "trajectory_format": "mini-swe-agent-1",
        "instance_id": "calc__calc-1",
    }


if __name__ == "__main__":
    (HERE / "calc__calc-1.traj.json").write_text(json.dumps(mini_1(), indent=2))
