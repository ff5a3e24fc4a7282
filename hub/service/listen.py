"""The live listening loop of ``hub run``: wake word -> utterance until the endpoint.

Between turns only the wake word model runs (about 4 ms per 2 s of audio); the voice
activity detector and the utterance buffer exist only from the wake word to the endpoint.
With the wake word off (``wake.enabled = false`` or no detector), the VAD runs all the time
and every utterance it hears is a turn.

The loop also tells systemd it is ready (``READY=1``, when it starts reading) and alive
(``WATCHDOG=1`` once per second of audio read), so a capture that hangs is restarted by
``WatchdogSec=`` in ``systemd/hub.service``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator

import numpy as np

from hub.audio.endpoint import Endpointer
from hub.audio.format import RATE
from hub.audio.mic import Mic
from hub.service.notify import notify
from hub.settings import Settings
from hub.wake.detector import WakeWord

log = logging.getLogger(__name__)

WATCHDOG_EVERY_SAMPLES = RATE
"""Send ``WATCHDOG=1`` after this much audio has been read (1 s)."""


class _Watchdog:
    """Counts samples read and pings systemd's watchdog once per second of audio."""

    def __init__(self):
        self.enabled = bool(os.environ.get("NOTIFY_SOCKET"))
        self._samples = 0

    def tick(self, samples: int) -> None:
        if not self.enabled:
            return
        self._samples += samples
        if self._samples >= WATCHDOG_EVERY_SAMPLES:
            self._samples = 0
            notify("WATCHDOG=1")


def _endpointer_factory(settings: Settings, use_wake: bool) -> Callable[[], Endpointer]:
    """The Endpointer built for each utterance, from ``[asr]`` and ``[wake]`` settings."""
    timeout = settings.wake.speech_timeout_s if use_wake else None

    def make() -> Endpointer:
        return Endpointer(
            settings.asr.trailing_silence_ms,
            settings.asr.max_utterance_s,
            RATE,
            start_timeout_s=timeout,
        )

    return make


def listen(
    mic: Mic,
    wake: WakeWord | None,
    settings: Settings,
    *,
    make_endpointer: Callable[[], Endpointer] | None = None,
) -> Iterator[np.ndarray]:
    """Yield one utterance per turn: int16, 16 kHz, mono numpy arrays.

    Args:
        mic: an open :class:`~hub.audio.mic.Mic` (anything with ``blocks()``).
        wake: the wake word detector; None (or ``settings.wake.enabled`` false) listens
            without a wake word.
        settings: all settings (``asr.trailing_silence_ms``, ``asr.max_utterance_s``,
            ``wake.enabled``, ``wake.speech_timeout_s`` are used).
        make_endpointer: builds the Endpointer of one utterance (tests replace it).

    Ends when the mic's blocks end. Raises what ``mic.blocks()`` raises
    (:class:`~hub.errors.DeviceUnavailableError` when the device is gone for good).
    """
    use_wake = wake is not None and settings.wake.enabled
    make = make_endpointer or _endpointer_factory(settings, use_wake)
    watchdog = _Watchdog()
    notify("READY=1\nSTATUS=listening")
    endpointer = None if use_wake else make()
    for block in mic.blocks():
        watchdog.tick(len(block))
        if endpointer is None:
            assert wake is not None  # no endpointer only while waiting for the wake word
            if wake.process(block):
                log.info("wake word heard")
                wake.reset()
                endpointer = make()
            continue
        if not endpointer.push(block):
            continue
        utterance = endpointer.audio()
        endpointer = None if use_wake else make()
        if utterance.size:
            log.info("utterance of %.2f s", utterance.size / RATE)
            yield utterance
        else:
            log.info("no speech after the wake word")
