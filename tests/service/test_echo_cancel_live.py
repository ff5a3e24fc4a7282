"""Echo cancellation on a device whose speaker is heard by its microphone:
``scripts/echo-cancel.sh`` (PulseAudio's ``module-echo-cancel``) puts a canceller between the
microphone and the hub, and ``hub doctor`` says the microphone is echo-cancelled. Whether the
user's "stop" over the hub's own ring then stops it is measured, not yet true, by
``scripts/measure_stop_echo.py --aec`` (BENCHMARKS.md, "Stop listener and the hub's own
voice"): the echo check does not yet measure a cancelled device's residual echo.

Wiring (``scripts/measure_stop_echo.py --aec``): the hub plays to the canceller's sink
``hub_ec_speaker``, which passes it on to the null sink ``hub_speaker`` and keeps it as the
reference; the echo path (the null sink's monitor, gain 0.5, 60 ms) and the user's voice go
into the FIFO microphone ``hub_mic``, the canceller's mic; the hub records its source
``hub_ec_mic``. Both are the server's defaults, the hub's devices ``pulse``.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from hub.audio.echo_cancel import echo_cancel_state

from daemon_live import (
    REPO,
    server,  # noqa: F401  (a fixture)
)

pytestmark = [pytest.mark.live]


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
