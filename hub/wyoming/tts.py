"""``synthesize`` and the streaming sequence, exactly as the protocol defines them (BC-23).

- ``synthesize`` alone: one ``audio-start``, the audio in ``audio-chunk``s, one ``audio-stop``.
- ``synthesize-start`` -> ``synthesize-chunk``… -> an optional ``synthesize`` ->
  ``synthesize-stop``:
  text pieces (which may end mid-word) are joined; every sentence that is complete (its end
  punctuation followed by a space) is spoken at once, so audio starts before
  ``synthesize-stop``; the unpunctuated tail is spoken at stop; the full-text ``synthesize``
  Home Assistant sends inside a stream for compatibility adds no audio; then one
  ``audio-stop`` and ``synthesize-stopped`` after the last audio (as OHF-Voice/wyoming-piper
  ``handler.py`` does, but with one ``audio-start``/``audio-stop`` pair per stream).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.event import Event
from wyoming.tts import SynthesizeStopped

from hub.audio.format import CHANNELS, WIDTH

SAMPLES_PER_CHUNK = 1024
"""Samples per ``audio-chunk`` sent (as wyoming-piper's default)."""

_BOUNDARY = re.compile(r"[.!?…]+[\"')\]]*\s+")


def split_complete(text: str) -> tuple[list[str], str]:
    """Complete sentences of ``text`` and the rest that may still grow.

    A sentence is complete when its end punctuation is followed by whitespace (so "3.5" and
    a piece that ends in "." are not yet cut). Example: ``"Is it? Ye"`` -> ``(["Is it?"], "Ye")``.
    """
    out, start = [], 0
    for match in _BOUNDARY.finditer(text):
        sentence = text[start : match.end()].strip()
        if sentence:
            out.append(sentence)
        start = match.end()
    return out, text[start:]


class TtsSession:
    """Speech for one connection.

    Args:
        hub: the shared Hub (``hub.engines.tts()``).
        run: runs a blocking call on a worker thread.
        send: writes one event to the client.
    """

    def __init__(self, hub, run, send: Callable[[Event], Awaitable[None]]):
        self.hub, self.run, self.send = hub, run, send
        self.streaming = False
        self.text = ""
        self.rate: int | None = None

    async def _speak(self, text: str) -> None:
        """Synthesize ``text`` sentence by sentence, sending each one's audio when ready."""
        engine = await self.run(self.hub.engines.tts)
        pieces = iter(engine.synthesize(text))
        while (chunk := await self.run(next, pieces, None)) is not None:
            await self._audio(chunk.pcm, chunk.rate)

    async def _audio(self, pcm: bytes, rate: int) -> None:
        if self.rate is None:
            self.rate = rate
            await self.send(AudioStart(rate=rate, width=WIDTH, channels=CHANNELS).event())
        step = SAMPLES_PER_CHUNK * 2
        for i in range(0, len(pcm), step):
            await self.send(
                AudioChunk(
                    rate=rate, width=WIDTH, channels=CHANNELS, audio=pcm[i : i + step]
                ).event()
            )

    async def _close_audio(self) -> None:
        """One ``audio-stop`` (after an ``audio-start``, sent now if no audio was made)."""
        if self.rate is None:
            engine = await self.run(self.hub.engines.tts)
            self.rate = engine.rate
            await self.send(AudioStart(rate=engine.rate, width=WIDTH, channels=CHANNELS).event())
        await self.send(AudioStop().event())
        self.rate = None

    async def synthesize(self, text: str) -> None:
        """A ``synthesize`` event: ignored inside a stream, else spoken whole."""
        if self.streaming:
            return  # the compatibility copy of the streamed text: already being spoken
        try:
            await self._speak(text)
        finally:
            await self._close_audio()

    async def start(self) -> None:
        """``synthesize-start``: a new stream (a stream left open before is dropped)."""
        self.streaming, self.text, self.rate = True, "", None

    async def chunk(self, text: str) -> None:
        """``synthesize-chunk``: speak the sentences this piece completes."""
        if not self.streaming:
            await self.start()
        self.text += text
        sentences, self.text = split_complete(self.text)
        for sentence in sentences:
            await self._speak(sentence)

    async def stop(self) -> None:
        """``synthesize-stop``: speak the tail, close the audio, then ``synthesize-stopped``."""
        tail, self.text = self.text.strip(), ""
        try:
            if self.streaming and tail:
                await self._speak(tail)
        finally:
            self.streaming = False
            await self._close_audio()
            await self.send(SynthesizeStopped().event())
