"""OTLP attribute values, ids and times, and the GenAI attribute names in their old and new forms."""

from __future__ import annotations

import base64
import binascii
import math
import re
from typing import Any

from walkback.timeline.details import Usage

from ..fields import integer

_HEX = re.compile(r"[0-9a-fA-F]+")
MAX_DEPTH = 16
USAGE: dict[str, tuple[str, ...]] = {
    "input_tokens": ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"),
    "output_tokens": ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"),
    "cache_read_tokens": (
        "gen_ai.usage.cache_read.input_tokens",
        "gen_ai.usage.cache_read_input_tokens",
        "gen_ai.usage.input_tokens.cached",
    ),
    "cache_write_tokens": (
        "gen_ai.usage.cache_creation.input_tokens",
        "gen_ai.usage.cache_creation_input_tokens",
        "gen_ai.usage.input_tokens.cache_write",
    ),
    "reasoning_tokens": (
        "gen_ai.usage.reasoning.output_tokens",
        "gen_ai.usage.reasoning_tokens",
        "gen_ai.usage.output_tokens.reasoning",
    ),
    "total_tokens": ("gen_ai.usage.total_tokens",),
}
"""The contract's usage fields and the GenAI attributes that carry them, newest name first
(``prompt_tokens``/``completion_tokens`` are the names before semconv 1.27)."""


def value(v: Any, depth: int = 0) -> Any:
    """An OTLP ``AnyValue`` as a plain value (a flat attribute map's values are plain already)."""
    if not isinstance(v, dict):
        return v
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        n = v["intValue"]
        if isinstance(n, str):
            try:
                return int(n)
            except ValueError:
                return n
        return n
    for key in ("boolValue", "doubleValue"):
        if key in v:
            return v[key]
    if depth > MAX_DEPTH:
        return None
    if "arrayValue" in v:
        values = v["arrayValue"].get("values") if isinstance(v["arrayValue"], dict) else None
        return [value(x, depth + 1) for x in values] if isinstance(values, list) else []
    if "kvlistValue" in v:
        kv = v["kvlistValue"].get("values") if isinstance(v["kvlistValue"], dict) else None
        return attributes(kv, depth + 1)
    if "bytesValue" in v:
        return v["bytesValue"]
    return None


def attributes(items: Any, depth: int = 0) -> dict[str, Any]:
    """A ``[{key, value}]`` attribute list (or a flat map) as a dict of plain values."""
    if isinstance(items, dict):
        return {str(k): value(v, depth) for k, v in items.items()}
    out: dict[str, Any] = {}
    if isinstance(items, list):
        for a in items:
            if isinstance(a, dict):
                k = a.get("key")
                if isinstance(k, str):
                    out[k] = value(a.get("value"), depth)
    return out


def span_id(v: Any) -> str:
    """A trace or span id as lowercase hex (OTLP/JSON writes hex; protobuf's JSON mapping base64)."""
    if v.__class__ is not str or not v:
        return ""
    if _HEX.fullmatch(v):
        return v if v.islower() or v.isdigit() else v.lower()
    try:
        return base64.b64decode(v, validate=True).hex()
    except (binascii.Error, ValueError):
        return v


def nanos(v: Any) -> int | None:
    """Nanoseconds since the epoch from ``"1544712660000000000"``, an int, or ``[seconds, nanos]``."""
    if isinstance(v, str):
        try:
            v = int(v)
        except ValueError:
            return None
    if isinstance(v, list) and len(v) == 2 and all(integer(x) is not None for x in v):
        return v[0] * 1_000_000_000 + v[1]
    n = integer(v)
    return n if n is not None and 0 < n < 10**20 else None


def seconds(ns: int | None) -> float:
    return ns / 1e9 if ns is not None else math.nan


def usage(attrs: dict[str, Any], *, includes_cache: bool = True) -> Usage:
    """Token usage from a span's ``gen_ai.usage.*`` attributes, old names or new.

    The conventions count cache reads in ``input_tokens``, the contract does not: they are taken
    out, unless ``includes_cache`` is False (walkback's own export writes the contract's count)."""
    found: dict[str, int | None] = {}
    for field, names in USAGE.items():
        found[field] = next((integer(attrs[n]) for n in names if integer(attrs.get(n)) is not None), None)
    given, read = found["input_tokens"], found["cache_read_tokens"]
    if includes_cache and given is not None and read and given >= read:
        found["input_tokens"] = given - read
    return Usage(**found)
