"""Resilience primitives of the hub (design.md, "Resilience: the four layers").

Pure, clock-injected parts the graph wires together:

- :mod:`.deadline`: :class:`Deadline`, the turn's budget; :class:`ManualClock` for tests.
- :mod:`.load`: :class:`LoadProbe`, :class:`LoadSample`, :func:`load_factor`.
- :mod:`.timeouts`: :class:`LatencyTracker`, :class:`TimeoutPolicy`.
- :mod:`.retry`: :func:`should_retry`, :func:`retry_decision`, :data:`MAX_ATTEMPTS`.
- :mod:`.breaker`: :class:`CircuitBreaker`, :class:`Breakers`.
- :mod:`.runner`: :func:`call_with_timeout`, :func:`classify`.
- :mod:`.faults`: :func:`parse_faults`, :func:`apply_fault` (``--inject NODE=FAULT``).
- :mod:`.soak`: :func:`process_counts` (threads, FDs, RSS).

Canned answers (fallback level 3) and the placeholder text (level 4) are in :mod:`hub.intents.faq`.
"""

from hub.resilience.breaker import Breakers, CircuitBreaker, CircuitOpenError
from hub.resilience.deadline import Deadline, ManualClock
from hub.resilience.faults import GARBAGE, Fault, apply_fault, parse_faults
from hub.resilience.load import FixedProbe, LoadProbe, LoadSample, load_factor
from hub.resilience.retry import MAX_ATTEMPTS, RetryDecision, retry_decision, should_retry
from hub.resilience.runner import WorkerSlots, call_with_timeout, classify
from hub.resilience.soak import process_counts
from hub.resilience.timeouts import LatencyTracker, TimeoutPolicy

__all__ = [
    "GARBAGE",
    "MAX_ATTEMPTS",
    "Breakers",
    "CircuitBreaker",
    "CircuitOpenError",
    "Deadline",
    "Fault",
    "FixedProbe",
    "LatencyTracker",
    "LoadProbe",
    "LoadSample",
    "ManualClock",
    "RetryDecision",
    "TimeoutPolicy",
    "WorkerSlots",
    "apply_fault",
    "call_with_timeout",
    "classify",
    "load_factor",
    "parse_faults",
    "process_counts",
    "retry_decision",
    "should_retry",
]
