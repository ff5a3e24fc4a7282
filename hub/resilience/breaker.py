"""Circuit breakers, one per engine (design.md, "Circuit breakers").

closed --(``failures`` consecutive counted failures)--> open
open --(``cooldown_s`` passed; derived from the monotonic clock, no timers)--> half_open
half_open --(the probe call succeeds)--> closed; --(it fails)--> open again

Only ``timeout``, ``transient`` and ``invalid_output`` count. ``bad_input`` is the user's input,
not the engine's health: a few unreadable files must not cut everyone off from the engine.
``fatal`` errors are permanent (missing model, crash): they are never retried, the engine's
factory reports them when it loads, and the graph moves that turn to the next fallback level
itself; a breaker would only re-probe a broken engine every ``cooldown_s`` for nothing. Neither
resets the count of consecutive failures either.

An open breaker costs one clock read and a comparison: :meth:`CircuitBreaker.allow` returns
False and the turn goes straight to the next fallback level (pattern: fabfuel/circuitbreaker,
without its global monitor; breakers live on the orchestrator in :class:`Breakers`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from hub.errors import KINDS, TransientError

COUNTED_KINDS = frozenset({"timeout", "transient", "invalid_output"})
"""Error kinds that count towards opening a breaker."""


class CircuitOpenError(TransientError):
    """A call was refused because its engine's breaker is open (for callers that prefer an
    exception to :meth:`CircuitBreaker.allow`); do not record it as a failure of the engine."""


class CircuitBreaker:
    """One engine's breaker. Thread-safe.

    Args:
        name: the engine, e.g. ``"llm"``; named in transitions and error messages.
        failures: consecutive counted failures that open it (>= 1).
        cooldown_s: seconds an open breaker waits before letting one probe call through.
        clock: monotonic clock in seconds (tests pass a fake one).
    """

    def __init__(
        self,
        name: str,
        failures: int = 3,
        cooldown_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ):
        if failures < 1 or cooldown_s < 0:
            raise ValueError(
                f"breaker {name!r}: need failures >= 1 and cooldown_s >= 0, "
                f"got {failures!r}, {cooldown_s!r}"
            )
        self.name = name
        self.failures = failures
        self.cooldown_s = cooldown_s
        self._clock = clock
        self._lock = threading.Lock()
        self._count = 0
        self._opened_at: float | None = None
        self._probe_at: float | None = None  # when the half-open probe was let through
        self._shown = "closed"  # last state written to transitions
        self._transitions: list[dict] = []

    def _derive(self, now: float) -> str:
        """The state at ``now``; records open -> half_open when it is first seen."""
        if self._opened_at is None:
            return "closed"
        half_open_at = self._opened_at + self.cooldown_s
        if now < half_open_at:
            return "open"
        if self._shown == "open":
            self._move("half_open", half_open_at)
        return "half_open"

    def _move(self, to: str, at: float) -> None:
        self._transitions.append({"breaker": self.name, "from": self._shown, "to": to, "at": at})
        self._shown = to

    @property
    def state(self) -> str:
        """``"closed"``, ``"open"`` or ``"half_open"``."""
        with self._lock:
            return self._derive(self._clock())

    def allow(self) -> bool:
        """May a call go to the engine now? Closed: yes. Open: no (no call is made).
        Half-open: yes for one probe call, then no until that call is recorded or until
        another ``cooldown_s`` has passed (a probe whose result never came back)."""
        with self._lock:
            now = self._clock()
            state = self._derive(now)
            if state != "half_open":
                return state == "closed"
            if self._probe_at is not None and now - self._probe_at < self.cooldown_s:
                return False
            self._probe_at = now
            return True

    def record_success(self) -> None:
        """A call succeeded: reset the count; a half-open (or open) breaker closes."""
        with self._lock:
            now = self._clock()
            self._derive(now)
            self._count = 0
            self._opened_at = self._probe_at = None
            if self._shown != "closed":
                self._move("closed", now)

    def record_failure(self, kind: str) -> None:
        """A call failed with error ``kind`` (one of :data:`hub.errors.KINDS`).

        Counted kinds (:data:`COUNTED_KINDS`) open the breaker after ``failures`` in a row, or
        at once when the half-open probe fails. Other kinds change nothing but free the probe.

        Raises:
            ValueError: ``kind`` is not an error kind.
        """
        if kind not in KINDS:
            raise ValueError(f"unknown error kind {kind!r}; expected one of {KINDS}")
        with self._lock:
            now = self._clock()
            state = self._derive(now)
            self._probe_at = None
            if kind not in COUNTED_KINDS:
                return
            self._count += 1
            if state == "half_open" or (state == "closed" and self._count >= self.failures):
                self._opened_at = now
                self._move("open", now)

    def check(self, node: str | None = None) -> None:
        """Raise :class:`CircuitOpenError` unless :meth:`allow`; the message names the breaker
        and its state."""
        if not self.allow():
            raise CircuitOpenError(self.describe(), node=node)

    def describe(self) -> str:
        """One line: the breaker, its state and, when open, seconds until the probe."""
        with self._lock:
            now = self._clock()
            state = self._derive(now)
            text = f"circuit breaker {self.name!r} is {state.replace('_', '-')}"
            if state == "open":
                assert self._opened_at is not None  # set whenever the state is open
                wait = self._opened_at + self.cooldown_s - now
                text += f" after {self._count} failures; probe in {wait:.0f} s"
            return text

    def take_transitions(self) -> list[dict]:
        """Return and forget the transitions so far: ``{breaker, from, to, at}`` dicts, ``at``
        in the clock's seconds, oldest first (for the trace and the store)."""
        with self._lock:
            self._derive(self._clock())
            out, self._transitions = self._transitions, []
            return out


class Breakers:
    """The orchestrator's breakers, one per engine name, created on first use."""

    def __init__(
        self,
        failures: int = 3,
        cooldown_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._args = (failures, cooldown_s, clock)
        self._by_name: dict[str, CircuitBreaker] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings, clock: Callable[[], float] = time.monotonic) -> Breakers:
        """Build from :class:`hub.settings.ResilienceSettings`."""
        return cls(settings.breaker_failures, settings.breaker_cooldown_s, clock)

    def get(self, name: str) -> CircuitBreaker:
        """The breaker of engine ``name``."""
        with self._lock:
            if name not in self._by_name:
                self._by_name[name] = CircuitBreaker(name, *self._args)
            return self._by_name[name]

    def states(self) -> dict[str, str]:
        """``{engine: state}`` for every breaker created so far (``hub doctor``)."""
        with self._lock:
            breakers = list(self._by_name.values())
        return {b.name: b.state for b in breakers}

    def take_transitions(self) -> list[dict]:
        """Drain every breaker's transitions, ordered by ``at``."""
        with self._lock:
            breakers = list(self._by_name.values())
        out = [t for b in breakers for t in b.take_transitions()]
        return sorted(out, key=lambda t: t["at"])
