"""When an MQTT connection tries its broker again (the policy of :mod:`hub.devices.connection`).

- exponential back-off with jitter (:func:`hub.resilience.backoff.backoff_delay`), capped at
  ``[mqtt] backoff_max_s``, reset by a connection that lasted :data:`STABLE_S`;
- a takeover of the client id ("Session taken over", or two connections in a row closed within
  :data:`STABLE_S`) waits at least :data:`TAKEOVER_WAIT_S`, said once as a WARNING;
- a refused login waits :data:`AUTH_RETRY_S`, said as one ERROR (case BC-29);
- one log line per failed attempt: why, and when the next one is (WARNING first, then INFO).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable

from hub.resilience.backoff import backoff_delay

log = logging.getLogger("hub.devices.link")

AUTH_RETRY_S = 300.0
"""A refused login (bad credentials, not authorised) is tried again this often at most."""
TAKEOVER_WAIT_S = 10.0
"""Least wait after another connection took the client id (at most 6 CONNECTs a minute)."""
STABLE_S = 10.0
"""A connection that lasted this long resets the backoff; two shorter ones in a row (a
takeover of the client id: Mosquitto 2.0 just closes the old socket) make the wait at least
:data:`TAKEOVER_WAIT_S`."""
_AUTH_CODES = frozenset({134, 135})  # Bad user name or password, Not authorized (MQTT 5)
_TAKEOVER = 142  # Session taken over


class Reconnect:
    """The reconnect state of one generation of a link: attempts, the least next wait, and
    how long the current connection has lasted.

    Args:
        where: ``host:port`` of the broker (for the log).
        client_id: the MQTT client id (for the log).
        backoff_max_s: the longest back-off, seconds (``[mqtt] backoff_max_s``).
        rng: the jitter's random source.
        clock: monotonic seconds.
    """

    def __init__(
        self,
        where: str,
        client_id: str,
        backoff_max_s: float,
        rng: random.Random,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.where, self.client_id, self.backoff_max_s = where, client_id, backoff_max_s
        self.rng, self.clock = rng, clock
        self.attempt = 0
        self.wait_s = 0.0  # set by refused/lost: the least wait before the next attempt
        self.failures_logged = 0
        self.connected_at = 0.0
        self.short_lived = 0  # connections in a row closed within STABLE_S
        self.takeover_logged = False
        self.last_error = ""

    def connected(self) -> None:
        """A CONNACK that accepted the connection."""
        self.failures_logged = 0
        self.connected_at = self.clock()

    def failed(self, exc: BaseException) -> None:
        """The broker could not be reached (TCP or TLS failed): said at the next :meth:`delay`."""
        text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        self.last_error = " ".join(text.split())

    def refused(self, reason) -> None:
        """A CONNACK that refused the connection (``reason``: paho's reason code)."""
        if getattr(reason, "value", None) in _AUTH_CODES:
            log.error(
                "MQTT broker %s refused the login as %s (%s): check [mqtt] username and "
                "password; next try in %.0f s",
                self.where,
                self.client_id,
                reason,
                AUTH_RETRY_S,
            )
            self.wait_s = AUTH_RETRY_S
        else:
            log.warning("MQTT broker %s refused the connection: %s", self.where, reason)

    def lost(self, reason) -> None:
        """An established connection closed (``reason``: paho's reason code)."""
        if self.clock() - self.connected_at >= STABLE_S:
            self.attempt, self.short_lived, self.takeover_logged = 0, 0, False
        else:
            self.short_lived += 1
        if getattr(reason, "value", None) == _TAKEOVER or self.short_lived >= 2:
            if not self.takeover_logged:
                self.takeover_logged = True
                log.warning(
                    "MQTT connection to %s as %s keeps being closed right after it "
                    "opens (another client with this id, or a broker that keeps "
                    "restarting? give each hub its own [mqtt] client_id); waiting at "
                    "least %.0f s between attempts",
                    self.where,
                    self.client_id,
                    TAKEOVER_WAIT_S,
                )
            self.wait_s = max(self.wait_s, TAKEOVER_WAIT_S)
        else:
            log.warning("MQTT connection to %s lost: %s", self.where, reason)

    def delay(self) -> float:
        """Seconds to wait before the next attempt (logged); counts the attempt."""
        delay = max(backoff_delay(self.attempt, self.backoff_max_s, self.rng), self.wait_s)
        self.attempt += 1
        self.wait_s = 0.0
        if self.last_error:  # one line per attempt: why, and when the next one is
            level = logging.WARNING if self.failures_logged == 0 else logging.INFO
            self.failures_logged += 1
            log.log(
                level,
                "MQTT broker %s unreachable: %s; next try in %.1f s",
                self.where,
                self.last_error,
                delay,
            )
            self.last_error = ""
        else:
            log.debug("MQTT: next connection attempt to %s in %.1f s", self.where, delay)
        return delay
