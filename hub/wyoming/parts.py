"""Which part (asr, tts, wake, handle) an event of one connection goes to, and its state.

Audio after ``detect`` goes to the wake word; otherwise (after ``transcribe``, or with no
request at all, as some clients do) to the recognizer. A part's failure answers the request
with an ``error`` event and one WARNING; the connection stays open. An event whose data fields
are missing or of the wrong type (:mod:`hub.wyoming.fields`) is answered the same way before
any part sees it, and changes nothing (a running utterance goes on).
"""

from __future__ import annotations

import logging
from typing import Any

from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.error import Error
from wyoming.event import Event
from wyoming.intent import Recognize
from wyoming.tts import Synthesize, SynthesizeChunk
from wyoming.wake import Detect

from hub.errors import HubError
from hub.wyoming import fields
from hub.wyoming.asr import AsrSession
from hub.wyoming.framing import BadData
from hub.wyoming.handle import conversation_id, handle_text, recognize_text
from hub.wyoming.tts import TtsSession
from hub.wyoming.wake import WakeSession, chosen

log = logging.getLogger("hub.wyoming")


class Parts:
    """The request state of one connection.

    Args:
        server: the server context (``hub``, ``run``, ``turn``, ``wake_models``).
        send: writes one event to this connection.
        default_id: the conversation id when the client's context names none.
    """

    def __init__(self, server, send, default_id: str):
        self.server, self.send, self.default_id = server, send, default_id
        self.tts = TtsSession(server.hub, server.run, send)
        self.audio: AsrSession | WakeSession | None = None
        self.transcribe: Transcribe | None = None
        self.context: dict[str, Any] | None = None
        self.bad_events = 0
        """Events refused for their fields or data (the first logged at WARNING, the rest DEBUG)."""

    async def refuse(self, event: Event) -> bool:
        """Answer ``event`` with an ``error`` event when its fields are wrong
        (:func:`hub.wyoming.fields.problem`); True when it was refused."""
        why = fields.problem(event)
        if why is None:
            return False
        await self._refused(why)
        return True

    async def bad_data(self, bad: BadData) -> None:
        """Answer a frame whose data is not a JSON object with one ``error`` event naming the
        problem; nothing else changes (a running utterance goes on)."""
        await self._refused(bad.message)

    async def _refused(self, why: str) -> None:
        self.bad_events += 1
        log.log(logging.WARNING if self.bad_events == 1 else logging.DEBUG, "refused: %s", why)
        await self.send(Error(text=why, code="BadInputError").event())

    async def handle(self, event: Event) -> None:
        """Handle one queued event; failures become an ``error`` event."""
        if await self.refuse(event):
            return
        try:
            await self._dispatch(event)
        except (HubError, ValueError, KeyError, TypeError) as exc:
            message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
            log.warning("%s failed: %s", event.type, message)
            self.audio = None
            await self.send(Error(text=message, code=type(exc).__name__).event())

    async def _dispatch(self, event: Event) -> None:
        kind = event.type
        if kind.startswith("synthesize"):
            await self._tts(event)
        elif kind.startswith("audio-"):
            await self._audio(event)
        elif Transcribe.is_type(kind):
            self.transcribe = Transcribe.from_event(event)
            self.context = self.transcribe.context
            self.audio = self._asr()
        elif Detect.is_type(kind):
            detect = Detect.from_event(event)
            models = chosen(detect.names, self.server.wake_models)
            self.audio = WakeSession(self.server.run, self.send, models)
        elif Transcript.is_type(kind):
            transcript = Transcript.from_event(event)
            async with self.server.turn():
                answer = await self.server.run(
                    handle_text,
                    self.server.hub,
                    transcript.text,
                    transcript.context,
                    self.default_id,
                )
            await self.send(answer)
        elif Recognize.is_type(kind):
            recognize = Recognize.from_event(event)
            await self.send(
                await self.server.run(
                    recognize_text, self.server.hub, recognize.text, self._area(recognize.context)
                )
            )
        # select-program / pong: one program per domain, nothing to choose or wait for

    def _area(self, context) -> str | None:
        cid = conversation_id(context)
        return self.server.hub.conversation(cid).area if cid else None

    def _asr(self) -> AsrSession:
        return AsrSession(
            self.server.hub,
            self.server.run,
            self.send,
            self.transcribe,
            area=self._area(self.context),
        )

    async def _audio(self, event: Event) -> None:
        if self.audio is None:
            self.audio = self._asr()
        session = self.audio
        if AudioStart.is_type(event.type):
            if isinstance(session, AsrSession):
                await session.audio_start(AudioStart.from_event(event))
        elif AudioChunk.is_type(event.type):
            await session.audio_chunk(AudioChunk.from_event(event))
        elif AudioStop.is_type(event.type):
            self.audio, self.transcribe = None, None
            await session.audio_stop()

    async def _tts(self, event: Event) -> None:
        kind = event.type
        if kind == "synthesize":
            await self.tts.synthesize(Synthesize.from_event(event).text)
        elif kind == "synthesize-start":
            await self.tts.start()
        elif kind == "synthesize-chunk":
            await self.tts.chunk(SynthesizeChunk.from_event(event).text)
        elif kind == "synthesize-stop":
            await self.tts.stop()
