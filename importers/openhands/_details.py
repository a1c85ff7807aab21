"""Typed details of OpenHands events, for both layouts (the reader marks which in
``session.header["layout"]``); the builders each layout shares live here."""

from __future__ import annotations

from typing import Any

from walkback.timeline.details import ABSENT, Detail, FileEdit, ModelResult, Usage, text_hash
from walkback.timeline.session import Session

from ..base import integer, mapping, string, usage


def details(session: Session, i: int) -> Detail:
    """The detail of event ``i`` of an OpenHands session."""
    from . import _details_v0, _details_v1

    layout = _details_v1 if session.header.get("layout") == "v1" else _details_v0
    return layout.details(session, i)


def editor_edit(path: str, args: dict[str, Any]) -> FileEdit:
    """The change a file editor call describes: a created file's text (and hash), the replaced
    strings, an inserted text."""
    command = string(args.get("command"))
    if command == "create":
        body = args.get("file_text")
        post = body if isinstance(body, str) else None
        return FileEdit(path=path, operation="create", pre=ABSENT, post=text_hash(post), post_text=post)
    old, new = args.get("old_str"), args.get("new_str")
    return FileEdit(
        path=path,
        old_string=old if isinstance(old, str) and command == "str_replace" else None,
        new_string=new if isinstance(new, str) else None,
    )


def observed_edit(path: str, seen: dict[str, Any], diff: str) -> FileEdit:
    """The change an editor's observation reports: the file before and after (hashed), its diff."""
    before, after = seen.get("old_content"), seen.get("new_content")
    new = seen.get("prev_exist") is False
    pre_text = before if isinstance(before, str) and not new else None
    post_text = after if isinstance(after, str) else None
    return FileEdit(
        path=path,
        operation="create" if new else "update",
        pre=ABSENT if new else text_hash(pre_text),
        post=text_hash(post_text),
        pre_text=pre_text,
        post_text=post_text,
        patch=diff if diff.startswith(("--- ", "diff ")) else None,
    )


def token_usage(u: dict[str, Any], model: str, response_id: str, **extra: Any) -> ModelResult:
    """A response's tokens (prompt tokens include the cache reads in both layouts' counts)."""
    cached = u.get("cache_read_tokens", u.get("cache_read_input_tokens"))
    if cached is None:
        cached = mapping(u.get("prompt_tokens_details")).get("cached_tokens")
    reasoning = u.get("reasoning_tokens", mapping(u.get("completion_tokens_details")).get("reasoning_tokens"))
    counts: Usage = usage(
        u.get("prompt_tokens"), cached, u.get("completion_tokens"), reasoning, u.get("total_tokens")
    )
    write = integer(u.get("cache_write_tokens", u.get("cache_creation_input_tokens")))
    return ModelResult(
        model=model,
        usage=counts.model_copy(update={"cache_write_tokens": write}),
        response_id=response_id,
        **extra,
    )
