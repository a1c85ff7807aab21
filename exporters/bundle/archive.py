"""Redacting inside a zip source (an Inspect ``.eval`` log): its lines are compressed, so they
cannot be redacted in place like a JSON-lines source's.

The archive is rewritten member by member: a JSON member redacted as one record (its strings
decoded, as a JSON line's are), another member line by line as text; each
member written back with its own name, time, compression and attributes, in the same order (so
the same archive and rules give the same bytes). An archive nothing matched in is carried as it
is. A redaction inside it names ``ARTIFACT!MEMBER`` as its source and the member's line, with the
original line's leaf; that leaf is not in the signed tree (the tree is over the carried, rewritten
archive), so it lets the holder of the original check a line, not prove it (``docs/bundle.md``).
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path
from typing import Any

import orjson

from . import merkle
from .redact import MARK, Rule, redact_line

ZIP = b"PK\x03\x04"
"""How a zip archive starts."""


def is_archive(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(4) == ZIP


def _is_json(data: bytes) -> bool:
    try:
        return isinstance(orjson.loads(data), (dict, list))
    except orjson.JSONDecodeError:
        return False


def redact_archive(src: Path, dest: Path, name: str, rules: list[Rule]) -> list[dict[str, Any]]:
    """Copy the archive ``src`` (carried as ``name``) to ``dest`` with ``rules`` applied inside
    its members; the redactions, one per member line changed.

    Raises:
        zipfile.BadZipFile: ``src`` is not a readable zip archive.
    """
    redactions: list[dict[str, Any]] = []
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(dest, "w") as out:
        for info in z.infolist():  # one member at a time: an archive can be larger than memory allows
            data = z.read(info)
            # a JSON member (Inspect's are indented) is redacted whole, its strings decoded
            lines = [data] if _is_json(data) else data.split(b"\n")
            for n, line in enumerate(lines, 1):
                leaf = merkle.leaves([line])
                lines[n - 1], hits = redact_line(line, rules, MARK.format(leaf.hex()), None)
                if hits:
                    source = f"{name}!{info.filename}"
                    redactions.append({"source": source, "line": n, "leaf": leaf.hex(), "rules": hits})
            out.writestr(info, b"\n".join(lines), compress_type=info.compress_type)
    if not redactions:
        shutil.copyfile(src, dest)  # carried as it is, byte for byte
    return redactions
