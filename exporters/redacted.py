"""Every export redacts secrets by default: the session as its redacted snapshot reads.

The bundle, the PDF report and the HTML replay redact while they snapshot their sources (the
signed way, :mod:`.bundle.sign`). Any other export (OTLP, CSV, Parquet, a plugin's) is handed the
session read again from a redacted copy of its files, made by the same rules and the same
snapshot, so what one export hides every export hides. A session in which nothing matched is
exported as it was read.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from walkback.timeline.session import Session

from .bundle.redact import Rule
from .bundle.sign import Sources, _snapshot, layout


@contextmanager
def redacted(
    session: Session, rules: list[Rule], *, entry: Path | None = None, measure: bool = False
) -> Iterator[tuple[Session, list[dict[str, Any]]]]:
    """``session`` with what ``rules`` match hidden, and the redactions (``{source, line, leaf,
    rules}``); the copy's files last as long as the context. ``entry`` is the path the session was
    read from (a run directory, ``file#part``), default its first file."""
    from walkback.importers import load
    from walkback.importers.registry import split_part

    files = session.files()
    if not rules or not files:
        yield session, []
        return
    file, part = split_part(entry) if entry is not None else (None, None)
    sources = Sources.of(session, rules)
    root, names = layout(files, file, sources.hooks)
    start = file.resolve() if file is not None else files[0].resolve()
    with tempfile.TemporaryDirectory(prefix="walkback-redacted-") as tmp:
        found = _snapshot(sources, names, Path(tmp), rules)
        if not found:
            yield session, []
            return
        name = start.relative_to(root).as_posix() if start != root else "."
        # the redacted hook journal beside the redacted transcript, not the one it was read from
        hooks = Path(tmp) / sources.hooks.resolve().relative_to(root) if sources.hooks is not None else False
        yield load(str(Path(tmp) / name) + (f"#{part}" if part else ""), measure=measure, hooked=hooks), found
