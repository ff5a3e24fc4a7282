"""The one percentile definition of the hub (latency tracking, benchmarks, ``hub stats``)."""

from __future__ import annotations

import math
from collections.abc import Iterable


def percentile(values: Iterable[float | None], q: float) -> float | None:
    """The ``q``-th percentile (0 < q <= 100) of ``values`` by the nearest-rank method.

    Nearest rank: the value at rank ``ceil(q / 100 * n)`` of the ``n`` sorted values, so the
    result is always one of the values (Hyndman & Fan 1996, definition 1). ``None`` values are
    ignored; returns None when there are none.
    """
    ordered = sorted(v for v in values if v is not None)
    if not ordered:
        return None
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]
