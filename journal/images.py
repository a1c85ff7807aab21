"""File images of an intent: inline in the intent when small, in the blob store otherwise.

A file tool's intent names the target's content before and after by hash (``pre``, ``post``). The
content itself (the *image*) is what a redo writes and a restore puts back, so it must be durable
before the effect (docs/journal-format.md §4). An image of at most :data:`INLINE_MAX` bytes travels
inside the intent, which is fsynced anyway (``pre_image``/``post_image``: ``{"text": ...}`` for
UTF-8, ``{"base64": ...}`` otherwise) and a copy of it is left in the blob store unsynced (for
readers that look images up by hash; a power loss may lose it); a bigger one is a blob, written and
fsynced before the intent. Journals written before inline images have every image in the blob
store, so a reader looks inline first, then in the store: :func:`intent_image` is that one rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from .blobs import BlobStore
from .errors import BlobError
from .line import ABSENT, sha256_bytes

INLINE_MAX = 8192
"""Largest image (bytes of content) carried inline in its intent; bigger ones go to the blob store."""

Which = Literal["pre", "post"]


def encode_image(data: bytes) -> dict[str, str]:
    """The inline form of ``data``: readable text when it is UTF-8, base64 otherwise."""
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        import base64  # only binary images need it (the hook command imports this module per call)

        return {"base64": base64.b64encode(data).decode("ascii")}


def _decode(value: Any) -> bytes | None:
    if isinstance(value, dict):
        if isinstance(value.get("text"), str):
            return str(value["text"]).encode("utf-8")
        if isinstance(value.get("base64"), str):
            import base64
            import binascii

            try:
                return base64.b64decode(value["base64"], validate=True)
            except (binascii.Error, ValueError):
                return None
    return None


def image_fields(pre: bytes | None, post: bytes | None, blobs: BlobStore) -> dict[str, Any]:
    """The intent fields that carry a file tool's images (``None``: the file does not exist).

    Small images are returned inline, and a copy is left in ``blobs`` without any fsync (readers
    that look images up by hash find it there; a power loss may lose it, the inline image stays).
    Bigger ones are put in ``blobs`` durably now, before the intent that names them by its
    ``pre``/``post`` hash alone. A post image equal to the pre image (a no-op) is not repeated.
    """
    fields: dict[str, Any] = {}
    for which, data in (("pre", pre), ("post", post)):
        if data is None or (which == "post" and data == pre):
            continue
        small = len(data) <= INLINE_MAX
        if small:
            fields[f"{which}_image"] = encode_image(data)
        blobs.put(data, durable=not small)
    return fields


def intent_image(intent: Mapping[str, Any], which: Which, blobs: BlobStore | None = None) -> bytes | None:
    """The content an intent's ``pre`` (or ``post``) hash names, wherever it is stored.

    Inline in the intent (``pre_image``/``post_image``; the pre image also serves as post image
    when the hashes are equal), else in ``blobs`` (the run directory's blob store: journals written
    before inline images, and images over :data:`INLINE_MAX`). Whatever is found must hash to the
    intent's hash.

    Returns:
        The bytes, or None when the hash is ``absent`` (the file does not exist).

    Raises:
        BlobError: the intent has no such hash, or the image is stored nowhere, or what is stored
            does not hash to it.
    """
    h = intent.get(which)
    if h == ABSENT:
        return None
    if not isinstance(h, str):
        raise BlobError(f"the intent records no {which} hash")
    for key in (f"{which}_image", "pre_image" if which == "post" else "post_image"):
        data = _decode(intent.get(key))
        if data is not None and sha256_bytes(data) == h:
            return data
        if key == f"{which}_image" and intent.get(key) is not None:
            raise BlobError(f"the intent's inline {which} image does not match its hash {h}")
    if blobs is None:
        raise BlobError(f"the {which} image {h} is not inline and no blob store was given")
    return blobs.get(h)
