"""Where the archive lives: one SQLite file with FTS5 by default, or a PostgreSQL server for a team.

Both hold the same four tables (sources, sessions, events, changes) and answer the same questions;
:class:`Dialect` is what differs (placeholders, the full-text index, its query language). Only
``sqlite3`` is imported here: ``walkback search`` opens this module and nothing heavier.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from walkback.journal.errors import WalkbackError

TEXT, INT, REAL = "TEXT", "BIGINT", "DOUBLE PRECISION"
SESSION_TYPES = {
    "id": TEXT,
    "path": TEXT,
    "format": TEXT,
    "agent": TEXT,
    "workspace": TEXT,
    "task": TEXT,
    "start_ts": REAL,
    "end_ts": REAL,
    "day": TEXT,
    "status": TEXT,
    "crashed": INT,
    "models": TEXT,
    "input_tokens": INT,
    "output_tokens": INT,
    "cost": REAL,
    "cost_estimated": INT,
    "events": INT,
    "failures": INT,
    "files_changed": INT,
}
"""A session's row (``models`` is a comma-separated list; ``day`` is ``YYYY-MM-DD`` of its start)."""
EVENT_TYPES = {
    "session": TEXT,
    "step": INT,
    "ts": REAL,
    "kind": TEXT,
    "agent": TEXT,
    "tool": TEXT,
    "target": TEXT,
    "status": TEXT,
    "text": TEXT,
    "facets": TEXT,
}
"""An event: its step is the viewer's (1-based), its text what search finds it by, its facets
the words its filters narrow by in the full-text index (the session's agent, the event's agent
id and its tool)."""
SCHEMA = 1
"""The tables' version: an archive of another is refused, never half-written."""
CHANGE_TYPES = {
    "session": TEXT,
    "step": INT,
    "ts": REAL,
    "agent": TEXT,
    "tool": TEXT,
    "path": TEXT,
    "name": TEXT,
    "pre": TEXT,
    "post": TEXT,
    "written": TEXT,
    "approval": TEXT,
}
"""A file change: ``path`` relative to the workspace where it lies in it, ``name`` its last part
(what blame looks a file up by), ``written`` the text the change put in the file (a Write's
content, an Edit's replacement, a patch's added lines), ``approval`` who approved it, if asked."""
USAGE_TYPES = {
    "session": TEXT,
    "day": TEXT,
    "agent": TEXT,
    "model": TEXT,
    "input_tokens": INT,
    "output_tokens": INT,
    "cost": REAL,
    "cost_estimated": INT,
}
"""A session's tokens and cost of one model (what the dashboard sums per day, agent and model)."""
SOURCE_TYPES = {"path": TEXT, "session": TEXT, "size": INT, "mtime_ns": INT, "head": TEXT}
"""A file a session was read from, as it was when indexed (what a re-index compares)."""
SESSION_COLUMNS, EVENT_COLUMNS, CHANGE_COLUMNS, USAGE_COLUMNS, SOURCE_COLUMNS = (
    tuple(t) for t in (SESSION_TYPES, EVENT_TYPES, CHANGE_TYPES, USAGE_TYPES, SOURCE_TYPES)
)
MARK = ("«", "»")
"""What a snippet puts around a match."""


class ArchiveError(WalkbackError):
    """The archive cannot be opened, or a query is malformed (exit 2)."""

    exit_code = 2


@dataclass(frozen=True)
class Filters:
    """What a search narrows to, besides its text."""

    agent: str = ""
    """A session's agent (``claude-code``, ``codex`` ...) or an agent id inside it (``main``)."""
    workspace: str = ""
    """A session whose workspace starts with this."""
    file: str = ""
    """A session that changed a file whose path ends with this."""
    tool: str = ""
    since: float | None = None
    until: float | None = None


@dataclass
class Hit:
    """One matching event."""

    session: str
    path: str
    format: str
    agent: str
    step: int
    ts: float | None
    kind: str
    tool: str
    snippet: str


@dataclass
class Dialect:
    """The SQL that differs between SQLite and PostgreSQL."""

    name: str
    mark: str
    """The parameter placeholder (``?`` or ``%s``)."""
    schema: list[str] = field(default_factory=list)

    def sql(self, text: str) -> str:
        """``text`` written with ``?`` placeholders, in this dialect's."""
        return text if self.mark == "?" else text.replace("?", self.mark)


def _columns(types: dict[str, str]) -> str:
    return ", ".join(f"{name} {kind}" for name, kind in types.items())


_TABLES = [
    f"CREATE TABLE IF NOT EXISTS sources ({_columns(SOURCE_TYPES)}, PRIMARY KEY (session, path))",
    f"CREATE TABLE IF NOT EXISTS sessions ({_columns(SESSION_TYPES)}, PRIMARY KEY (id))",
    f"CREATE TABLE IF NOT EXISTS changes ({_columns(CHANGE_TYPES)})",
    f"CREATE TABLE IF NOT EXISTS usage ({_columns(USAGE_TYPES)})",
    "CREATE INDEX IF NOT EXISTS usage_session ON usage (session)",
    "CREATE INDEX IF NOT EXISTS changes_name ON changes (name)",
    "CREATE INDEX IF NOT EXISTS changes_session ON changes (session)",
    "CREATE INDEX IF NOT EXISTS sources_session ON sources (session)",
    "CREATE INDEX IF NOT EXISTS events_session ON events (session)",
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)",
]
SQLITE = Dialect(
    "sqlite",
    "?",
    [
        f"CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY, {_columns(EVENT_TYPES)})",
        *_TABLES,
        "CREATE VIRTUAL TABLE IF NOT EXISTS events_fts "
        "USING fts5(text, facets, content='events', content_rowid='id')",
    ],
)
POSTGRES = Dialect(
    "postgresql",
    "%s",
    [
        f"CREATE TABLE IF NOT EXISTS events (id BIGSERIAL PRIMARY KEY, {_columns(EVENT_TYPES)}, "
        "tsv tsvector GENERATED ALWAYS AS "
        "(to_tsvector('simple', regexp_replace(text, '[^[:alnum:]]+', ' ', 'g'))) STORED)",
        *_TABLES,
        "CREATE INDEX IF NOT EXISTS events_tsv ON events USING GIN (tsv)",
        "CREATE INDEX IF NOT EXISTS events_tool ON events (tool)",
    ],
)


def default_path() -> Path:
    """``$WALKBACK_HOME/archive.sqlite`` (``~/.walkback`` when unset)."""
    home = os.environ.get("WALKBACK_HOME", "").strip()
    return (Path(home).expanduser() if home else Path.home() / ".walkback") / "archive.sqlite"


class Archive:
    """An open archive: the sessions indexed so far, and the questions asked of them."""

    def __init__(self, conn: Any, dialect: Dialect, where: str) -> None:
        self.conn = conn
        self.dialect = dialect
        self.where = where
        """What a person calls it (a file, or the server's URL without its password)."""

    # -- opening ------------------------------------------------------------------------------
    @classmethod
    def open(cls, url: str | None = None, *, create: bool = True) -> Archive:
        """The archive at ``url``: a ``postgresql://`` URL, ``sqlite:///PATH``, a file path, or
        None for :func:`default_path`. ``create`` makes the tables where they are missing."""
        if url and url.startswith(("postgresql://", "postgres://")):
            archive = cls._postgres(url)
        else:
            path = Path(url.removeprefix("sqlite://") if url else default_path()).expanduser()
            if not create and not path.is_file():
                raise ArchiveError(f"{path}: no archive here yet (run `walkback index` first)")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
            except (OSError, sqlite3.Error) as e:
                raise ArchiveError(f"{path}: cannot open the archive: {e}") from None
            archive = cls(conn, SQLITE, str(path))
        if create:
            with archive.transaction():
                for statement in archive.dialect.schema:
                    archive.conn.execute(statement)
                archive._run(
                    "INSERT INTO meta (key, value) VALUES ('schema', ?) ON CONFLICT DO NOTHING", [str(SCHEMA)]
                )
        archive._check_schema()
        return archive

    def _check_schema(self) -> None:
        try:
            found = self._run("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        except _missing_table(self.dialect):  # no meta table: written before the archive had versions
            found = None
        if found is None or found[0] != str(SCHEMA):
            version = found[0] if found else "none"
            raise ArchiveError(
                f"{self.where}: an archive of another walkback version (schema {version}, this one "
                f"reads {SCHEMA}): remove it and run `walkback index` again (it is rebuilt from the logs)"
            )

    @classmethod
    def _postgres(cls, url: str) -> Archive:
        try:
            import psycopg
        except ImportError:
            raise ArchiveError("a PostgreSQL archive needs psycopg: pip install walkback[team]") from None
        shown = re.sub(r"//([^:/@]+):[^@]*@", r"//\1:***@", url)
        try:
            conn = psycopg.connect(url, autocommit=True)
        except psycopg.Error as e:
            raise ArchiveError(f"{shown}: cannot connect: {str(e).strip().splitlines()[0]}") from None
        return cls(conn, POSTGRES, shown)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing ------------------------------------------------------------------------------
    def transaction(self) -> Any:
        """One transaction: a session's rows replace its old ones all at once, or not at all.
        Inside another (a batch of sessions written together), a savepoint of it."""
        if self.dialect is SQLITE:
            return _SqliteTransaction(self.conn)
        return self.conn.transaction()

    def _run(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.conn.execute(self.dialect.sql(sql), params)

    def _many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        sql = self.dialect.sql(sql)
        if self.dialect is SQLITE:
            self.conn.executemany(sql, rows)
        else:
            with self.conn.cursor() as cur:
                cur.executemany(sql, list(rows))

    def indexed(self) -> dict[str, tuple[str, dict[str, tuple[int, int]]]]:
        """Every indexed session: id -> (its path, its files' size and mtime_ns when indexed)."""
        paths = dict(self._run("SELECT id, path FROM sessions").fetchall())
        out: dict[str, tuple[str, dict[str, tuple[int, int]]]] = {sid: (p, {}) for sid, p in paths.items()}
        for sid, path, size, mtime in self._run(
            "SELECT session, path, size, mtime_ns FROM sources"
        ).fetchall():
            if sid in out:
                out[sid][1][path] = (int(size), int(mtime))
        return out

    def replace_session(self, rows: Any, sources: Iterable[Sequence[Any]]) -> None:
        """Put one session in the archive (:class:`~.rows.Rows`: its session, events, changes and
        usage rows), replacing any rows it had, in one transaction."""
        session, events, changes = rows.session, rows.events, rows.changes
        sid = session["id"]
        with self.transaction():
            self.forget(sid)
            self._run(_insert("sessions", SESSION_COLUMNS), [session[c] for c in SESSION_COLUMNS])
            self._many(_insert("events", EVENT_COLUMNS), events)
            if self.dialect is SQLITE:
                self._run(
                    "INSERT INTO events_fts (rowid, text, facets) SELECT id, text, facets FROM events "
                    "WHERE session = ?",
                    [sid],
                )
            self._many(_insert("changes", CHANGE_COLUMNS), changes)
            self._many(_insert("usage", USAGE_COLUMNS), rows.usage)
            self._many(
                _insert("sources", SOURCE_COLUMNS) + " ON CONFLICT (session, path) DO UPDATE SET "
                "size = excluded.size, mtime_ns = excluded.mtime_ns, head = excluded.head",
                sources,
            )

    def forget(self, sid: str) -> None:
        """Remove a session's rows (its sources are replaced when it is indexed again)."""
        if self.dialect is SQLITE:
            self._run(
                "INSERT INTO events_fts (events_fts, rowid, text, facets) "
                "SELECT 'delete', id, text, facets FROM events WHERE session = ?",
                [sid],
            )
        for table in ("events", "changes", "usage", "sources", "sessions"):
            key = "id" if table == "sessions" else "session"
            self._run(f"DELETE FROM {table} WHERE {key} = ?", [sid])

    # -- asking -------------------------------------------------------------------------------
    def search(self, query: str, filters: Filters = Filters(), *, limit: int = 50) -> list[Hit]:
        """The events matching ``query`` (FTS5 syntax: phrases, ``prefix*``, AND/OR/NOT), newest
        indexed first (an order the full-text index gives without ranking every match)."""
        where, params = self._filters(filters)
        if self.dialect is SQLITE:
            sql = (
                "SELECT e.session, s.path, s.format, s.agent, e.step, e.ts, e.kind, e.tool, "
                f"snippet(events_fts, 0, '{MARK[0]}', '{MARK[1]}', '…', 16) "
                "FROM events_fts JOIN events e ON e.id = events_fts.rowid "
                "JOIN sessions s ON s.id = e.session "
                f"WHERE events_fts MATCH ? {where} ORDER BY events_fts.rowid DESC LIMIT ?"
            )
            narrowed = f"text : ({fts5_query(query)})" + "".join(
                f' AND facets : "{word}"'
                for word in (filters.agent, filters.tool)
                if word and re.fullmatch(r"[\w.:-]+", word)  # else the exact filter alone decides
            )
            args: list[Any] = [narrowed, *params, limit]
        else:
            sql = (
                "SELECT e.session, s.path, s.format, s.agent, e.step, e.ts, e.kind, e.tool, "
                "ts_headline('simple', e.text, q, "
                f"'StartSel={MARK[0]},StopSel={MARK[1]},MaxWords=18,MinWords=6,MaxFragments=1') "
                "FROM events e JOIN sessions s ON s.id = e.session, to_tsquery('simple', ?) q "
                f"WHERE e.tsv @@ q {where} ORDER BY e.id DESC LIMIT ?"
            )
            args = [to_tsquery(query), *params, limit]
        try:
            rows = self._run(sql, args).fetchall()
        except _query_errors(self.dialect) as e:  # our own tables: only the query can be wrong
            message = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise ArchiveError(f"malformed search {query!r}: {message}") from None
        return [
            Hit(
                session=r[0],
                path=r[1],
                format=r[2],
                agent=r[3],
                step=int(r[4]),
                ts=r[5],
                kind=r[6],
                tool=r[7],
                snippet=" ".join(str(r[8] or "").split()),
            )
            for r in rows
        ]

    def _filters(self, f: Filters) -> tuple[str, list[Any]]:
        parts: list[str] = []
        params: list[Any] = []
        if f.agent:
            parts.append("(s.agent = ? OR e.agent = ?)")
            params += [f.agent, f.agent]
        if f.workspace:
            parts.append(f"s.workspace LIKE ?{_ESCAPE}")
            params.append(_like_prefix(f.workspace.rstrip("/")))
        if f.tool:
            parts.append("e.tool = ?")
            params.append(f.tool)
        if f.since is not None:
            parts.append("e.ts >= ?")
            params.append(f.since)
        if f.until is not None:
            parts.append("e.ts < ?")
            params.append(f.until)
        if f.file:
            changed = f"SELECT session FROM changes WHERE name = ? AND path LIKE ?{_ESCAPE}"
            parts.append(f"e.session IN ({changed})")
            params += [Path(f.file).name, "%" + _like_escape(f.file.lstrip("./"))]
        return "".join(f" AND {p}" for p in parts), params

    def changes_named(self, name: str) -> list[dict[str, Any]]:
        """Every recorded change of a file called ``name`` (any folder), oldest first."""
        rows = self._run(
            f"SELECT {', '.join(CHANGE_COLUMNS)} FROM changes WHERE name = ? ORDER BY ts, step", [name]
        ).fetchall()
        return [dict(zip(CHANGE_COLUMNS, r, strict=True)) for r in rows]

    def sessions(self, *, limit: int = 200, **where: str) -> list[dict[str, Any]]:
        """The newest sessions' rows, those whose columns equal ``where``'s values (agent, status,
        workspace, day) when given."""
        chosen = {k: v for k, v in where.items() if v}
        unknown = set(chosen) - {"agent", "status", "workspace", "day"}
        if unknown:
            raise ArchiveError(f"sessions cannot be chosen by {', '.join(sorted(unknown))}")
        clause = " AND ".join(f"{k} = ?" for k in chosen)
        rows = self._run(
            f"SELECT {', '.join(SESSION_COLUMNS)} FROM sessions {'WHERE ' + clause if clause else ''} "
            "ORDER BY start_ts DESC LIMIT ?",
            [*chosen.values(), limit],
        ).fetchall()
        return [dict(zip(SESSION_COLUMNS, r, strict=True)) for r in rows]

    def sessions_per_day(self) -> list[tuple[str, str, int]]:
        """``(day, agent, sessions)`` by the day each session started."""
        rows = self._run(
            "SELECT day, agent, COUNT(*) FROM sessions GROUP BY day, agent ORDER BY day"
        ).fetchall()
        return [(r[0] or "", r[1] or "", int(r[2])) for r in rows]

    def usage_per_day(self) -> list[tuple[str, str, str, int, int, float]]:
        """``(day, agent, model, input tokens, output tokens, cost)`` by day, agent and model."""
        rows = self._run(
            "SELECT day, agent, model, SUM(input_tokens), SUM(output_tokens), SUM(cost) FROM usage "
            "GROUP BY day, agent, model ORDER BY day"
        ).fetchall()
        return [(r[0] or "", r[1] or "", r[2] or "", int(r[3]), int(r[4]), float(r[5])) for r in rows]

    def most_edited(self, limit: int = 10) -> list[tuple[str, int, int]]:
        """``(path, changes, sessions)`` of the files changed most often."""
        rows = self._run(
            "SELECT path, COUNT(*), COUNT(DISTINCT session) FROM changes GROUP BY path "
            "ORDER BY COUNT(*) DESC, path LIMIT ?",
            [limit],
        ).fetchall()
        return [(r[0], int(r[1]), int(r[2])) for r in rows]

    def rates(self) -> list[tuple[str, int, int, int, int]]:
        """``(agent, sessions, crashed, failed sessions, events)`` per agent, most sessions first."""
        rows = self._run(
            "SELECT agent, COUNT(*), SUM(crashed), "
            "SUM(CASE WHEN status = 'failed' OR failures > 0 THEN 1 ELSE 0 END), SUM(events) "
            "FROM sessions GROUP BY agent ORDER BY COUNT(*) DESC"
        ).fetchall()
        return [(r[0] or "", int(r[1]), int(r[2] or 0), int(r[3] or 0), int(r[4] or 0)) for r in rows]

    def session(self, sid: str) -> dict[str, Any] | None:
        row = self._run(f"SELECT {', '.join(SESSION_COLUMNS)} FROM sessions WHERE id = ?", [sid]).fetchone()
        return dict(zip(SESSION_COLUMNS, row, strict=True)) if row else None

    def facets(self) -> dict[str, list[tuple[str, int]]]:
        """Sessions counted by agent, status, workspace and day (most first)."""
        out: dict[str, list[tuple[str, int]]] = {}
        for col in ("agent", "status", "workspace", "day"):
            rows = self._run(
                f"SELECT {col}, COUNT(*) FROM sessions GROUP BY {col} ORDER BY COUNT(*) DESC, {col} LIMIT 50"
            ).fetchall()
            out[col] = [(str(r[0] or ""), int(r[1])) for r in rows]
        return out

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Rows of a read-only query written with ``?`` placeholders (the dashboard's sums)."""
        return [tuple(r) for r in self._run(sql, params).fetchall()]


def _insert(table: str, columns: Sequence[str]) -> str:
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})"


class _SqliteTransaction:
    """``BEGIN``/``COMMIT`` (or ``ROLLBACK``) on an autocommit sqlite3 connection; a savepoint
    when one is open already (as psycopg's transactions nest)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.nested = False

    def __enter__(self) -> None:
        self.nested = self.conn.in_transaction
        self.conn.execute("SAVEPOINT inner" if self.nested else "BEGIN")

    def __exit__(self, kind: object, *rest: object) -> None:
        if self.nested:
            self.conn.execute("RELEASE inner" if kind is None else "ROLLBACK TO inner")
            if kind is not None:
                self.conn.execute("RELEASE inner")
        else:
            self.conn.execute("COMMIT" if kind is None else "ROLLBACK")


def _query_errors(dialect: Dialect) -> tuple[type[Exception], ...]:
    """What the database raises for a query its full-text syntax refuses."""
    if dialect is SQLITE:
        return (sqlite3.OperationalError,)
    import psycopg

    return (psycopg.errors.SyntaxError, psycopg.errors.DataException)


def _missing_table(dialect: Dialect) -> tuple[type[Exception], ...]:
    if dialect is SQLITE:
        return (sqlite3.OperationalError,)
    import psycopg

    return (psycopg.errors.UndefinedTable,)


_BARE = re.compile(r"^[\w\u0080-\U0010ffff]+\*?$")
_FTS5_TOKEN = re.compile(r'"(?:[^"]|"")*"?|[()]|[^\s()"]+')


def fts5_query(query: str) -> str:
    """``query`` as FTS5 reads it, with each word FTS5 would refuse as a bareword (``version.go``,
    ``--force``, ``a:b``) quoted as the phrase it means; operators, phrases, groups and ``prefix*``
    pass through as written."""
    out = []
    for token in _FTS5_TOKEN.findall(query):
        if token.startswith('"') or token in ("(", ")", "AND", "OR", "NOT") or _BARE.match(token):
            out.append(token)
        else:
            out.append('"' + token.replace('"', '""') + '"')
    return " ".join(out)


_ESCAPE = " ESCAPE '\\'"


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _like_prefix(text: str) -> str:
    return _like_escape(text) + "%"


_TOKEN = re.compile(r'"([^"]*)"|(\()|(\))|([^\s()"]+)')


def to_tsquery(query: str) -> str:
    """An FTS5 query in PostgreSQL's tsquery language: ``"a b"`` -> ``a <-> b``, ``pre*`` ->
    ``pre:*``, AND/OR/NOT -> ``&``/``|``/``& !``, words side by side -> ``&``."""
    out: list[str] = []

    def join(op: str) -> None:
        if out and out[-1] not in ("&", "|", "!", "(", "& !"):
            out.append(op)

    for phrase, opened, closed, word in _TOKEN.findall(query):
        if opened:
            join("&")
            out.append("(")
        elif closed:
            out.append(")")
        elif phrase:
            words = [_lexeme(w) for w in phrase.split() if _lexeme(w)]
            if words:
                join("&")
                out.append(" <-> ".join(words))
        elif word in ("AND", "OR", "NOT"):
            if not out:
                raise ArchiveError(f"malformed search {query!r}: {word} needs something before it")
            out.append({"AND": "&", "OR": "|", "NOT": "& !"}[word])
        elif _lexeme(word.rstrip("*")):
            join("&")
            out.append(_lexeme(word.rstrip("*")) + (":*" if word.endswith("*") else ""))
    return " ".join(out)


def _lexeme(word: str) -> str:
    """A word as quoted tsquery lexemes: its runs of letters and digits, as FTS5's unicode61
    tokenizer splits it (the indexed text is split the same way: see :data:`POSTGRES`)."""
    kept = re.split(r"[\W_]+", word.lower())
    kept = [w for w in kept if w]
    return " <-> ".join("'" + w + "'" for w in kept)
