"""Issue 18: the echo check measures the device's echo path; a device whose input does not
follow its output never has speech rejected as echo."""

from __future__ import annotations

import numpy as np
import pytest
from test_supervisor import Clock, delayed, feed

from hub.service.echo import EchoGate

from live_audio import synth

pytestmark = pytest.mark.models  # Piper makes the audio

RATE = 16000


def chime(seconds: float) -> np.ndarray:
    """A ring: 0.3 s beeps with 0.2 s gaps (the envelope a wake word can match by chance)."""
    t = np.arange(round(seconds * RATE)) / RATE
    on = (t % 0.5) < 0.3
    return (8000 * np.sin(2 * np.pi * 880 * t) * on).astype(np.int16)


def test_on_a_device_without_an_echo_path_a_wake_word_over_a_ring_is_never_echo():
    clock = Clock()
    gate = EchoGate(0.7, 0.5, clock=clock)
    ring = chime(8.0)
    heard = np.zeros(len(ring), np.int16)
    for start_s in (3.0, 5.0, 6.5):  # the user talks over the ring, nothing else is heard
        wake = synth("okay nabu")
        at = round(start_s * RATE)
        heard[at : at + len(wake)] = wake
    verdicts = []
    for i in range(0, len(ring), 800):
        gate.played(ring[i : i + 800].tobytes(), RATE, 1)
        gate.heard(heard[i : i + 800])
        clock.now += 0.05
        if i // 800 % 10 == 9:
            verdicts.append(gate.is_echo())
    assert gate.coupling is not None and gate.coupling < 0.5
    assert not any(verdicts)


def test_with_an_echo_path_the_coupling_is_measured_and_echo_is_still_found():
    clock = Clock()
    gate = EchoGate(0.7, 0.5, clock=clock)
    answer = synth("Here is the weather for the week. Okay Nabu, Monday is sunny and warm.")
    feed(gate, answer, delayed(answer, 0.06, 0.5), clock)
    assert gate.coupling is not None and gate.coupling >= 0.5
    assert gate.is_echo()
