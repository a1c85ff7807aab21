"""RFC 3339 times as epoch seconds, fast: each minute is parsed once, the seconds added.

Agent logs stamp every record (``2026-11-29T19:51:44.382901Z``, or with a zone offset as Inspect
writes them: ``2025-05-12T20:27:36.997226-04:00``); parsing each with ``datetime`` would cost more
than parsing the JSON around it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .session import parse_time

MINUTES_KEPT = 4096


class MinuteClock:
    """Callable: a time value of any form -> epoch seconds (NaN if unknown).

    :attr:`minute` and :attr:`base` are the last minute seen and its epoch seconds, for a hot loop
    that inlines the common case (same minute as the previous record).
    """

    def __init__(self) -> None:
        self.minutes: dict[str, float] = {}
        self.minute: Any = ()
        """``YYYY-MM-DDTHH:MM`` of the last time parsed (the empty tuple prefixes no text)."""
        self.base = math.nan

    def __call__(self, value: Any) -> float:
        if value.__class__ is str and len(value) >= 20 and value[16] == ":":
            if value[-1] == "Z":
                key, zone, cut = value[:16], "Z", -1
            elif len(value) >= 25 and value[-3] == ":" and value[-6] in "+-":  # 2025-05-12T20:27:36.9-04:00
                zone, cut = value[-6:], -6
                key = value[:16] + zone  # never a prefix of a Z time (hot loops test ``startswith``)
            else:
                return parse_time(value)
            base = self.minutes.get(key)
            if base is None:
                if len(self.minutes) >= MINUTES_KEPT:
                    self.minutes.clear()
                base = self.minutes[key] = parse_time(value[:16] + ":00" + zone)
            self.minute, self.base = key, base
            try:
                sec = float(value[17:cut])
            except ValueError:
                return parse_time(value)
            if 0.0 <= sec < 61.0:
                return base + sec
        return parse_time(value)


_STAMP = "0000-00-00T00:00:00.000000Z"
"""The form a walkback journal stamps records in (``0`` a digit)."""
_ROW = len(_STAMP) + 1
"""A stamp and the newline after it, as :func:`times` lays them out."""
_LOW = np.frombuffer((_STAMP + "\n").encode(), np.uint8)
"""Per byte of a row: the smallest byte allowed there (``0``, or the mark itself)..."""
_SPAN = np.where(_LOW == ord("0"), 9, 0).astype(np.uint8)
"""... and how far above it a byte may be (9 for a digit, 0 for a mark)."""
_WEIGHTS = np.zeros((_ROW, 7), np.float32)
"""Digits -> year, month, day, hour, minute, second, microsecond: one product of matrices (each
below 2**24, so exact in float32)."""
for _col, (_at, _width) in enumerate(((0, 4), (5, 2), (8, 2), (11, 2), (14, 2), (17, 2), (20, 6))):
    _WEIGHTS[_at : _at + _width, _col] = 10.0 ** np.arange(_width - 1, -1, -1)


def times(values: Sequence[Any], clock: MinuteClock | None = None) -> np.ndarray:
    """Epoch seconds of many time values at once: for each, what ``clock`` gives it (NaN if
    unknown). Values in the form a walkback journal writes (``2026-11-29T19:51:44.382901Z``) are
    read together with numpy, several times faster than one by one; any other value is
    ``clock``'s. The result is the same number either way: the minute's seconds plus the seconds
    within it, each exact, added as floats."""
    clock = clock or MinuteClock()
    n = len(values)
    out = np.full(n, math.nan)
    done = np.zeros(n, bool)
    rows, offsets, ok = _stamp_rows(values)
    if len(rows):
        fields = _WEIGHTS.T @ offsets.astype(np.float32).T  # one contiguous row per field
        year, month, day, hour, minute, second, micro = fields.astype(np.int64)
        ok &= (year >= 1) & (month >= 1) & (month <= 12) & (day >= 1) & (hour < 24) & (minute < 60)
        ok &= second < 61  # as the clock: a second of 61 or more is not read this way
        months = (year - 1970) * 12 + month - 1
        first = months.astype("datetime64[M]").astype("datetime64[D]").astype(np.int64)
        ok &= day <= (months + 1).astype("datetime64[M]").astype("datetime64[D]").astype(np.int64) - first
        base = (first + day - 1) * 86400 + hour * 3600 + minute * 60
        sec = (second * 1_000_000 + micro) / 1e6
        out[rows[ok]] = (base.astype(np.float64) + sec)[ok]
        done[rows[ok]] = True
    for k in np.flatnonzero(~done).tolist():
        out[k] = clock(values[k])
    return out


def _stamp_rows(values: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The indices of the values that are text of a stamp's length, their bytes as offsets from
    :data:`_LOW` (see :func:`_rows`) and which rows have a stamp's form. When every value is text,
    their text as long as stamps would make it, and every row has the form, no value's length is
    asked: the newlines where the form has them prove them."""
    n = len(values)
    try:
        text = "\n".join(values)
    except TypeError:  # a value that is not text (a number, None)
        text = ""
    if n and len(text) == n * _ROW - 1:
        offsets, ok = _rows(text)
        if ok.all():
            return np.arange(n), offsets, ok
    rows = [k for k, v in enumerate(values) if v.__class__ is str and len(v) == len(_STAMP)]
    if not rows:
        return np.zeros(0, np.intp), np.zeros((0, _ROW), np.uint8), np.zeros(0, bool)
    offsets, ok = _rows("\n".join([values[k] for k in rows]))
    return np.array(rows, np.intp), offsets, ok


def _rows(text: str) -> tuple[np.ndarray, np.ndarray]:
    """``text`` (stamps, a newline between each two) a row per stamp: each byte (any character
    that is not ASCII a ``?``) less the smallest allowed there, and which rows have the form."""
    offsets = np.frombuffer((text + "\n").encode("ascii", "replace"), np.uint8).reshape(-1, _ROW) - _LOW
    ok = np.ones(len(offsets), bool)
    ok[np.flatnonzero(offsets > _SPAN) // _ROW] = False  # (a byte below the smallest wraps to big)
    return offsets, ok
