"""What a model's tokens cost, for sessions whose source does not record it (marked estimated).

The table is ``prices.json`` beside this module: US dollars per million input and output tokens,
by model name prefix (the longest prefix that matches wins), as the providers list them.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

PRICES = Path(__file__).with_name("prices.json")


@cache
def _table() -> list[tuple[str, float, float]]:
    rows = json.loads(PRICES.read_text())["per_million_tokens"]
    return sorted(((k, float(v[0]), float(v[1])) for k, v in rows.items()), key=lambda r: -len(r[0]))


def estimate(model: str, input_tokens: int, output_tokens: int) -> float:
    """The cost of these tokens of ``model`` in US dollars (0 for a model the table does not know)."""
    name = model.lower().rpartition("/")[2]
    for prefix, per_in, per_out in _table():
        if name.startswith(prefix):
            return (input_tokens * per_in + output_tokens * per_out) / 1e6
    return 0.0
