"""The digest of what a PDF shows: every object the document reaches from its catalog, except its
attached files, in a canonical form that does not depend on object numbers or their order.

It is what a report's signed page account names (:mod:`.attest`), so the pages a reader sees can
be proven to be the ones rendered from the attached bundle. The form (``walkback-pdf-pages-v1``):

- the catalog without ``/AF`` and without ``/Names /EmbeddedFiles`` (the attachments are bound by
  their own sha256), and everything it reaches: pages, their content streams and resources
  (fonts, images), outlines, metadata, output intents;
- null ``n``, booleans ``t``/``f``, a number ``i<text>;`` (as written), a name ``/<bytes>;``, a
  string ``s<length>:<bytes>``, an array ``[ … ]``, a dictionary ``< key value … >`` with keys in
  byte order, a stream its dictionary then ``S<sha256 of its decoded bytes>`` (less ``/Length``,
  and less ``/Filter``, ``/DecodeParms`` and ``/DL`` when its filters are lossless ones that are
  undone: how a stream is compressed is not what it shows);
- an indirect object is written in full where it is first met (walking in that order) and as
  ``@<n>;`` (its rank among the objects met) wherever it is met again.

The sha256 of that byte sequence is the digest. It changes with any edit a reader could see, and
with a rewrite of the file by another tool that merges, splits or adds objects (the report is
signed as written). It does not depend on compression, object streams or object numbers, so the
report is written uncompressed and without attachments to take it, which is cheaper.
"""

from __future__ import annotations

import hashlib
from typing import Any

ALG = "walkback-pdf-pages-v1"


class _Token(bytes):
    """Bytes of the canonical form itself (never a PDF byte string, which is written with its length)."""


def pages_digest(reader: Any) -> str:
    """The hex sha256 of ``reader``'s document in the canonical form above (``reader``: a
    :class:`pypdf.PdfReader`)."""
    from pypdf.generic import DictionaryObject, NameObject

    catalog = reader.trailer["/Root"].get_object()
    shown = DictionaryObject({k: v for k, v in catalog.items() if k != "/AF"})
    names = catalog.get("/Names")
    if names is not None:
        kept = {k: v for k, v in names.get_object().items() if k != "/EmbeddedFiles"}
        if kept:
            shown[NameObject("/Names")] = DictionaryObject(kept)
        else:
            del shown["/Names"]
    return digest_of(shown)


LOSSLESS = frozenset(("/FlateDecode", "/LZWDecode", "/ASCIIHexDecode", "/ASCII85Decode", "/RunLengthDecode"))
"""Filters pypdf undoes in ``get_data()``: a stream so encoded is hashed as its decoded bytes, and
how it was compressed does not enter the digest."""


def _encoding(stream: Any) -> tuple[str, ...]:
    """The keys of a stream's dictionary that say only how its bytes are stored."""
    filters = stream.get("/Filter")
    names = [] if filters is None else [filters] if isinstance(filters, str) else list(filters)
    if all(str(f) in LOSSLESS for f in names):
        return ("/Length", "/Filter", "/DecodeParms", "/DL")
    return ("/Length",)  # an image filter (DCT, JPX, ...) is part of what the bytes mean


def digest_of(top: Any) -> str:
    """The hex sha256 of ``top`` (a pypdf object) and all it reaches, in the canonical form.

    Walked with an explicit stack: an outline is a linked list as long as the report's sections.
    """
    from pypdf.generic import (
        ArrayObject,
        BooleanObject,
        DictionaryObject,
        IndirectObject,
        NameObject,
        NullObject,
        StreamObject,
        TextStringObject,
    )

    h = hashlib.sha256()
    seen: dict[tuple[int, int], int] = {}
    todo: list[Any] = [top]
    while todo:
        obj = todo.pop()
        if isinstance(obj, _Token):
            h.update(obj)
        elif isinstance(obj, IndirectObject):
            ref = (obj.idnum, obj.generation)
            if ref in seen:
                h.update(b"@%d;" % seen[ref])
            else:
                seen[ref] = len(seen)
                todo.append(obj.get_object())
        elif obj is None or isinstance(obj, NullObject):
            h.update(b"n")
        elif isinstance(obj, BooleanObject):
            h.update(b"t" if obj else b"f")
        elif isinstance(obj, NameObject):
            h.update(b"/" + obj.encode("utf-8") + b";")
        elif isinstance(obj, TextStringObject):
            raw = obj.original_bytes
            h.update(b"s%d:" % len(raw) + raw)
        elif isinstance(obj, bytes | str):  # ByteStringObject is bytes
            raw = obj if isinstance(obj, bytes) else obj.encode("utf-8")
            h.update(b"s%d:" % len(raw) + raw)
        elif isinstance(obj, ArrayObject):
            todo.append(_Token(b"]"))
            todo.extend(reversed(obj))
            todo.append(_Token(b"["))
        elif isinstance(obj, DictionaryObject):
            skip: tuple[str, ...] = ()
            if isinstance(obj, StreamObject):
                todo.append(_Token(b"S" + hashlib.sha256(obj.get_data()).digest()))
                skip = _encoding(obj)
            todo.append(_Token(b">"))
            keys = sorted((k for k in obj if k not in skip), key=str.encode, reverse=True)
            for key in keys:
                todo.append(obj.raw_get(key))
                todo.append(NameObject(key))
            todo.append(_Token(b"<"))
        else:  # a number
            h.update(b"i%s;" % str(obj).encode("ascii"))
    return h.hexdigest()
