"""The turn's deadline budget (design.md, "Deadline budget").

A :class:`Deadline` is created when speech ends (or when a replayed file / asked text has been
read). Every node gets ``min(its timeout, time left)``; retries spend the same budget and never
extend it.
"""

from __future__ import annotations

import time
from collections.abc import Callable

Clock = Callable[[], float]


class Deadline:
    """A fixed budget of seconds measured on a monotonic clock.

    Args:
        budget_s: seconds the turn may take from now, >= 0.
        clock: monotonic clock in seconds; tests pass a fake one.

    Raises:
        ValueError: ``budget_s`` is negative or not finite.
    """

    def __init__(self, budget_s: float, clock: Clock = time.monotonic):
        if not 0 <= budget_s < float("inf"):
            raise ValueError(f"deadline budget must be a finite number >= 0 s, got {budget_s!r}")
        self.budget_s = float(budget_s)
        self._clock = clock
        self.started_at = clock()
        self.ends_at = self.started_at + self.budget_s

    def left(self) -> float:
        """Seconds left in the budget, never below 0."""
        return max(0.0, self.ends_at - self._clock())

    def elapsed(self) -> float:
        """Seconds spent since the deadline was created."""
        return self._clock() - self.started_at

    def expired(self) -> bool:
        """True once no time is left."""
        return self.left() <= 0.0

    def for_node(self, timeout_s: float) -> float:
        """The time a node may take: ``min(timeout_s, left())``, in seconds, >= 0."""
        return max(0.0, min(timeout_s, self.left()))

    def __repr__(self) -> str:
        return f"Deadline(budget_s={self.budget_s:.3f}, left={self.left():.3f})"


class ManualClock:
    """A clock that moves only when told to: pass it as ``clock=`` in tests and benchmarks.

    Args:
        start: the first reading, seconds.
    """

    def __init__(self, start: float = 1000.0):
        self.now = float(start)

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move the clock forward by ``seconds`` (>= 0)."""
        if seconds < 0:
            raise ValueError(f"a monotonic clock cannot go back ({seconds!r} s)")
        self.now += seconds
