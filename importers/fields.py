"""Reading the fields of records a model wrote: such logs may hold anything where a string, a
number or an object should be, so every importer reads its fields through these (never raising)."""

from __future__ import annotations

import orjson
from walkback.timeline.details import Usage

TEXT_LIMIT = 100_000
"""Characters of a free-text field kept in a detail (the raw record has all of it)."""


def text(value: object) -> str:
    """A field as display text: a string cut to :data:`TEXT_LIMIT`, anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value[:TEXT_LIMIT]
    return orjson.dumps(value, default=str).decode()[:TEXT_LIMIT]


def string(value: object) -> str:
    """A field that should be a string, or ``""`` (logs are written by models and may hold anything)."""
    return value if isinstance(value, str) else ""


def integer(value: object) -> int | None:
    """A field that should be an integer (never a bool), or None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def mapping(value: object) -> dict:  # type: ignore[type-arg]
    """A field that should be a JSON object, or an empty one."""
    return value if isinstance(value, dict) else {}


def embedded_json(value: object) -> object:
    """The value of a field some writers store as a JSON string (Codex arguments, Gemini args)."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def text_parts(content: object) -> str:
    """A message's ``content`` as text: a string as it is, or the ``text`` of its parts joined
    (the chat APIs' content lists: Gemini CLI, OpenHands, SWE-agent)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(string(mapping(part).get("text")) for part in content)
    return ""


def relative(path: str, root: str) -> str:
    """``path`` relative to the workspace ``root`` when it lies inside it (as the contract names files)."""
    root = root.rstrip("/")
    if root and path.startswith(root + "/"):
        return path[len(root) + 1 :]
    return path


def usage(given: object, cached: object, output: object, reasoning: object, total: object) -> Usage:
    """Token usage from counts whose prompt tokens include the cache reads (OpenAI, Gemini): the
    contract's input tokens exclude them."""
    prompt, hits = integer(given), integer(cached)
    return Usage(
        input_tokens=prompt - (hits or 0) if prompt is not None else None,
        output_tokens=integer(output),
        cache_read_tokens=hits,
        reasoning_tokens=integer(reasoning),
        total_tokens=integer(total),
    )


def in_force(changes: object, line: int) -> object:
    """The value in force at ``line`` from ``[[line, value], ...]`` changes in file order (a model
    switched mid-session); None before the first."""
    if not isinstance(changes, list):
        return None
    found = None
    for change in changes:
        if not isinstance(change, list) or len(change) != 2 or not isinstance(change[0], int):
            continue
        if change[0] > line:
            break
        found = change[1]
    return found
