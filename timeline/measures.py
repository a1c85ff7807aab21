"""Measures: the few values per event that tables count without building the event's detail.

A model call's or result's model and token usage, and a file-changing tool call's content hashes
before and after. An exporter of a million-event session needs them for every such event, and
building each one's typed detail from its raw record costs ~13 us; an importer that has the parsed
record in hand records them while it reads for a fraction of that. Sessions whose importer does
not are measured from their details when an export asks (``timeline.facts.measures``); a test
holds both ways to the same answer.

Sparse (only events that have any), in event order; the model is an id in the session's string
pool, the hashes ids in a pool of their own (a file's hash after one change is its hash before the
next), so a million events cost a few megabytes plus each distinct hash once.
"""

from __future__ import annotations

from array import array
from typing import Any

import numpy as np

from .table import StringPool


class Measures:
    """One row per measured event: ``index`` (ascending), ``model`` (a session pool id, 0: none),
    ``input``/``output`` tokens (-1: unknown), ``pre``/``post`` (ids in :attr:`hashes`, 0: none)."""

    def __init__(self) -> None:
        self.index = array("q")
        self.model = array("I")
        self.input = array("q")
        self.output = array("q")
        self.pre = array("I")
        self.post = array("I")
        self.hashes = StringPool()

    def __len__(self) -> int:
        return len(self.index)

    def extend(self, flat: list[Any]) -> None:
        """Append rows given flat, six values each (what an importer's hot loop collects): event
        index, model (a session pool id), then input and output tokens and pre and post hashes as
        read: what is not an integer token count (0 to 2**63-1) or a string hash is "not said"."""
        self.index.extend(flat[0::6])
        self.model.extend(flat[1::6])
        for counts, given in ((self.input, flat[2::6]), (self.output, flat[3::6])):
            counts.extend([n if n.__class__ is int and 0 <= n < _TOO_MANY else -1 for n in given])
        intern = self.hashes.id
        for ids, named in ((self.pre, flat[4::6]), (self.post, flat[5::6])):
            ids.extend([intern(h) if h.__class__ is str else 0 for h in named])

    def usage(self, i: int, model: int, input: object, output: object) -> None:
        """Event ``i`` (a model call or result) used ``model`` and these tokens."""
        self.extend([i, model, input, output, None, None])

    def edit(self, i: int, pre: object, post: object) -> None:
        """Event ``i`` (a tool call) changes a file from content ``pre`` to ``post``."""
        self.extend([i, 0, None, None, pre, post])

    def copy(self) -> Measures:
        """An independent copy (the columns duplicated, the hash pool shared as it only grows)."""
        m = Measures()
        for name in _COLUMNS:
            setattr(m, name, getattr(self, name)[:])
        m.hashes = self.hashes
        return m

    def reordered(self, new_of: array) -> None:  # type: ignore[type-arg]
        """The events were reordered (``new_of[old] = new``): follow them, keeping event order."""
        if not self.index:
            return
        new = np.frombuffer(new_of, np.int64)[np.frombuffer(self.index, np.int64)]
        order = np.argsort(new, kind="stable")
        self.index = array("q", new[order].tobytes())
        for name in _COLUMNS[1:]:
            col = getattr(self, name)
            setattr(
                self, name, array(col.typecode, np.frombuffer(col, _DTYPES[col.typecode])[order].tobytes())
            )


_COLUMNS = ("index", "model", "input", "output", "pre", "post")
_DTYPES = {"I": np.uint32, "q": np.int64}

_TOO_MANY = 1 << 63
"""The first count no token count can be (past 63 bits)."""
