"""The one back-off formula (hub.resilience.backoff): doubling from a base up to a cap, with
optional equal jitter (MQTT reconnects) or none (the microphone)."""

from __future__ import annotations

import random

import pytest

from hub.audio import mic
from hub.errors import DeviceUnavailableError
from hub.resilience.backoff import backoff_delay


def test_without_jitter_it_doubles_up_to_the_cap():
    assert [backoff_delay(n, 5.0) for n in range(7)] == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0, 5.0]
    assert backoff_delay(2, 60.0, base_s=1.0) == 4.0


def test_equal_jitter_stays_between_half_and_all_of_the_wait():
    rng = random.Random(7)
    for n in range(12):
        d = min(60.0, 0.5 * 2**n)
        got = [backoff_delay(n, 60.0, rng) for _ in range(50)]
        assert all(d / 2 <= g <= d for g in got)
        assert len(set(got)) > 1  # jittered


def test_a_huge_attempt_number_is_capped_not_an_overflow():
    assert backoff_delay(10_000, 60.0) == 60.0


def test_a_negative_attempt_is_refused():
    with pytest.raises(ValueError):
        backoff_delay(-1, 60.0)


def test_the_microphone_waits_with_the_same_formula():
    """hub.audio.mic's pauses between attempts at a missing device: 0.5, 1, 2, 4, 5, 5 s."""
    pauses: list[float] = []

    class NoDevice:
        PortAudioError = OSError

        def query_devices(self, kind=None):
            return []

        def _terminate(self):
            pass

        def _initialize(self):
            pass

    with pytest.raises(DeviceUnavailableError):
        mic._open_waiting(NoDevice(), "usb", 17.5, pauses.append)
    assert pauses == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0]
