"""When to dial a satellite again: exponential backoff, and cheap connect probes while it is away.

Two kinds of failure get two schedules:

- **reached, then failed** (it accepted the connection but sent no ``info``, or a session
  ended): exponential backoff with jitter (:func:`hub.resilience.backoff.backoff_delay`,
  0.5, 1, 2, ... s) capped at 30 s, so a satellite that is up but misbehaving is not hammered
  with Wyoming sessions;
- **unreachable** (connection refused, no route, connect timeout): the same backoff governs
  the full attempt, but while waiting a bare TCP connect is tried every :data:`PROBE_S`
  (2 s). A refused connect costs one SYN and one RST on the LAN and about 0.1 ms of CPU, sends
  no Wyoming event and logs nothing; the first probe that connects becomes the session's
  connection. So a satellite back after minutes is served within 2 s plus one connect, not
  after up to 30 s of backoff, and an outage of an hour costs 1,800 refused SYNs.

Why not just cap the backoff at a few seconds: the cap also applies to the reached-then-failed
case, where each attempt is a Wyoming session (``describe``, ``run-satellite``) that the
satellite logs; a probe is only a TCP handshake and only runs while the port is closed.
"""

from __future__ import annotations

import random

from hub.resilience.backoff import backoff_delay

RECONNECT_CAP_S = 30.0
"""Longest wait between two full connection attempts (seconds)."""
PROBE_S = 2.0
"""Interval of the connect probes while a satellite is unreachable (seconds)."""


class Redial:
    """The reconnect schedule of one satellite (see the module doc).

    Args:
        cap_s: longest backoff (s); probe_s: the probes' interval (s);
        rng: the jitter's random source (tests seed it).
    """

    def __init__(
        self,
        cap_s: float = RECONNECT_CAP_S,
        probe_s: float = PROBE_S,
        rng: random.Random | None = None,
    ):
        self.cap_s, self.probe_s = cap_s, probe_s
        self.rng = rng or random.Random()
        self.attempt = 0
        """Failed attempts since the last session that got as far as ``info``."""
        self.unreachable = False
        """True when the last attempt could not connect at all."""

    def served(self) -> None:
        """A session got as far as ``info``: the backoff starts again from its shortest."""
        self.attempt, self.unreachable = 0, False

    def failed(self, *, reached: bool) -> None:
        """An attempt failed; ``reached``: it connected (the satellite is up)."""
        self.attempt += 1
        self.unreachable = not reached

    def plan(self) -> tuple[float, float | None]:
        """``(delay_s, probe_s)``: wait ``delay_s`` before the next full attempt, probing with
        a bare connect every ``probe_s`` meanwhile (None: no probes)."""
        delay = backoff_delay(max(0, self.attempt - 1), self.cap_s, self.rng)
        probe = self.probe_s if self.unreachable and delay > self.probe_s else None
        return delay, probe
