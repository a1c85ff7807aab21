"""RFC 3339 times as epoch seconds, fast: each minute is parsed once, the seconds added.

Agent logs stamp every record (``2026-11-29T19:51:44.382901Z``, or with a zone offset as Inspect
writes them: ``2025-05-12T20:27:36.997226-04:00``); parsing each with ``datetime`` would cost more
than parsing the JSON around it.
"""

from __future__ import annotations

import math
from typing import Any

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
