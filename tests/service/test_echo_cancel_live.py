"""Echo cancellation on a device whose speaker is heard by its microphone: with
``scripts/echo-cancel.sh`` (PulseAudio's ``module-echo-cancel``) between the microphone and
the hub, the user's "stop" said over the hub's own ring, its echo in the microphone, stops it
(BENCHMARKS.md, "Stop listener and the hub's own voice"); ``hub doctor`` says the microphone
is echo-cancelled.

Wiring (``scripts/measure_stop_echo.py --aec``): the hub plays to the canceller's sink
``hub_ec_speaker``, which passes it on to the null sink ``hub_speaker`` and keeps it as the
reference; the echo path (the null sink's monitor, gain 0.5, 60 ms) and the user's voice go
into the FIFO microphone ``hub_mic``, the canceller's mic; the hub records its source
``hub_ec_mic``. Both are the server's defaults, the hub's devices ``pulse``.
"""

from __future__ import annotations

import os
import subprocess
import time

import numpy as np
import pytest

from hub.audio.echo_cancel import echo_cancel_state
from hub.service.stopword import STOP_PHRASES

from daemon_live import (
    REPO,
    Daemon,
    Feeder,
    Recorder,
    server,  # noqa: F401  (a fixture)
    write_config,
)
from live_audio import silence, synth

pytestmark = [pytest.mark.live, pytest.mark.models]

LOUD = 300.0
"""A speaker block louder than this (int16 RMS) is playback."""


def echo_cancel(env: dict) -> None:
    """Run ``scripts/echo-cancel.sh`` on the test server (idempotent)."""
    subprocess.run(
        ["bash", str(REPO / "scripts" / "echo-cancel.sh")],
        env={**os.environ, **env},
        check=True,
        capture_output=True,
        timeout=30,
    )


def test_aec_the_script_makes_the_microphone_echo_cancelled_for_doctor(server, monkeypatch):
    for key in ("PULSE_SERVER", "XDG_RUNTIME_DIR"):
        monkeypatch.setenv(key, server[key])
    monkeypatch.delenv("PULSE_SOURCE", raising=False)
    echo_cancel(server)
    assert echo_cancel_state("pulse").detail == (
        "yes: the microphone is hub_ec_mic, an echo canceller's"
    )
    subprocess.run(["pactl", "set-default-source", "hub_mic"], env={**os.environ, **server})
    assert echo_cancel_state("pulse").cancelled is False
    echo_cancel(server)  # again: only made the default again
    assert echo_cancel_state("pulse").cancelled is True


def ring_starts(recorder: Recorder, since: float) -> list[float]:
    """Times of the speaker's loud blocks after ``since`` that follow a second of quiet."""
    starts, last = [], -1e9
    for t in recorder.loud_times(since, LOUD):
        if t - last > 1.0:
            starts.append(t)
        last = t
    return starts


def wait_until(check, timeout_s: float):
    """``check()``'s first truthy value within ``timeout_s``, else None."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if value := check():
            return value
        time.sleep(0.05)
    return None


@pytest.mark.xfail(
    strict=False,
    reason="the echo check measures no path behind the canceller and judges the user's stop "
    "the hub's own voice by its span's correlation (6 of 8 runs, BENCHMARKS.md)",
)
def test_aec_stop_said_over_the_ring_with_its_echo_stops_the_timer(server, tmp_path):
    echo_cancel(server)
    config = write_config(tmp_path / "hub.toml", "[llm]\nintents_on = []\nanswers_on = []\n")
    daemon = Daemon(config, server, tmp_path / "hub.db")
    recorder = feeder = None
    try:
        assert daemon.wait_log("state: listening", 240), daemon.stderr[-20:]
        recorder = Recorder(server)
        feeder = Feeder(server["HUB_TEST_MIC_FIFO"], echo=recorder, gain=0.5, delay_s=0.06)
        said = time.monotonic()
        feeder.say(
            np.concatenate(
                [synth("okay nabu"), silence(0.5), synth("set a timer for 2 seconds"), silence(1)]
            )
        )
        # The answer and the first ring may run together; the ring repeats 8 s later.
        second = wait_until(lambda: ring_starts(recorder, said)[1:2], 60)
        assert second, "the timer never rang twice"
        time.sleep(max(0.0, second[0] + 1.2 - time.monotonic()))
        feeder.say(np.concatenate([synth("stop"), silence(0.5)]))
        stopped = wait_until(lambda: timer_stopped(daemon), 10)
        assert stopped, "the user's stop over the ring did not stop it"
        assert stopped["said"] in STOP_PHRASES
        quiet_from = time.monotonic() + 1.0
        time.sleep(10)  # the next ring would have begun by now
        assert ring_starts(recorder, quiet_from) == []
    finally:
        daemon.stop()
        for part in (feeder, recorder):
            if part is not None:
                part.close()


def timer_stopped(daemon: Daemon) -> dict | None:
    """The daemon's ``stopped`` event that stopped a timer, among its lines so far, or None."""
    while (line := daemon.trace(0.01)) is not None:
        if line.get("event") == "stopped" and line.get("timer"):
            return line
    return None
