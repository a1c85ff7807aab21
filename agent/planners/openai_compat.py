"""A planner backed by an OpenAI-compatible ``/chat/completions`` endpoint.

Each step asks the model for exactly one JSON action (or ``{"done": true}``). The request and the
reply are journaled (``model.call``: the messages added since the last call; ``model.result``: the
raw output and token usage). A reply that is not a valid action is journaled as a rejected
``plan`` record, the error is sent back to the model, and after ``max_rejections`` in a row the
run fails; nothing the model says is executed without passing :func:`agent.actions.parse_action`.
"""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any

import orjson
from walkback.journal.errors import AgentError

from ..actions import Action, PlanError, parse_action

if TYPE_CHECKING:
    from ..harness import Harness

SYSTEM = """You are a coding agent working in a git repository. Reply with exactly one JSON object
per turn and nothing else: either {"tool": NAME, "args": {...}} to act, optionally with
"check": "<shell command that verifies the step>", or {"done": true} when the task is finished.
Tools and their arguments:
  write_file {path, content}            replace_symbol {path, old, new}
  ensure_line {path, line}              delete_file {path}
  run_command {cmd: [argv...], cwd}     external_call {method, url, body}
Paths are relative to the repository root."""
FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)


class OpenAIPlanner:
    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        task: str,
        api_key: str | None = None,
        max_steps: int = 50,
        max_rejections: int = 3,
        timeout: float = 60.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.task = task
        self.api_key = api_key
        self.max_steps = max_steps
        self.max_rejections = max_rejections
        self.timeout = timeout
        self.messages: list[dict[str, str]] = []
        self._sent = 0

    @property
    def name(self) -> str:
        return f"openai:{self.model}"

    def begin(self, h: Harness) -> None:
        self.messages = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Task: {self.task}"},
        ]
        done = [i for lsn, i in sorted(h.state.intents.items()) if h.state.committed(lsn)]
        if done:
            facts = "\n".join(f"- step {i['step']}: {i['tool']} {i['target']} (committed)" for i in done)
            self.messages.append({"role": "user", "content": f"Already done before a restart:\n{facts}"})

    def next_action(self, step: int, h: Harness) -> Action | None:
        if step >= self.max_steps:
            return None
        for _ in range(self.max_rejections):
            output = self._chat(h)
            self.messages.append({"role": "assistant", "content": output})
            try:
                obj = orjson.loads(FENCE.sub(r"\1", output.strip()))
                if isinstance(obj, dict) and obj.get("done") is True:
                    return None
                action = parse_action(obj, f"model {self.model} output at step {step}")
                if action.tool == "spawn":
                    raise PlanError(
                        f"model {self.model} output at step {step}: spawn is not offered to models"
                    )
                return action
            except (orjson.JSONDecodeError, PlanError) as e:
                why = e.message if isinstance(e, PlanError) else f"not a JSON object ({e})"
                h.reject(step, output, why)
                self.messages.append(
                    {"role": "user", "content": f"Rejected: {why}. Reply with one JSON action."}
                )
        raise PlanError(
            f"model {self.model} gave {self.max_rejections} invalid actions in a row at step {step}",
            path=h.writer.path,
        )

    def observe(self, step: int, action: Action, outcome: dict[str, Any]) -> None:
        if self.messages:
            self.messages.append(
                {"role": "user", "content": f"Step {step} result: {orjson.dumps(outcome).decode()}"}
            )

    def _chat(self, h: Harness) -> str:
        new = self.messages[self._sent :]
        self._sent = len(self.messages)
        h.append("model.call", model=self.model, messages=new)
        body = orjson.dumps({"model": self.model, "messages": self.messages, "temperature": 0})
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(
            f"{self.base_url}/chat/completions", data=body, headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                data = orjson.loads(resp.read())
            output = str(data["choices"][0]["message"]["content"] or "")
        except (urllib.error.URLError, OSError, orjson.JSONDecodeError, KeyError, IndexError, TypeError) as e:
            raise AgentError(f"model endpoint {self.base_url} failed: {getattr(e, 'reason', e)}") from None
        usage = data.get("usage") or {}
        h.append(
            "model.result",
            model=self.model,
            output=output,
            usage={
                "input_tokens": usage.get("prompt_tokens"),
                "output_tokens": usage.get("completion_tokens"),
            },
        )
        self._sent = len(self.messages) + 1  # the assistant reply is journaled here, not re-sent as new
        return output
