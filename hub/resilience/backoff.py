"""The one back-off formula: how long to wait before the next attempt at something that failed.

Used for MQTT reconnects (:mod:`hub.devices.session`, with jitter, so many satellites that lost
the same broker do not come back at the same instant) and for a missing or failing microphone
(:mod:`hub.audio.mic`, without jitter: one process, one device).
"""

from __future__ import annotations

import random


def backoff_delay(
    attempt: int, cap_s: float, rng: random.Random | None = None, base_s: float = 0.5
) -> float:
    """Seconds to wait before retry ``attempt`` (0 = the first retry after a failure).

    ``d = min(cap_s, base_s * 2**attempt)``: 0.5, 1, 2, 4, ... s up to ``cap_s``. With ``rng``
    (the jitter's random source) the wait is "equal jitter", ``d/2 + U(0, d/2)``; without, ``d``.

    Source: Marc Brooker, "Exponential Backoff And Jitter", AWS Architecture Blog, 2015.

    Raises:
        ValueError: ``attempt`` < 0.
    """
    if attempt < 0:
        raise ValueError(f"attempt counts from 0, got {attempt!r}")
    d = min(cap_s, base_s * (2 ** min(attempt, 30)))
    return d if rng is None else d / 2 + rng.uniform(0, d / 2)
