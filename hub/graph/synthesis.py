"""The nodes that make the answer's audio: ``tts``, and the fallbacks ``cached_audio`` (L1)
and ``placeholder`` (L4). Bodies as in :mod:`hub.graph.nodes`: ``body(state, ctx[, cancel])``.

The fallbacks hand their audio to the conversation's player like the ``tts`` node does, so
it is heard after any sentence the TTS said before it failed, and the trace's ``response`` is
what was played.
"""

from __future__ import annotations

import logging
import threading

import numpy as np

from hub.audio.pcm import AudioChunk
from hub.graph.answers import CANT_SPEAK, DONE, PLACEHOLDER_TEXT, response_key
from hub.graph.speech import spoken_update
from hub.graph.state import TurnContext, TurnState
from hub.graph.streaming import AnswerSpeech

log = logging.getLogger("hub.graph")


def since_end_of_input_ms(state: TurnState, ctx: TurnContext) -> float:
    """Milliseconds from the end of input (the turn's start) to now: TTFA when audio is ready."""
    return ctx.clock.since_ms(state["started"])


class _Streamer:
    """Synthesizes a response, handing each chunk to the conversation's player when ready."""

    def __init__(self, state: TurnState, ctx: TurnContext):
        self.state, self.ctx = state, ctx
        self.pcm = bytearray()
        self.rate: int | None = None
        self.ttfa: float | None = None
        self.pieces: list[str] = []  # the text of each chunk, as spoken

    def synthesize(self, text: str, cancel: threading.Event) -> None:
        """Synthesize ``text``, handing each chunk to the player as it is ready.

        Raises:
            HubError: as the TTS engine does.
        """
        engine = self.ctx.engines.tts()
        self.rate = self.rate or engine.rate
        for chunk in engine.synthesize(text, cancel):
            if self.ttfa is None:
                self.ttfa = since_end_of_input_ms(self.state, self.ctx)
            self.pcm += chunk.pcm
            self.rate = chunk.rate
            self.pieces.append(chunk.text)
            self.ctx.played.append(chunk)
            self.ctx.conversation.play(chunk)


def _stored(state: TurnState, ctx: TurnContext) -> tuple[str, tuple[bytes, int] | None]:
    """The response's cache key with the configured voice, and its stored audio if any."""
    key = response_key(state["response"], ctx.settings.tts.voice)
    return key, (ctx.store.get_response_audio(key) if ctx.store is not None else None)


def tts(state: TurnState, ctx: TurnContext, cancel: threading.Event) -> dict:
    """Synthesize the response sentence by sentence; TTFA is when the first sentence is ready.

    After a streamed LLM answer, wait for its speech and synthesize only what it left unsaid.
    """
    speech = ctx.speech
    if speech is not None and speech.sentences:
        return _finish_answer(state, ctx, speech, cancel)
    canned = ctx.canned.audio(state["response"])
    if canned is not None:
        ctx.conversation.play(canned)
        return {
            "pcm": canned.pcm,
            "rate": canned.rate,
            "ttfa_ms": since_end_of_input_ms(state, ctx),
        }
    key, found = _stored(state, ctx)
    if found is not None:  # said before with this voice: no synthesis
        ctx.conversation.play(AudioChunk(pcm=found[0], rate=found[1], text=state["response"]))
        return {"pcm": found[0], "rate": found[1], "ttfa_ms": since_end_of_input_ms(state, ctx)}
    streamer = _Streamer(state, ctx)
    streamer.synthesize(state["response"], cancel)
    cut = spoken_update(streamer.pieces)
    # a cut answer is not kept: its trace needs "spoken"
    if streamer.pcm and streamer.rate and ctx.store is not None and not cut:
        ctx.store.put_response_audio(key, bytes(streamer.pcm), streamer.rate)
    return {"pcm": bytes(streamer.pcm), "rate": streamer.rate, "ttfa_ms": streamer.ttfa, **cut}


def _finish_answer(
    state: TurnState, ctx: TurnContext, speech: AnswerSpeech, cancel: threading.Event
) -> dict:
    """The tts of a streamed answer: its audio, plus the sentences streaming could not say."""
    unsaid = speech.finish(cancel)
    pcm, rate, ttfa = bytes(speech.pcm), speech.rate, speech.ttfa_ms
    pieces = list(speech.pieces)
    if unsaid:
        rest = _Streamer(state, ctx)
        rest.synthesize(" ".join(unsaid), cancel)
        pcm, rate, ttfa = pcm + bytes(rest.pcm), rate or rest.rate, ttfa or rest.ttfa
        pieces += rest.pieces
    return {"pcm": pcm or None, "rate": rate, "ttfa_ms": ttfa, **spoken_update(pieces)}


def cached_audio(state: TurnState, ctx: TurnContext) -> dict:
    """L1: the response's audio from the cache when TTS failed (before any of it was said)."""
    _, found = _stored(state, ctx)
    if found is None or _played(ctx):
        return {"pcm": None}
    ctx.conversation.play(AudioChunk(pcm=found[0], rate=found[1], text=state["response"]))
    return {
        "pcm": found[0],
        "rate": found[1],
        "fallback_level": max(state.get("fallback_level", 0), 1),
        "ttfa_ms": since_end_of_input_ms(state, ctx),
    }


def _played(ctx: TurnContext) -> list[AudioChunk]:
    """The answer's chunks handed to the player so far this turn (streamed LLM answer, then
    the ``tts`` node's); none when the conversation has no player (``hub ask``, ``hub
    replay``): there only the turn's own audio, written or returned, is ever heard."""
    if getattr(ctx.conversation, "player", None) is None:
        return []
    streamed = list(getattr(ctx.speech, "played", None) or [])
    return streamed + list(ctx.played)


def true_clip(state: TurnState, ctx: TurnContext) -> AudioChunk:
    """The pre-rendered sentence that is true for the turn when its answer cannot be
    synthesized: the placeholder when nothing was understood (no answer); the answer itself
    when it is a canned one; "Done." when every command was carried out (``done``); else
    :data:`~hub.graph.answers.CANT_SPEAK`. Never "Done." for a question or for an answer
    that is not a success."""
    answer = (state.get("response") or "").strip()
    if not answer:
        chunk = ctx.canned.clip(PLACEHOLDER_TEXT)
    else:
        chunk = ctx.canned.audio(answer)
        if chunk is None and state.get("done"):
            chunk = ctx.canned.audio(DONE)
        chunk = chunk or ctx.canned.clip(CANT_SPEAK)
    assert chunk is not None  # the placeholder and CANT_SPEAK ship (hub/data)
    return chunk


def placeholder(state: TurnState, ctx: TurnContext) -> dict:
    """L4: speech rendered ahead of time, so it plays even when TTS is down.

    The sentence is one that is true for the turn (:func:`true_clip`). When it is not the
    answer, a question the answer asked ("Do you want me to unlock the Front Door?", "Which
    area?") was not heard, so it is withdrawn: a later "yes" confirms nothing. The trace's
    ``response`` is what was played: any sentence said before the TTS failed, then the clip.
    """
    answer = (state.get("response") or "").strip()
    before = _played(ctx)
    speech = ctx.speech
    if speech is not None and speech.sentences and before and not speech.unsaid():
        return {  # the streamed answer was said in full; only the tts node's rest failed
            "pcm": _joined(before, None),
            "rate": before[0].rate,
            "response": speech.text,
            "ttfa_ms": speech.ttfa_ms,
        }
    chunk = true_clip(state, ctx)
    if answer and chunk.text != answer:
        asked = ctx.conversation.take_confirmation() is not None
        asked = ctx.conversation.take_slot() is not None or asked
        log.info(
            "answer not spoken (TTS down): %r; said %r instead%s",
            answer[:80],
            chunk.text,
            "; its question is withdrawn" if asked else "",
        )
    ctx.conversation.play(chunk)
    said = [c.text.strip() for c in before if c.text.strip()] + [chunk.text]
    return {
        "pcm": _joined(before, chunk),
        "rate": before[0].rate if before else chunk.rate,
        "response": " ".join(said),
        "source": "fallback",
        "fallback_level": 4,
        "ttfa_ms": since_end_of_input_ms(state, ctx),
    }


def _joined(before: list[AudioChunk], chunk: AudioChunk | None) -> bytes:
    """The int16 audio of ``before`` then ``chunk``, at the first chunk's rate (the clip is
    resampled when its rate differs)."""
    chunks = before + ([chunk] if chunk is not None else [])
    rate = chunks[0].rate
    out = bytearray()
    for c in chunks:
        out += c.pcm if c.rate == rate else _resampled(c.pcm, c.rate, rate)
    return bytes(out)


def _resampled(pcm: bytes, rate: int, to: int) -> bytes:
    """int16 mono ``pcm`` at ``rate`` Hz resampled to ``to`` Hz."""
    # lazy: soxr only when a fallback clip follows speech of another rate
    import soxr

    x = np.frombuffer(pcm, "<i2").astype(np.float32) / 32768.0
    y = soxr.resample(x, rate, to)
    return (np.clip(y, -1.0, 1.0) * 32767).astype("<i2").tobytes()
