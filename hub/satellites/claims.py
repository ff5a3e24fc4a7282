"""One answer per wake: the first detection by capture time wins house-wide for a window.

Home Assistant's rule (``assist_pipeline``: a wake word heard by several devices within the
cooldown is answered by the first; the others end with ``duplicate_wake_up_detected``); an
arbitration study found it better and cheaper than waiting a window to rank by loudness.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

DUPLICATE_WINDOW_S = 0.5
"""Detections of other satellites within this many seconds of a claim are duplicates."""

DUPLICATE_CODE = "duplicate_wake_up_detected"
"""The ``error`` code a duplicate satellite is told (Home Assistant's code)."""


class WakeClaims:
    """House-wide wake claims; thread-safe.

    Args:
        clock: monotonic seconds (a fake in tests).
        window_s: see :data:`DUPLICATE_WINDOW_S`.
    """

    def __init__(self, clock: Callable[[], float], window_s: float = DUPLICATE_WINDOW_S):
        self._clock, self.window_s = clock, window_s
        self._last: tuple[float, str] | None = None
        self._lock = threading.Lock()

    def claim(self, satellite: str, captured: float | None = None) -> bool:
        """True when ``satellite``'s wake heard at ``captured`` (monotonic s; default now)
        starts a turn; False when another satellite claimed one within the window."""
        at = self._clock() if captured is None else captured
        with self._lock:
            last = self._last
            if last is not None and last[1] != satellite and abs(at - last[0]) < self.window_s:
                return False
            if last is None or at >= last[0] or last[1] == satellite:
                self._last = (at, satellite)
            return True
