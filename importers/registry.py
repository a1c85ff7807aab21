"""The importer registry: scored detection, one error when nothing matches, loading in chunks.

Every importer scores what it sees (a name, a folder's layout, the first bytes); the highest score
wins. A tie goes to the format the file's first record alone claims highest (:func:`break_tie`);
one that remains is an error, so two JSON-lines formats can never silently claim each other's
files. Built-ins and plugins register through the same hook (:mod:`walkback.plugins`).
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path

from walkback.journal.errors import JournalChanged, UnknownFormat, UnusableJournal
from walkback.timeline.builder import CHUNK, SessionBuilder
from walkback.timeline.session import Session

from .base import NO, Follows, Importer, MultiSession, MustReread, head
from .describe import describe_unknown
from .hooked import merge
from .records import BOM

TIE_FILES = 64
"""Files of a folder looked at to break a tie between importers that both claim the folder."""
PART = "#"
"""``log.eval#<part>`` names one session of a file that holds several."""


def importers() -> dict[str, Importer]:
    """Every registered importer by name (built-ins first, then plugins)."""
    from walkback.plugins import manager

    out: dict[str, Importer] = {}
    for batch in reversed(manager().hook.register_importers()):
        for imp in batch:
            out.setdefault(imp.name, imp)
    return out


def split_part(path: str | Path) -> tuple[Path, str | None]:
    """``(file, part)`` of a session address; the part is None for a plain path."""
    p = Path(path)
    if p.exists() or PART not in p.name:
        return p, None
    name, _, part = p.name.rpartition(PART)
    return p.with_name(name), part or None


def scores(path: Path) -> list[tuple[int, str]]:
    """Every importer's score for ``path``, highest first (for tests and ``--explain``)."""
    data = head(path)
    out = [(imp.score(path, data), name) for name, imp in importers().items()]
    return sorted(out, key=lambda s: -s[0])


def break_tie(path: Path, tied: list[str]) -> list[str]:
    """The importers of ``tied`` that score highest on the file's first record alone.

    A file's first record says what the file is; the records after it may be another format's,
    carried verbatim (a walkback journal imported from a Claude Code session keeps every session
    record under its own type, so both importers are certain of it, but only walkback's claims its
    ``run.start`` header). A folder's tie is broken the same way by the files in it (a run folder's
    ``journal.jsonl``), when those the rule decides all name the same importer. A tie the first
    record does not break stays tied.
    """
    if len(tied) < 2:
        return tied
    if path.is_dir():
        winners: set[str] = set()
        for f in sorted(path.iterdir())[:TIE_FILES]:
            got = break_tie(f, tied) if f.is_file() else tied
            if len(got) == 1:
                winners.add(got[0])
        return [winners.pop()] if len(winners) == 1 else tied
    data = head(path)
    first = data.removeprefix(BOM).split(b"\n", 1)[0]
    if not first.strip():
        return tied
    every = importers()
    again = [(every[name].score(path, first), name) for name in tied]
    top = max(s for s, _ in again)
    return [name for s, name in again if s == top] if top > NO else tied


def detect(path: str | Path) -> Importer:
    """The importer for ``path`` (a file, a folder, or ``file#part``)."""
    p, _ = split_part(path)
    if not p.exists() and not p.is_symlink():
        raise UnusableJournal("no such file or directory", path=p)
    if not p.is_dir() and not p.is_file():
        raise UnusableJournal("not a regular file or a directory", path=p)
    if p.is_file() and not head(p).removeprefix(BOM).strip():
        raise UnusableJournal("empty file", path=p, line=1)
    ranked = scores(p)
    best = ranked[0] if ranked else (NO, "")
    if best[0] > NO:
        tied = break_tie(p, [name for s, name in ranked if s == best[0]])
        if len(tied) > 1:
            raise UnknownFormat(f"ambiguous: {' and '.join(tied)} both claim this input", path=p)
        return importers()[tied[0]]
    if p.is_dir():
        raise UnknownFormat("no journal or known agent log in this directory", path=p)
    line, why = describe_unknown(p)
    raise UnknownFormat(f"not a walkback journal or a known agent log: {why}", path=p, line=line)


def parts(path: str | Path) -> list[str]:
    """The sessions a file holds when it holds several (empty: it is one session)."""
    p, _ = split_part(path)
    imp = detect(p)
    return imp.parts(p) if isinstance(imp, MultiSession) else []


def load_chunks(
    path: str | Path,
    *,
    chunk: int = CHUNK,
    progress: object = None,
    measure: bool = False,
    hooked: bool | Path = True,
) -> Generator[Session, None, None]:
    """Detect and read ``path``, yielding the growing session after every chunk and, last, the
    complete one (a viewer shows a big session before it is read to the end), with its hook journal
    merged in when it was hooked (:mod:`.hooked`: looked for under ``$WALKBACK_HOME/hooks``, or
    under the folder ``hooked`` names, as a signed bundle carries it; ``hooked=False``: the files at
    ``path`` alone). ``measure``: have the importer record models,
    tokens and file hashes if it can (``timeline.measures``: exports)."""
    p, part = split_part(path)
    imp = detect(p)
    b = SessionBuilder(imp.name, describe=imp.details, chunk=chunk, measure=measure)
    b.session.importer = imp.name
    for _ in imp.read(p, b, part):
        s = b.flush()
        if callable(progress):
            progress(len(s))
        yield s
    s = b.finish()
    yield s if hooked is False else merge(s, None if hooked is True else hooked)


def extend(session: Session, *, chunk: int = CHUNK) -> Session | None:
    """A copy of ``session`` with what its sources appended since it was read, or None when it must
    be read again whole (its importer cannot follow, or a file was replaced or rewritten)."""
    imp = importers().get(session.importer)
    if not isinstance(imp, Follows) or not session.follow or session.hooked is not None:
        return None  # a hooked session has two sources to follow: it is read again whole
    b = SessionBuilder(session.format, describe=session.describe, chunk=chunk, extend=session.copy())
    try:
        for _ in imp.extend(b):
            b.flush()
    except (MustReread, JournalChanged):
        return None
    return b.finish()


def load(
    path: str | Path, *, progress: object = None, measure: bool = False, hooked: bool | Path = True
) -> Session:
    """Detect the format of ``path`` and import it whole (``measure``, ``hooked``: :func:`load_chunks`)."""
    *_, session = load_chunks(path, progress=progress, measure=measure, hooked=hooked)
    return session
