"""RFC 3339 times as epoch seconds, fast: each minute is parsed once, the seconds added.

Agent logs stamp every record (``2026-11-29T19:51:44.382901Z``); parsing each with ``datetime``
would cost more than parsing the JSON around it.
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
        if value.__class__ is str and len(value) >= 20 and value[-1] == "Z" and value[16] == ":":
            key = value[:16]
            base = self.minutes.get(key)
            if base is None:
                if len(self.minutes) >= MINUTES_KEPT:
                    self.minutes.clear()
                base = self.minutes[key] = parse_time(key + ":00Z")
            self.minute, self.base = key, base
            try:
                sec = float(value[17:-1])
            except ValueError:
                return parse_time(value)
            if 0.0 <= sec < 61.0:
                return base + sec
        return parse_time(value)
