"""Adaptive timeouts per node (design.md, "Dynamic timeouts").

A node's timeout is its base timeout stretched by load (:func:`~hub.resilience.load.load_factor`)
or by its own recent latency (1.5 x the p90 of its last runs), whichever is larger, and never
more than the turn has left.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Collection, Iterable

from hub.errors import ConfigError
from hub.resilience.deadline import Deadline
from hub.resilience.load import Probe, load_factor
from hub.resilience.percentile import percentile

P90_MARGIN = 1.5
"""A node may take this many times its recent p90 latency."""


class LatencyTracker:
    """Latency of each node's last ``window`` completed runs, bounded memory; thread-safe.

    Record only runs that completed: a timed-out run's duration is the timeout itself, and
    feeding it back would ratchet the timeout up.
    """

    def __init__(self, window: int = 20):
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window!r}")
        self._window = window
        self._runs: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def record(self, node: str, seconds: float) -> None:
        """Add one run of ``node`` that took ``seconds``."""
        with self._lock:
            self._runs.setdefault(node, deque(maxlen=self._window)).append(float(seconds))

    def p90(self, node: str) -> float | None:
        """The 90th percentile (:func:`~hub.resilience.percentile.percentile`) of ``node``'s
        last runs, seconds; None if it has none."""
        with self._lock:
            runs = list(self._runs.get(node, ()))
        return percentile(runs, 90)

    def nodes(self) -> list[str]:
        """Nodes with at least one recorded run, sorted."""
        with self._lock:
            return sorted(self._runs)

    def record_traces(self, traces: Iterable[dict], nodes: Collection[str]) -> int:
        """Add the runs of journaled turns (a restarted hub, ``hub doctor``, keeps the latency
        it measured): ``traces`` newest first (``Store.recent_turns``), each a trace
        (:func:`hub.trace.make_trace`) whose ``timings_ms`` has milliseconds per node. Only the
        nodes in ``nodes`` that no error of the turn names count (a failed run is not a
        completed one). Returns how many runs were added."""
        added = 0
        for trace in reversed(list(traces)):
            failed = {e.get("node") for e in trace.get("errors") or () if isinstance(e, dict)}
            for node, ms in (trace.get("timings_ms") or {}).items():
                if node in nodes and node not in failed and isinstance(ms, (int, float)):
                    self.record(node, ms / 1000)
                    added += 1
        return added


class TimeoutPolicy:
    """Timeout of each node for the current load, recent latency and deadline.

    Args:
        base_s: base timeout per node, seconds (``[resilience] timeouts_s``).
        probe: reads the load (:class:`~hub.resilience.load.LoadProbe` or a fake).
        tracker: recent latency per node.
        max_factor: largest stretch of a base timeout, by load or by latency (>= 1).

    Raises:
        ConfigError: a base timeout is not a positive number, or ``max_factor`` < 1.
    """

    def __init__(
        self, base_s: dict[str, float], probe: Probe, tracker: LatencyTracker, max_factor: float
    ):
        for node, value in base_s.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ConfigError(
                    f"resilience.timeouts_s.{node}: expected a number > 0, got {value!r}"
                )
        if max_factor < 1:
            raise ConfigError(f"resilience.max_load_factor: expected >= 1, got {max_factor!r}")
        self.base_s = {node: float(v) for node, v in base_s.items()}
        self.probe = probe
        self.tracker = tracker
        self.max_factor = float(max_factor)

    @classmethod
    def from_settings(cls, settings, probe: Probe, tracker: LatencyTracker | None = None):
        """Build from :class:`hub.settings.ResilienceSettings`."""
        return cls(
            settings.timeouts_s, probe, tracker or LatencyTracker(), settings.max_load_factor
        )

    def base(self, node: str) -> float:
        """``node``'s base timeout, seconds.

        Raises:
            ConfigError: no base timeout is configured for ``node``.
        """
        try:
            return self.base_s[node]
        except KeyError:
            raise ConfigError(
                f"resilience.timeouts_s.{node}: no base timeout for node {node!r}", node=node
            ) from None

    def unbounded(self, node: str) -> float:
        """``node``'s timeout before the deadline caps it, seconds::

        clamp(max(base * load_factor, 1.5 * p90), base, base * max_factor)
        """
        base = self.base(node)
        by_load = base * load_factor(self.probe.sample(), self.max_factor)
        p90 = self.tracker.p90(node)
        by_latency = P90_MARGIN * p90 if p90 is not None else 0.0
        return min(base * self.max_factor, max(base, by_load, by_latency))

    def timeout(self, node: str, deadline: Deadline) -> float:
        """The time ``node`` may take now: :meth:`unbounded` capped by ``deadline.left()``."""
        return deadline.for_node(self.unbounded(node))

    def factors(self) -> dict:
        """What the timeouts are made of, for ``hub doctor``: the load sample, the load
        factor, and per node its base, p90 and current timeout (seconds)."""
        sample = self.probe.sample()
        nodes = sorted(set(self.base_s) | set(self.tracker.nodes()))
        return {
            "cpu_percent": sample.cpu_percent,
            "temperature_c": sample.temperature_c,
            "throttled": sample.throttled,
            "load_factor": load_factor(sample, self.max_factor),
            "max_factor": self.max_factor,
            "nodes": {
                node: {
                    "base_s": self.base_s.get(node),
                    "p90_s": self.tracker.p90(node),
                    "timeout_s": self.unbounded(node) if node in self.base_s else None,
                }
                for node in nodes
            },
        }
