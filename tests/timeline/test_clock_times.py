"""``timeline.clock.times`` (many time values at once, the journal's form read with numpy) gives
exactly what ``MinuteClock`` gives each value one by one: the same float, NaN where it is NaN."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
from walkback.timeline.clock import MinuteClock, times


def one_by_one(values: list[Any]) -> np.ndarray:
    clock = MinuteClock()
    return np.array([clock(v) for v in values], dtype=np.float64)


def same(values: list[Any]) -> None:
    got, want = times(values), one_by_one(values)
    bad = [
        (v, g, w) for v, g, w in zip(values, got, want, strict=True) if not (g == w or (g != g and w != w))
    ]
    assert not bad, bad[:5]


def stamp(t: datetime) -> str:
    return f"{t.year:04d}-" + t.strftime("%m-%dT%H:%M:%S.%fZ")  # (%Y does not pad years before 1000)


def test_journal_stamps_across_the_calendar_read_as_one_by_one() -> None:
    rng = random.Random(7)
    start = datetime(1, 1, 1, tzinfo=UTC)
    span = (datetime(9999, 12, 31, tzinfo=UTC) - start).total_seconds()
    values = [stamp(start + timedelta(seconds=rng.uniform(0, span))) for _ in range(20_000)]
    values += [
        stamp(datetime(2026, 12, 3, 15, 50, tzinfo=UTC) + timedelta(microseconds=k * 997))
        for k in range(20_000)
    ]
    for y in (1, 4, 100, 400, 1600, 1900, 1970, 2000, 2023, 2024, 2100, 9999):
        values += [
            f"{y:04d}-{m:02d}-{d:02d}T23:59:59.999999Z" for m in (1, 2, 3, 12) for d in (1, 28, 29, 30, 31)
        ]
    same(values)
    assert np.isfinite(times(values[:40_000])).all()


def test_everything_else_is_the_clocks() -> None:
    """Dates that do not exist, seconds of 60 and 61, other separators and zones, digits of other
    scripts, lengths one off, numbers and None: each is what the clock says."""
    values: list[Any] = [
        "2023-02-29T00:00:00.000000Z",
        "2024-02-29T00:00:00.000000Z",
        "2023-04-31T00:00:00.000000Z",
        "0000-01-01T00:00:00.000000Z",
        "2023-13-01T00:00:00.000000Z",
        "2023-00-10T00:00:00.000000Z",
        "2023-11-14T24:00:00.000000Z",
        "2023-11-14T22:60:00.000000Z",
        "2023-11-14T22:13:60.500000Z",
        "2023-11-14T22:13:61.000000Z",
        "2023-11-14 22:13:20.010000Z",
        "2023-11-14T22:13:2_.010000Z",
        "2023-11-14T22:13:+1.010000Z",
        "2023-11-14T22:13:\u0661\u0663.010000Z",
        "2023-11-14T22:13:20.01000Z",
        "2023-11-14T22:13:20.0100000Z",
        "2023-11-14T22:13:20.010000",
        "Z2023-11-14T22:13:20.010000",
        "2023-11-14T22:13:20.010-04:00",
        "2023-11-14T22:13:20Z",
        "2023-11-14T22:13:20.010000+00:00",
        "",
        None,
        1_700_000_000,
        1_700_000_000_123,
        17.5,
        {"ts": 1},
    ]
    rng = random.Random(11)
    base = "2026-12-03T15:50:55.552074Z"
    alphabet = "0123456789-T:.Z +_\u0663é?"
    for _ in range(5000):  # one character changed anywhere
        k = rng.randrange(len(base))
        values.append(base[:k] + rng.choice(alphabet) + base[k + 1 :])
    rng.shuffle(values)
    same(values)
    same([v for v in values if isinstance(v, str) and len(v) == len(base)])  # all of the journal's length
    same([])


def test_values_of_other_lengths_never_take_their_neighbours_place() -> None:
    """Values joined into one text: a stamp one character short next to one a character long fill
    the same bytes as two stamps would, and each must still be read as itself."""
    stamp = "2023-11-14T22:13:20.010000Z"
    other = "2023-11-14T22:13:21.020000Z"
    same([stamp[:-1], "Z" + other])  # the short one without its Z, the long one with a Z before
    same([stamp[:-1], "Z" + other, stamp])
    same([stamp, stamp[1:], "2" + other, stamp])
    rng = random.Random(3)
    for _ in range(300):
        values = [stamp] * 12
        k = rng.randrange(11)
        cut = rng.randrange(27)
        values[k] = values[k][:cut] + values[k][cut + 1 :]
        at = rng.randrange(28)
        values[k + 1] = values[k + 1][:at] + rng.choice("Z0:.-T") + values[k + 1][at:]
        same(values)
