"""The nodes that make the answer's audio: ``tts``, and the fallbacks ``cached_audio`` (L1)
and ``placeholder`` (L4). Bodies as in :mod:`hub.graph.nodes`: ``body(state, ctx[, cancel])``.
"""

from __future__ import annotations

import threading

from hub.audio.pcm import AudioChunk
from hub.graph.answers import DONE, PLACEHOLDER_TEXT, response_key
from hub.graph.speech import spoken_update
from hub.graph.state import TurnContext, TurnState
from hub.graph.streaming import AnswerSpeech


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
    """L1: the response's audio from the cache when TTS failed."""
    _, found = _stored(state, ctx)
    if found is None:
        return {"pcm": None}
    return {
        "pcm": found[0],
        "rate": found[1],
        "fallback_level": max(state.get("fallback_level", 0), 1),
        "ttfa_ms": since_end_of_input_ms(state, ctx),
    }


def placeholder(state: TurnState, ctx: TurnContext) -> dict:
    """L4: speech rendered ahead of time, so it plays even when TTS is down."""
    outcomes = state.get("outcomes") or []
    done = ctx.canned.audio(DONE) if outcomes and all(o.ok for o in outcomes) else None
    if done is not None:  # the action happened: say so, not "I can't"
        pcm, rate, text = done.pcm, done.rate, DONE
    else:
        (pcm, rate), text = ctx.canned.placeholder(), PLACEHOLDER_TEXT
    return {
        "pcm": pcm,
        "rate": rate,
        "response": text,
        "source": "fallback",
        "fallback_level": 4,
        "ttfa_ms": since_end_of_input_ms(state, ctx),
    }
