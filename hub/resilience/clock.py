"""The one clock of a hub: monotonic seconds for budgets and timings, wall time for facts.

Every node, guard, breaker, retry and the trace's timings read the clock of the turn's
context (:class:`hub.graph.state.TurnContext`), never ``time`` or ``datetime`` directly, so a
test moves a fake clock instead of sleeping.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Clock:
    """A monotonic and a wall clock.

    Args:
        monotonic: seconds that only go forward (``time.monotonic``; a
            :class:`~hub.resilience.deadline.ManualClock` in tests).
        wall: seconds since the epoch (``time.time``).
    """

    monotonic: Callable[[], float] = time.monotonic
    wall: Callable[[], float] = time.time

    def now(self) -> datetime:
        """The local time now, naive (what ``datetime.now()`` gives on the real clock)."""
        return datetime.fromtimestamp(self.wall())

    def since_ms(self, start: float) -> float:
        """Milliseconds from the monotonic reading ``start`` to now."""
        return (self.monotonic() - start) * 1000
