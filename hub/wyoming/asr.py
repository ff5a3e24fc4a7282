"""``transcribe`` -> ``audio-start``/``audio-chunk``…/``audio-stop`` -> ``transcript``.

One utterance per connection, as Home Assistant sends it. Audio is fed into the hub's
streaming recognizer (restricted to the home's vocabulary) as it arrives, on worker threads,
so only the last segment is decoded after ``audio-stop``. Each utterance segment the engine
closes while audio still arrives is sent at once as a ``transcript-chunk`` (after one
``transcript-start``); then the final ``transcript`` and ``transcript-stop``. The hub ends the
utterance by itself (issue 18), without waiting for ``audio-stop``, as soon as a closed segment
(the recognizer's endpointer saw about 0.5 s of silence after speech) holds a sentence the
home's rules match: a complete command is final (Kaldi's endpointing rule: a final state plus a
short silence ends the utterance). Before that, the daemon's own endpointer
(:func:`hub.audio.endpoint.live_endpointer`) runs over the same audio: its ``final`` rule
(``[asr] final_silence_ms`` after a whole grammar sentence, the check started at
``final_check_ms``) ends the utterance as in ``hub run``, the check's decode reused. Later
audio and the ``audio-stop`` are then ignored. The final
text
is the recognizer's n-best alternative that the home's rules match, else the one sharing the
most words with the client's ``transcript_names``/``transcript_terms`` (Wyoming 1.10), else its
best guess (Rhasspy-style ranking; design.md, "Measured"). Speech the grammar rejects is
given to the open-vocabulary second pass (:mod:`hub.asr.second_pass`, with its
speech-evidence gate), so a question outside the grammar reaches Home Assistant as text. A
command the grammar is unsure of (an on/off, a -teen/-ty number) is heard again too, and
unless that settles the doubt (both recognizers agree on what it would do; Whisper's words
mean no command at all) the transcript is empty: Home Assistant says it did not understand
and nothing is done, where ``hub run`` would ask a yes/no first ("turn on" heard where "turn
off" was said must never reach it; also when the second pass could not hear it: too quiet,
no time). An agreed -teen/-ty number the audio does not confirm is sent (``hub run`` asks it
back). A doubted segment is never streamed as a ``transcript-chunk``; when it completes a
command it ends the utterance at once, decided as above.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable, Sequence

import numpy as np
from wyoming.asr import Transcribe, Transcript, TranscriptChunk, TranscriptStart, TranscriptStop
from wyoming.audio import AudioChunk, AudioStart
from wyoming.event import Event

from hub.asr.base import AsrStream
from hub.asr.base import Transcript as Heard
from hub.asr.second_pass import needed, second_pass
from hub.asr.whisper_io import normalize
from hub.audio.endpoint import Endpointer, live_endpointer
from hub.audio.format import BYTES_PER_SECOND
from hub.audio.load import MAX_AUDIO_S
from hub.errors import BadInputError, HubError
from hub.wyoming.audio_in import ChunkConverter, To16k

log = logging.getLogger("hub.wyoming.asr")

SECOND_PASS_S = 6.0
"""Longest wait for the second pass of one ``transcribe`` (load included)."""


def bias_words(transcribe: Transcribe | None) -> set[str]:
    """Lower-case words of the client's ``transcript_names`` and ``transcript_terms``."""
    words: set[str] = set()
    for item in (getattr(transcribe, "transcript_names", None) or []) + (
        getattr(transcribe, "transcript_terms", None) or []
    ):
        if isinstance(item, str):
            words.update(item.lower().split())
    return words


def choose_transcript(
    alternatives: Sequence[str], matches: Callable[[str], bool], bias: set[str]
) -> str:
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

    def __init__(
        self,
        hub,
        run,
        send: Callable[[Event], Awaitable[None]],
        transcribe: Transcribe | None = None,
        area: str | None = None,
    ):
        self.hub, self.run, self.send, self.area = hub, run, send, area
        self.transcribe = transcribe
        self.language = (transcribe.language if transcribe else None) or hub.settings.home.language
        self.stream: AsrStream | None = None
        self.converter = ChunkConverter()
        """Each chunk converted by its own declared format (BC-45), not ``audio-start``'s."""
        self.started = False
        self.streamed: list[str] = []
        self.fed_s = 0.0
        self.final: str | None = None
        """The final text once the transcript was sent (by the endpoint or ``audio-stop``)."""
        self.pcm = bytearray()  # the utterance at 16 kHz, for the second pass
        self.engine = None
        self.stream_fed = 0  # bytes of self.pcm fed to the stream
        self.endpointer: Endpointer | None = None
        """The daemon's endpointer (its ``final`` rule) over the same audio, until it ends."""
        self.doubted = False
        """A closed segment was unsure: neither streamed nor an early final."""
        self.withheld = False
        """The last chosen text was withheld (its doubt not settled by the second pass)."""

    async def audio_start(self, start: AudioStart) -> None:
        """Open the recognizer stream (each chunk then says its own format), and ready what
        the turn may need as a wake word does (:meth:`hub.core.hub.Hub.on_wake`: the second
        recognizer loads while the command is spoken).

        Raises:
            BadInputError: a format the hub cannot take.
        """
        To16k(start.rate, start.width, start.channels)  # a format the hub cannot take fails here
        self.hub.on_wake()  # as after a wake word: the second pass loads while the user speaks
        engine = self.engine = await self.run(self.hub.engines.asr)
        self.stream = await self.run(engine.stream)
        if getattr(engine, "complete", None) is not None and self.hub.settings.asr.final_silence_ms:
            self.endpointer = live_endpointer(self.hub.settings.asr, self.hub.engines, None)

    async def audio_chunk(self, chunk: AudioChunk) -> None:
        """Feed one chunk; a segment the engine closed goes out as a ``transcript-chunk``, and
        a closed segment that completes a command the rules match ends the utterance."""
        if self.final is not None:
            return
        if self.stream is None:
            await self.audio_start(
                AudioStart(rate=chunk.rate, width=chunk.width, channels=chunk.channels)
            )
        stream = self.stream
        assert stream is not None  # audio_start opened it
        pcm = self.converter.convert(chunk.audio, chunk.rate, chunk.width, chunk.channels)
        self.fed_s += len(pcm) / BYTES_PER_SECOND
        if not pcm:
            return
        if len(self.pcm) + len(pcm) > MAX_AUDIO_S * BYTES_PER_SECOND:
            raise BadInputError(  # the utterance is dropped: an error event, the next one anew
                f"audio-chunk: more than {MAX_AUDIO_S:.0f} s of audio in one utterance; "
                "dropped (send audio-stop after each utterance)"
            )
        self.pcm += pcm
        if await self._endpoint(pcm) or self.endpointer is not None:
            return  # decided by the endpointer, or the stream waits for its answer
        closed = len(getattr(stream, "segments", ()))
        await self.run(stream.accept, self._unfed())
        for segment in list(getattr(stream, "segments", ()))[closed:]:
            if segment.text and not segment.rejected:  # closed segments are never revised
                self.doubted = self.doubted or segment.unsure
                if self.doubted:  # never streamed: it may be the opposite of what was said
                    if await self._decided(segment.text):
                        return
                    continue
                await self._stream_text(segment.text)
                await self._maybe_final()

    def _unfed(self) -> bytes:
        """The utterance's audio not yet fed to the stream (all of it once the endpointer
        ended without its ``final`` rule: the stream does not decode while the check does)."""
        pcm, self.stream_fed = bytes(self.pcm[self.stream_fed :]), len(self.pcm)
        return pcm

    async def _endpoint(self, pcm: bytes) -> bool:
        """Push ``pcm`` to the endpointer; when its ``final`` rule ended the utterance (a
        whole grammar sentence, then a short silence), or its 500 ms rule did on a command the
        rules match, send the final transcript of that audio (the check's decode, reused)
        and return True."""
        endpointer = self.endpointer
        if endpointer is None or not await self.run(endpointer.push, np.frombuffer(pcm, "<i2")):
            return False
        self.endpointer = None
        if endpointer.reason not in ("final", "silence") or self.engine is None:
            return False  # the stream's own segments decide, as before
        result = await self.run(self.engine.transcribe, endpointer.audio())  # the check's
        text = await self.run(self._choose, result)
        if self.withheld:  # a whole command, its doubt unsettled: nothing to wait for
            await self._finish("")
            return True
        if not text or (endpointer.reason == "silence" and not await self._matches(text)):
            return False  # a pause inside a command: the stream goes on with all the audio
        log.info(
            "end of speech (%s): %r; transcript sent before audio-stop", endpointer.reason, text
        )
        await self._finish(text)
        return True

    async def _matches(self, text: str) -> bool:
        """True when the home's rules match ``text``."""
        rules = await self.run(self.hub.engines.rules)
        return await self.run(rules.recognize, text, self.area) is not None

    async def _decided(self, text: str) -> bool:
        """A doubted closed segment that completes a command the rules match ends the
        utterance now: the second pass on the audio so far settles it, or it is withheld."""
        said = " ".join([*self.streamed, text])
        if not await self._matches(said):
            return False
        doubted = Heard(said, (said,), unsure=True)
        await self._finish(await self.run(self._choose, doubted))
        return True

    async def _maybe_final(self) -> None:
        """Send the final transcript now when what was heard is a command the rules match."""
        said = " ".join(self.streamed)
        if not await self._matches(said):
            return
        log.info("end of speech: %r is complete; transcript sent before audio-stop", said)
        await self._finish(said)

    async def _stream_text(self, text: str) -> None:
        if not self.started:
            self.started = True
            await self.send(TranscriptStart(language=self.language).event())
        piece = text if not self.streamed else " " + text
        self.streamed.append(text)
        await self.send(TranscriptChunk(text=piece).event())

    async def audio_stop(self) -> str:
        """Finish the utterance and send the final transcript (unless it was sent already);
        returns its text."""
        if self.final is not None:
            return self.final
        text = ""
        if self.stream is not None:
            self.pcm += self.converter.flush()
            unfed = self._unfed()
            if unfed:
                await self.run(self.stream.accept, unfed)
            try:
                result = await self.run(self.stream.finish)
                text = await self.run(self._choose, result)
            except HubError as exc:
                log.warning("transcription failed: %s", exc.message)
        await self._finish(text)
        return text

    def _choose(self, result) -> str:
        """The final text of ``result`` (a :class:`hub.asr.Transcript`); rejected: "" unless
        the second pass heard it (its reading, as any recognizer's); unsure: "" unless the
        second pass settled the doubt (both recognizers agree on what it would do, or
        Whisper's words mean no command: :meth:`_second_pass`)."""
        doubted = needed(result) == "unsure"  # the grammar's own doubt, not a rejection's
        result, outcome = self._second_pass(result)
        self.withheld = doubted and outcome not in ("agree", "unreadable")
        if self.withheld:  # disagreed, or not heard again (too quiet, no time, failed)
            log.info("transcript withheld: %r is doubted (second pass: %s)", result.text, outcome)
            return ""
        if result.rejected or not result.text:
            return ""
        rules = self.hub.engines.rules()
        return choose_transcript(
            result.alternatives or (result.text,),
            lambda t: rules.recognize(t, self.area) is not None,
            bias_words(self.transcribe),
        )

    def _second_pass(self, result) -> tuple:
        """``(transcript, outcome)``: ``result``, or what the open-vocabulary second pass
        heard when the grammar rejected the speech or was unsure of it
        (:func:`hub.asr.second_pass.second_pass`: speech evidence required); ``outcome`` is
        the second pass's (``agree``, ``disagree``, ...), None when it did not run."""
        settings = self.hub.settings.asr
        if not settings.second_pass or needed(result) is None or not self.pcm:
            return result, None
        try:
            engine = self.hub.engines.asr2()
        except HubError as exc:
            log.warning("second pass unavailable: %s", exc.message)
            return result, None
        # lazy: the graph's modules (0.7 s) load only when a second pass runs here
        from hub.graph.hearing import match_key

        rules = self.hub.engines.rules()
        meant: dict[str, object] = {}

        def interpret(text: str):
            meant[text] = match_key(rules.recognize(text, self.area))
            return meant[text]

        samples = np.frombuffer(bytes(self.pcm[: len(self.pcm) // 2 * 2]), dtype="<i2")
        decision = second_pass(
            result,
            samples,
            engine,
            interpret=interpret,
            scorer=self.engine if hasattr(self.engine, "doubts") else None,
            min_speech_ms=settings.min_speech_ms,
            deadline=time.monotonic() + SECOND_PASS_S,
        )
        outcome = decision.trace.get("outcome")
        heard = normalize(decision.trace.get("text") or "")
        if outcome == "disagree" and meant.get(heard) is None and decision.transcript is result:
            # Whisper's words mean nothing to the rules ("turn bedlight off"): they contradict
            # no reading, so the grammar's stands, as before the second pass heard doubts
            return dataclasses.replace(result, unsure=False), "unreadable"
        return decision.transcript, outcome

    async def _finish(self, text: str) -> None:
        self.final = text
        if not self.started:
            self.started = True
            await self.send(TranscriptStart(language=self.language).event())
        said = " ".join(self.streamed)
        if text.startswith(said) and text[len(said) :].strip():
            await self.send(TranscriptChunk(text=text[len(said) :] if said else text).event())
        await self.send(Transcript(text=text, language=self.language).event())
        await self.send(TranscriptStop().event())
