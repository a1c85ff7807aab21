"""The event table: one compact column per field, strings interned, sized for a million events.

Strings that repeat (kinds, agents, tools, targets, statuses) are interned once by
:class:`StringPool`; each event's raw record stays in its source (:mod:`timeline.sources`) and
the table keeps only its address.
"""

from __future__ import annotations

import math
import struct
from array import array
from typing import Any

import numpy as np

from .kinds import KIND_INDEX, OTHER


class StringPool:
    """Interns strings to small integers so repeated values cost four bytes per event."""

    def __init__(self) -> None:
        self.values: list[str] = [""]
        self.index: dict[str, int] = {"": 0}
        """value -> id; hot loops read it directly and call :meth:`id` only on a miss."""

    def id(self, value: str | None) -> int:
        if not value:
            return 0
        i = self.index.get(value)
        if i is None:
            i = len(self.values)
            self.index[value] = i
            self.values.append(value)
        return i

    def find(self, value: str) -> int | None:
        """The id of ``value`` if it was ever interned."""
        return self.index.get(value)


COLUMNS: tuple[tuple[str, str], ...] = (
    ("kind", "B"),
    ("type", "I"),
    ("lsn", "q"),
    ("ts", "d"),
    ("agent", "I"),
    ("tool", "I"),
    ("target", "I"),
    ("status", "I"),
    ("ref", "q"),
    ("src", "I"),
    ("line", "I"),
    ("offset", "q"),
    ("length", "I"),
    ("sub", "i"),
    ("flags", "B"),
)
"""Every column with its array type code, in row order (:meth:`SessionBuilder.row` takes a row's
values in this order; ``type``, ``agent``, ``tool``, ``target`` and ``status`` as pool ids)."""
NAMES = tuple(name for name, _ in COLUMNS)
POS = {name: k for k, name in enumerate(NAMES)}
_CODES = "".join(code for _, code in COLUMNS)
assert all(array(code).itemsize == struct.calcsize("=" + code) for code in _CODES)
ROW = struct.Struct("=" + _CODES)
"""One event packed as the builder keeps its pending rows: the columns in order, native byte order,
standard sizes (those of the columns' arrays), no padding. Packing a row costs a third of converting
its values one column at a time at a flush, and a flush of packed rows is one strided copy per column."""
FIELDS = tuple((struct.Struct("=" + c), struct.calcsize("=" + _CODES[:k])) for k, c in enumerate(_CODES))
"""Per column position: its packing and its offset in a packed row (to read or set one value)."""
_PACKED = np.dtype([(name, "=" + code) for name, code in COLUMNS])
INTERNED = frozenset({"type", "agent", "tool", "target", "status"})
"""The columns of pool ids (all uint32)."""
assert all(code == "I" for name, code in COLUMNS if name in INTERNED)


def unpacked(rows: bytes | bytearray) -> np.ndarray:
    """Rows packed by :data:`ROW` as a numpy record array, one field per column: a view, writable
    when ``rows`` is a ``bytearray`` (which cannot grow while the view exists)."""
    return np.frombuffer(rows, dtype=_PACKED)


class EventTable:
    """Columns of events; row ``i`` is event number ``i`` in session order.

    ``lsn`` is the lsn or seq in the source (-1 if none); ``ts`` seconds since the epoch (NaN if
    unknown); ``type`` the source's own record type; ``ref`` the index of the event this one
    completes or answers (-1); ``src`` an index into the session's sources, ``offset``/``length``
    the record's address there and ``line`` its 1-based line (0: not line-based); ``sub`` which
    part of the record the event is (-1: all of it, else e.g. a content block); ``flags`` bits of
    :mod:`timeline.kinds`.
    """

    kind: array  # type: ignore[type-arg]
    type: array  # type: ignore[type-arg]
    lsn: array  # type: ignore[type-arg]
    ts: array  # type: ignore[type-arg]
    agent: array  # type: ignore[type-arg]
    tool: array  # type: ignore[type-arg]
    target: array  # type: ignore[type-arg]
    status: array  # type: ignore[type-arg]
    ref: array  # type: ignore[type-arg]
    src: array  # type: ignore[type-arg]
    line: array  # type: ignore[type-arg]
    offset: array  # type: ignore[type-arg]
    length: array  # type: ignore[type-arg]
    sub: array  # type: ignore[type-arg]
    flags: array  # type: ignore[type-arg]

    def __init__(self, pool: StringPool | None = None) -> None:
        self.pool = pool or StringPool()
        for name, code in COLUMNS:
            setattr(self, name, array(code))

    def __len__(self) -> int:
        return len(self.kind)

    def extend_packed(self, rows: bytes | bytearray) -> None:
        """Append rows packed by :data:`ROW` (what the builder's hot path collects); ``kind`` is
        extended last, so the length is never ahead."""
        packed = unpacked(rows)
        for name in (*NAMES[1:], NAMES[0]):
            getattr(self, name).frombytes(packed[name].tobytes())

    def append(self, *, kind: str, **values: Any) -> int:
        """Append one row by column name (strings for the interned ones); returns its index."""
        row: list[Any] = [KIND_INDEX.get(kind, OTHER), 0, -1, math.nan, 0, 0, 0, 0, -1, 0, 0, -1, 0, -1, 0]
        for name, v in values.items():
            row[POS[name]] = self.pool.id(v) if name in INTERNED else v
        self.extend_packed(ROW.pack(*row))
        return len(self) - 1

    def copy(self) -> EventTable:
        """An independent copy (the columns duplicated, the pool shared as it only ever grows)."""
        t = EventTable.__new__(EventTable)
        t.pool = self.pool
        for name in NAMES:
            setattr(t, name, getattr(self, name)[:])
        return t

    def reorder(self, perm: list[int]) -> array:  # type: ignore[type-arg]
        """Put row ``perm[k]`` at position ``k`` in every column, remapping ``ref``; returns the
        map from an old index to its new one."""
        new_of = array("q", [0]) * len(perm)
        for k, old in enumerate(perm):
            new_of[old] = k
        for name, code in COLUMNS:
            if name != "ref":
                col = getattr(self, name)
                setattr(self, name, array(code, (col[old] for old in perm)))
        ref = self.ref
        self.ref = array("q", (new_of[ref[old]] if ref[old] >= 0 else -1 for old in perm))
        return new_of

    def string(self, column: array, i: int) -> str:  # type: ignore[type-arg]
        return self.pool.values[column[i]]
