"""``detect`` -> audio -> ``detection`` (model name, timestamp in ms) or ``not-detected``.

Each connection gets its own detector state (microWakeWord models are streaming); the model
is loaded per session (a few ms) with :class:`hub.wake.detector.WakeWord`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np
from wyoming.audio import AudioChunk
from wyoming.event import Event
from wyoming.wake import Detection, NotDetected

from hub.wake.detector import BUILTINS, WakeWord
from hub.wyoming.audio_in import ChunkConverter


def wake_models(configured: str) -> list[str]:
    """The models a client may ask for: the configured one first, then the built-ins."""
    return list(dict.fromkeys([configured, *BUILTINS]))


def chosen(names, available: list[str]) -> list[str]:
    """The requested ``names`` that are available (any when None or none match)."""
    wanted = [n for n in (names or []) if n in available]
    return wanted or available[:1]


class WakeSession:
    """One detection request.

    Args:
        run: runs a blocking call on a worker thread.
        send: writes one event to the client.
        models: model names or paths to listen for.
        make: builds a detector for a model name (``hub.wake.detector.WakeWord``).
    """

    def __init__(self, run, send: Callable[[Event], Awaitable[None]], models: list[str], make=None):
        self.run, self.send, self.models = run, send, models
        self.make = make or WakeWord
        self.detectors: list[tuple[str, Any]] | None = None
        self.converter = ChunkConverter()  # each chunk by its own format (BC-45)
        self.heard_ms = 0.0
        self.detected = False

    async def audio_chunk(self, chunk: AudioChunk) -> None:
        """Feed a chunk to every model; the first detection is sent once."""
        if self.detectors is None:
            self.detectors = [(m, await self.run(self.make, m)) for m in self.models]
        pcm = self.converter.convert(chunk.audio, chunk.rate, chunk.width, chunk.channels)
        self.heard_ms += len(pcm) / 32
        if self.detected or not pcm:
            return
        block = np.frombuffer(pcm, "<i2")
        for name, detector in self.detectors:
            if await self.run(detector.process, block):
                self.detected = True
                stamp = chunk.timestamp if chunk.timestamp is not None else int(self.heard_ms)
                await self.send(Detection(name=name, timestamp=stamp).event())
                return

    async def audio_stop(self) -> None:
        """End of audio: ``not-detected`` unless a detection was sent."""
        if not self.detected:
            await self.send(NotDetected().event())
