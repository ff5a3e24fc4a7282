"""The cores this process may use, and Raspberry Pi throttling changes in the log.

- :func:`usable_cores` counts the CPU affinity mask (``os.sched_getaffinity(0)``: what
  ``taskset``, cgroups' cpusets and systemd's ``CPUAffinity=`` leave the process), not the
  machine's cores; :func:`compute_threads` leaves one of them to audio capture.
- :class:`ThrottleWatch` reads the Pi firmware's throttling word (``get_throttled``) and logs
  each change of its "now" bits once (WARNING when a condition starts, INFO when it ends);
  when it flaps (more than ``flap_max`` changes in ``window_s``) the lines stop and one
  summary per window says how often it changed and which conditions were seen.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable

log = logging.getLogger("hub.resilience.cpu")

THROTTLE_FLAGS = {
    0x1: "under-voltage",
    0x2: "ARM frequency capped",
    0x4: "throttled",
    0x8: "soft temperature limit",
}
"""Bits 0-3 of ``vcgencmd get_throttled`` (raspberrypi.com/documentation, "get_throttled")."""


def usable_cores(affinity: Callable[[], set] | None = None) -> int:
    """Cores this process may run on: ``len(os.sched_getaffinity(0))`` (``os.cpu_count()``
    where the call does not exist), at least 1. ``affinity`` replaces the call (tests)."""
    try:
        cores = len(affinity() if affinity is not None else os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, cores)


def compute_threads(affinity: Callable[[], set] | None = None) -> int:
    """Threads for a compute engine (llama.cpp): the usable cores less one left to audio
    capture when there is more than one (4 cores, affinity {0} -> 1; affinity {0..3} -> 3)."""
    cores = usable_cores(affinity)
    return cores - 1 if cores > 1 else 1


def describe(bits: int) -> str:
    """``"under-voltage, throttled"`` for the set bits of a throttling word; ``"none"``."""
    names = [name for bit, name in THROTTLE_FLAGS.items() if bits & bit]
    return ", ".join(names) or "none"


class ThrottleWatch:
    """Logs changes of the throttling state (see the module doc).

    Args:
        read_word: returns the current throttling word, or None where there is none
            (the probe passes :func:`hub.resilience.load.read_throttled_word`; this module
            does not import it, so load.py and cpu.py are no circle).
        clock: monotonic seconds.
        window_s: the flapping window, seconds.
        flap_max: changes per window logged one by one; more are summarized.
    """

    def __init__(
        self,
        read_word: Callable[[], int | None],
        clock: Callable[[], float] = time.monotonic,
        window_s: float = 600.0,
        flap_max: int = 3,
    ):
        self._read, self._clock = read_word, clock
        self.window_s, self.flap_max = window_s, flap_max
        self.state: int | None = None
        self._changes: list[float] = []
        self._held = 0
        self._seen = 0
        self._held_since = 0.0

    def poll(self) -> int | None:
        """Read the word now and :meth:`observe` it; returns it."""
        word = self._read()
        self.observe(word, self._clock())
        return word

    def observe(self, word: int | None, now: float) -> None:
        """Take one reading (None: no reading, ignored) made at monotonic ``now``."""
        self._summarize(now)
        if word is None:
            return
        bits = word & 0xF
        if self.state is None:
            self.state = bits
            if bits:
                log.warning("throttling at start: %s (get_throttled=0x%x)", describe(bits), word)
            return
        if bits == self.state:
            return
        was, self.state = self.state, bits
        self._changes = [t for t in self._changes if now - t < self.window_s] + [now]
        if len(self._changes) <= self.flap_max:
            if bits & ~was:
                log.warning("throttling: %s (get_throttled=0x%x)", describe(bits), word)
            else:
                log.info("throttling eased: now %s (was %s)", describe(bits), describe(was))
            return
        if not self._held:
            self._held_since = now
        self._held += 1
        self._seen |= bits | was

    def _summarize(self, now: float) -> None:
        """One line for the changes held back once their window has passed."""
        if self._held and now - self._held_since >= self.window_s:
            log.warning(
                "throttling flapped: %d more changes in %.0f s (seen: %s); now %s",
                self._held,
                now - self._held_since,
                describe(self._seen),
                describe(self.state or 0),
            )
            self._held, self._seen = 0, 0
