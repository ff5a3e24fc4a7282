"""When the MQTT connection tries its broker again (:mod:`hub.devices.reconnect`), on a fake
clock: the back-off, a takeover of the client id, a refused login and one line per attempt.
The live tests (test_mqtt_cases.py) only check that the connection follows it."""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass

from hub.devices.reconnect import AUTH_RETRY_S, STABLE_S, TAKEOVER_WAIT_S, Reconnect
from hub.resilience.deadline import ManualClock


@dataclass
class Reason:
    """paho's reason code: ``value`` (MQTT 5) and its text."""

    value: int
    text: str = "reason"

    def __str__(self) -> str:
        return self.text


LOST = Reason(7, "Unspecified error")
TAKEN = Reason(142, "Session taken over")


def retry(clock: ManualClock, cap_s: float = 2.0) -> Reconnect:
    return Reconnect("127.0.0.1:1883", "hub-test", cap_s, random.Random(7), clock=clock)


def test_bc29_broker_down_backoff_is_jittered_capped_and_one_line_per_attempt(caplog):
    r = retry(ManualClock())
    with caplog.at_level(logging.DEBUG, logger="hub.devices.link"):
        delays = []
        for _ in range(8):
            r.failed(ConnectionRefusedError(111, "Connection refused"))
            delays.append(r.delay())
    assert all(0.25 <= d <= 2.0 for d in delays), delays  # 0.5 s first, capped at 2 s
    assert delays[-1] >= 1.0 and len({round(d, 3) for d in delays[-4:]}) > 1  # jittered
    lines = [rec for rec in caplog.records if "unreachable" in rec.getMessage()]
    assert len(lines) == 8 and "Connection refused; next try in" in lines[0].getMessage()
    assert [rec.levelno for rec in lines[:3]] == [logging.WARNING, logging.INFO, logging.INFO]
    r.connected()  # a connection that got through: the next failure is a WARNING again
    r.failed(OSError("no route"))
    r.delay()
    assert caplog.records[-1].levelno == logging.WARNING


def test_bc29_takeover_waits_at_least_ten_seconds_and_is_said_once(caplog):
    clock = ManualClock()
    r = retry(clock)
    with caplog.at_level(logging.WARNING, logger="hub.devices.link"):
        for _ in range(5):  # two hubs with one client id evict each other within a second
            r.connected()
            clock.advance(0.5)
            r.lost(LOST)
            delay = r.delay()
            clock.advance(delay)
    assert delay >= TAKEOVER_WAIT_S  # at most 6 CONNECTs a minute
    said = [rec for rec in caplog.records if "keeps being closed" in rec.getMessage()]
    assert len(said) == 1 and "give each hub its own [mqtt] client_id" in said[0].getMessage()


def test_the_brokers_takeover_reason_waits_at_once_and_a_stable_connection_resets():
    clock = ManualClock()
    r = retry(clock)
    r.connected()
    clock.advance(1.0)
    r.lost(TAKEN)
    assert r.delay() >= TAKEOVER_WAIT_S
    r.connected()
    clock.advance(STABLE_S)  # lasted: the back-off starts again from 0.5 s
    r.lost(LOST)
    assert r.attempt == 0 and r.delay() <= 0.5


def test_bc29_refused_login_waits_five_minutes_with_one_error(caplog):
    r = retry(ManualClock())
    with caplog.at_level(logging.INFO, logger="hub.devices.link"):
        r.refused(Reason(135, "Not authorized"))
        assert r.delay() == AUTH_RETRY_S
    (error,) = [rec for rec in caplog.records if rec.levelno == logging.ERROR]
    assert "refused the login as hub-test (Not authorized)" in error.getMessage()
    assert "next try in 300 s" in error.getMessage()
    assert r.delay() < AUTH_RETRY_S  # the long wait was for one attempt
