"""Whether the microphone the hub records is echo-cancelled by the sound server (``hub doctor``).

On a device whose speaker is near its microphone, the user's "stop" said over the hub's own
ring reaches the stop listener mixed with the ring's echo, and the stop grammar rejects it
(BENCHMARKS.md, "Stop listener and the hub's own voice"). PulseAudio's ``module-echo-cancel``
(WebRTC's canceller; ``scripts/echo-cancel.sh`` loads it) removes the echo before the hub hears
it, when the hub records the canceller's source and plays through its sink. This module asks
the sound server (``pactl``) which source the hub records and whether that one is a canceller's.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

PACTL_TIMEOUT_S = 3.0
"""Longest wait for one ``pactl`` call (a sound server that hangs must not hang ``hub doctor``)."""
THROUGH_SERVER = ("", "pulse", "default", "pipewire")
"""``[audio] input_device`` values that record through the sound server's default source."""
CANCELLER_DRIVER = "module-echo-cancel.c"
"""PulseAudio's driver name of an echo canceller's source (``pactl list short sources``)."""
SCRIPT_SOURCE = "hub_ec_mic"
"""The source ``scripts/echo-cancel.sh`` makes (PipeWire names its driver differently)."""
FIX = 'scripts/echo-cancel.sh puts the sound server\'s echo canceller in front (README, "Echo")'


@dataclass(frozen=True)
class EchoCancelState:
    """What ``hub doctor`` says about echo cancellation.

    Attributes:
        cancelled: True when the source the hub records is an echo canceller's, False when it
            is not, None when it cannot be told (no sound server, a device not through it).
        detail: one line: the source and why.
    """

    cancelled: bool | None
    detail: str


def source_is_canceller(short_sources: str, name: str) -> bool:
    """Whether ``name`` is an echo canceller's source in ``pactl list short sources`` output
    (tab-separated: index, name, driver, format, state)."""
    for line in short_sources.splitlines():
        fields = line.split("\t")
        if len(fields) >= 3 and fields[1] == name:
            return fields[2] == CANCELLER_DRIVER or name == SCRIPT_SOURCE
    return False


def _pactl(*args: str) -> str:
    done = subprocess.run(
        ["pactl", *args], capture_output=True, text=True, timeout=PACTL_TIMEOUT_S, check=True
    )
    return done.stdout.strip()


def echo_cancel_state(input_device: str) -> EchoCancelState:
    """Whether the microphone ``input_device`` (``[audio] input_device``) is echo-cancelled.

    Asks the sound server with ``pactl``: the source recorded is ``$PULSE_SOURCE`` or the
    server's default source. Never raises: a missing ``pactl``, no server or a timeout give
    ``cancelled=None`` with the reason.
    """
    if input_device.strip().lower() not in THROUGH_SERVER:
        return EchoCancelState(
            None,
            f"unknown: input_device {input_device!r} may not go through the sound server, "
            "whose echo canceller is the one checked",
        )
    try:
        source = os.environ.get("PULSE_SOURCE") or _pactl("get-default-source")
        sources = _pactl("list", "short", "sources")
    except (OSError, subprocess.SubprocessError) as exc:
        reason = (getattr(exc, "stderr", None) or str(exc)).strip().splitlines()
        return EchoCancelState(None, f"unknown: no sound server answers pactl ({reason[0]})")
    if source_is_canceller(sources, source):
        return EchoCancelState(True, f"yes: the microphone is {source}, an echo canceller's")
    return EchoCancelState(False, f"no: the microphone {source} is not echo-cancelled; {FIX}")
