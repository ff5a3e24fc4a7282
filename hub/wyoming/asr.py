"""``transcribe`` -> ``audio-start``/``audio-chunk``…/``audio-stop`` -> ``transcript``.

One utterance per connection, as Home Assistant sends it. Audio is fed into the hub's
streaming recognizer (restricted to the home's vocabulary) as it arrives, on worker threads,
so only the last segment is decoded after ``audio-stop``. Each utterance segment the engine
closes while audio still arrives is sent at once as a ``transcript-chunk`` (after one
``transcript-start``); then the final ``transcript`` and ``transcript-stop``. The final text
is the recognizer's n-best alternative that the home's rules match, else the one sharing the
most words with the client's ``transcript_names``/``transcript_terms`` (Wyoming 1.10), else its
best guess (Rhasspy-style ranking; design.md, "Measured").
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

from wyoming.asr import Transcribe, Transcript, TranscriptChunk, TranscriptStart, TranscriptStop
from wyoming.audio import AudioChunk, AudioStart
from wyoming.event import Event

from hub.errors import HubError
from hub.wyoming.audio_in import To16k

log = logging.getLogger("hub.wyoming.asr")


def bias_words(transcribe: Transcribe | None) -> set[str]:
    """Lower-case words of the client's ``transcript_names`` and ``transcript_terms``."""
    words: set[str] = set()
    for item in (getattr(transcribe, "transcript_names", None) or []) + \
            (getattr(transcribe, "transcript_terms", None) or []):
        if isinstance(item, str):
            words.update(item.lower().split())
    return words


def choose_transcript(alternatives: Sequence[str], matches: Callable[[str], bool],
                      bias: set[str]) -> str:
    """The alternative to report: the first the rules match, else the first with the most
    ``bias`` words (ties: recognizer order), else the first; "" when there is none."""
    texts = [a for a in alternatives if a and a.strip()]
    for text in texts:
        if matches(text):
            return text
    if bias and texts:
        return max(texts, key=lambda t: (len(bias & set(t.lower().split())), -texts.index(t)))
    return texts[0] if texts else ""


class AsrSession:
    """One utterance of one connection.

    Args:
        hub: the shared :class:`hub.core.hub.Hub`.
        run: runs a blocking call on a worker thread (``await run(fn, *args)``).
        send: writes one event to the client.
        transcribe: the ``transcribe`` request (None when audio came without one).
        area: the conversation's area, for the rules' ranking.
    """

    def __init__(self, hub, run, send: Callable[[Event], Awaitable[None]],
                 transcribe: Transcribe | None = None, area: str | None = None):
        self.hub, self.run, self.send, self.area = hub, run, send, area
        self.transcribe = transcribe
        self.language = (transcribe.language if transcribe else None) or hub.settings.home.language
        self.stream = None
        self.converter: To16k | None = None
        self.started = False
        self.streamed: list[str] = []
        self.fed_s = 0.0

    async def audio_start(self, start: AudioStart) -> None:
        """Open the recognizer stream for audio in ``start``'s format."""
        self.converter = To16k(start.rate, start.width, start.channels)
        engine = await self.run(self.hub.engines.asr)
        self.stream = await self.run(engine.stream)

    async def audio_chunk(self, chunk: AudioChunk) -> None:
        """Feed one chunk; a segment the engine closed goes out as a ``transcript-chunk``."""
        if self.stream is None:
            await self.audio_start(AudioStart(rate=chunk.rate, width=chunk.width,
                                              channels=chunk.channels))
        pcm = self.converter.convert(chunk.audio)
        self.fed_s += len(pcm) / 32000
        if not pcm:
            return
        closed = len(getattr(self.stream, "segments", ()))
        await self.run(self.stream.accept, pcm)
        for segment in list(getattr(self.stream, "segments", ()))[closed:]:
            if segment.text and not segment.rejected:  # closed segments are never revised
                await self._stream_text(segment.text)

    async def _stream_text(self, text: str) -> None:
        if not self.started:
            self.started = True
            await self.send(TranscriptStart(language=self.language).event())
        piece = text if not self.streamed else " " + text
        self.streamed.append(text)
        await self.send(TranscriptChunk(text=piece).event())

    async def audio_stop(self) -> str:
        """Finish the utterance and send the final transcript; returns its text."""
        text = ""
        if self.stream is not None:
            tail = self.converter.convert(b"", last=True)
            if tail:
                await self.run(self.stream.accept, tail)
            try:
                result = await self.run(self.stream.finish)
                text = await self.run(self._choose, result)
            except HubError as exc:
                log.warning("transcription failed: %s", exc.message)
        await self._finish(text)
        return text

    def _choose(self, result) -> str:
        """The final text of ``result`` (a :class:`hub.asr.Transcript`); rejected: ""."""
        if result.rejected or not result.text:
            return ""
        rules = self.hub.engines.rules()
        return choose_transcript(result.alternatives or (result.text,),
                                 lambda t: rules.recognize(t, self.area) is not None,
                                 bias_words(self.transcribe))

    async def _finish(self, text: str) -> None:
        if not self.started:
            self.started = True
            await self.send(TranscriptStart(language=self.language).event())
        said = " ".join(self.streamed)
        if text.startswith(said) and text[len(said):].strip():
            await self.send(TranscriptChunk(text=text[len(said):] if said else text).event())
        await self.send(Transcript(text=text, language=self.language).event())
        await self.send(TranscriptStop().event())
