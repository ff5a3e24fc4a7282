"""The work of each graph node: ``body(hub, state, cancel) -> state update``.

Bodies raise :class:`~hub.errors.HubError` on failure; :func:`hub.graph.guard.guarded` turns
that into routed state. Bodies without an engine (fingerprint, respond, the fallback levels)
never fail. A body that needs the turn's live objects (audio, deadline, fingerprint) takes
``turn`` (:class:`~hub.graph.state.TurnContext`): they are never in the state.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time

from hub.errors import TimeoutError_
from hub.graph.confirmation import NOTHING_TO_CANCEL, confirmation_answer
from hub.graph.facts import beyond_source, fact_matches, fact_update
from hub.graph.speech import join_sentences, spoken_update
from hub.graph.state import TurnContext

log = logging.getLogger("hub.graph")

NOT_UNDERSTOOD = "Sorry, I couldn't understand that."
"""Home Assistant's answer when no intent matched."""

NOT_CAUGHT = "Sorry, I didn't catch that."
"""The answer to speech the recognizer rejected as outside the grammar (not silence)."""

DONE = "Done."
"""Said (pre-rendered) when an action succeeded but its answer cannot be synthesized."""

ACT_FAILED = "Sorry, I couldn't do that right now."
"""The answer when a device action failed after its retry."""

NOTHING_TO_CONFIRM = "There's nothing to confirm."
"""The answer to a "yes" when no question is waiting (or it was asked too long ago)."""

CANCELLED = "Okay, I won't."
"""The answer to a "no" after "Do you want me to ...?"."""


# -- input ------------------------------------------------------------------------------------
def fingerprint(hub, state: dict, turn: TurnContext) -> dict:
    """Text input passes through; audio gets a fingerprint, and the cached transcript if any (L1).

    A question asked in the previous turn ("Do you want me to ...?") is taken here: only this
    turn may answer it, so silence or a failed recognition cancels it too.
    """
    taken = hub.conversation_of(state).take_confirmation()
    if taken is not None and not isinstance(taken, (tuple, list)):
        taken = (taken,)  # one match asked about
    pending = {"pending": tuple(taken) if taken else None}
    if state.get("text") is not None:
        text = state["text"].strip()
        return {"transcript": text, "alternatives": [text], **pending}
    samples = turn.samples
    if samples is None or len(samples) == 0 or state.get("silent"):
        return pending
    from hub.store.recall import recall

    update = recall(hub, samples)
    turn.fingerprint = update.pop("fingerprint", None)  # arrays: the turn's, not the state's
    return {**update, **pending}


def cached_transcript(hub, state: dict) -> dict:
    """L1 when ASR failed: the transcript of the most similar utterance heard before."""
    found = state.get("l1")
    if not found or not found.get("transcript"):
        return {}
    return {"transcript": found["transcript"],
            "alternatives": found["alternatives"] or [found["transcript"]], "cache_hit": True,
            "fallback_level": max(state.get("fallback_level", 0), 1)}


def asr(hub, state: dict, cancel: threading.Event, turn: TurnContext) -> dict:
    """Recognize the utterance; keep every segment said before a pause (BC-07)."""
    engine = hub.engines.asr()
    stream = turn.asr_stream
    first_try = not state.get("attempts", {}).get("asr", 0)
    if stream is not None and first_try:
        result = stream.finish()  # fed while the audio arrived
    else:
        result = engine.transcribe(turn.samples, cancel)
    if cancel.is_set():
        raise TimeoutError_("asr stopped: out of time", node="asr")
    if result.rejected and hub.events.stops_ringing(result.rejected_text):  # a short word
        result = result.taken_as_said()  # scores low; stopping a ring is harmless
    alternatives = [result.text] if result.rejected else list(result.alternatives or [result.text])
    segments = [s for s in (result.segments or ()) if s.strip()]
    if not result.rejected and not result.unsure:  # an unsure reading is asked back each time
        from hub.store.recall import remember

        remember(hub, turn.fingerprint, result.text, alternatives)
    return {"transcript": result.text, "alternatives": [a for a in alternatives if a],
            "rejected": result.rejected, "segments": segments, "unsure": result.unsure}


# -- understanding ----------------------------------------------------------------------------
def rules(hub, state: dict, cancel: threading.Event) -> dict:
    """Match the alternatives against the rules; each segment is its own command when each matches."""
    conversation = hub.conversation_of(state)
    stopped = hub.events.stop_request(state.get("transcript") or "")  # a timer rings: "stop"
    if stopped is not None:
        return stopped
    pending = state.get("pending")
    if pending:
        answer = confirmation_answer(state.get("transcript") or "")
        if answer is True:
            return {"matches": list(pending), "confirmed": True,
                    "source": pending[0].source or "rules"}
        if answer is False:
            return {"matches": [], "response": CANCELLED, "source": "rules"}
    elif confirmation_answer(state.get("transcript") or "") is True:
        return {"matches": [], "response": NOTHING_TO_CONFIRM, "source": "rules"}  # a stray yes
    engine = hub.engines.rules()
    segments = state.get("segments") or []
    if len(segments) > 1:
        matches = [m for m in (engine.recognize(s, conversation.area) for s in segments)
                   if m is not None]
        if len(matches) > 1:
            return {"matches": matches, "source": "rules",
                    "transcript": " ".join(m.text for m in matches)}
    text, match = engine.rank(state.get("alternatives") or [state.get("transcript", "")],
                              conversation.area)
    if match is None:
        if confirmation_answer(text) is False:  # a stray "no": nothing to cancel, no LLM
            return {"matches": [], "response": NOTHING_TO_CANCEL, "source": "rules"}
        fact = fact_update(hub, text)  # time, date, weather, states: from their source only
        if fact is not None:
            honest = beyond_source(hub, text, fact_matches(fact), check_names=False)
            return fact if honest is None else {"matches": [], "response": honest,
                                                "source": "rules", "transcript": text}
        more = getattr(engine, "recognize_more", None)
        matches = more(text, conversation.area) if more else []  # several commands, then fuzzy
        if not matches:
            return {"matches": [], "faq_hit": bool(hub.engines.faq().answer(text))}
    else:
        matches = [match]
    honest = beyond_source(hub, text, matches)  # a fact intent asked about another time or place
    if honest is not None:
        return {"matches": [], "response": honest, "source": "rules", "transcript": text}
    return {"matches": matches, "transcript": text, "source": matches[0].source or "rules"}


MAX_RAW_CHARS = 4000
"""Model output longer than this is cut before parsing (a runaway model, BC-13)."""


def llm_intent(hub, state: dict, cancel: threading.Event) -> dict:
    """Ask the LLM what an unmatched transcript means; act only on what passes every check."""
    from hub.llm.guard import Refusal, mentioned
    from hub.llm.parse import Rejection, check_output

    engine = hub.engines.llm()
    strict = state.get("attempts", {}).get("llm_intent", 0) >= 1  # a retry: stricter prompt
    raw = engine.classify(state["transcript"], cancel, strict=strict)[:MAX_RAW_CHARS]
    log.info("llm raw output: %r", raw)
    vocab, min_conf = hub.llm_vocabulary()
    result = check_output(raw, vocab, min_conf)
    transcript = state["transcript"]
    if isinstance(result, Rejection):
        log.info("llm output not acted on (%s %s)", result.reason, result.value)
        if result.reason in ("unknown_name", "unknown_area") and mentioned(result.value, transcript):
            return {"llm": None, "matches": [], "response": result.message, "source": "llm"}
        return {"llm": None, "matches": []}
    if result.intent == "answer":
        return {"llm": result, "matches": []}
    match = hub.llm_match(result, transcript, hub.conversation_of(state).area)
    if isinstance(match, Refusal):
        return {"llm": None, "matches": [], "response": match.message, "source": "llm"}
    if result.needs_confirmation:
        return {"llm": result, "matches": [], "confirm": match}
    return {"llm": result, "matches": [match], "source": "llm"}


def llm_answer(hub, state: dict, cancel: threading.Event) -> dict:
    """A short spoken answer from the LLM (at most two sentences), cleaned for speech.

    Each sentence goes to the turn's :class:`~hub.graph.streaming.AnswerSpeech` as soon as
    the model finishes it: it is spoken on its own thread (outside this node's budget) while
    the next one is generated, and a retry never says a sentence twice. An answer with
    nothing speakable is "nothing to say" (BC-08): no error, nothing spoken.
    """
    from hub.graph.speech import clean_answer
    from hub.graph.streaming import answer_speech

    from datetime import datetime

    from hub.llm.facts import honest_answer, made_up

    speech, question = answer_speech(hub, state), state["transcript"]
    sentences = hub.engines.llm().answer(question, cancel)
    try:
        for sentence in sentences:
            text = clean_answer(sentence)
            if text and made_up(text, hub.home):  # never a fact of its own (code, not prompt)
                log.warning("llm answer claimed a fact, not said: %r", text)
                if not speech.sentences:
                    return {"response": honest_answer(question, hub.home, datetime.now()),
                            "source": "llm"}
                break
            if text:
                speech.add(text)
            if cancel.is_set():
                break
    finally:
        getattr(sentences, "close", lambda: None)()  # stops the generation
    if cancel.is_set():
        raise TimeoutError_("llm answer stopped: out of time", node="llm_answer")
    if not speech.sentences:
        log.warning("llm answer had nothing to say for %r", question)
        return {"response": "", "source": "llm", "nothing_to_say": True}
    return {"response": speech.text, "source": "llm"}


class _Streamer:
    """Synthesizes a response, handing each chunk to the conversation's player when ready."""

    def __init__(self, hub, state: dict):
        self.hub, self.state = hub, state
        self.pcm, self.rate, self.ttfa = bytearray(), None, None
        self.pieces: list[str] = []  # the text of each chunk, as spoken

    def synthesize(self, text: str, cancel: threading.Event) -> None:
        """Synthesize ``text``, handing each chunk to the player as it is ready.

        Raises:
            HubError: as the TTS engine does.
        """
        engine = self.hub.engines.tts()
        self.rate = self.rate or engine.rate
        for chunk in engine.synthesize(text, cancel):
            if self.ttfa is None:
                self.ttfa = since_end_of_input_ms(self.state)
            self.pcm += chunk.pcm
            self.rate = chunk.rate
            self.pieces.append(chunk.text)
            self.hub.conversation_of(self.state).play(chunk)


def confirm(hub, state: dict) -> dict:
    """Ask before a sensitive action (any path); the next turn's yes in this conversation does it."""
    from hub.graph.confirmation import question

    matches = [state["confirm"]] if state.get("confirm") is not None else state["matches"]
    hub.conversation_of(state).ask_confirmation(tuple(matches))
    first = matches[0]
    return {"response": question(hub.home, matches), "matches": [],
            "source": state.get("source") or first.source, "intent": first.intent,
            "slots": dict(first.slots)}


# -- action and answer ------------------------------------------------------------------------
def act(hub, state: dict, cancel: threading.Event, turn: TurnContext) -> dict:
    """Carry out each matched intent once, keyed by the turn id (idempotency key)."""
    from hub.devices.speech import queued_update

    actor, devices = hub.engines.actor(), hub.engines.devices()
    outcomes = [actor.execute(m, idempotency_key=f"{state['turn_id']}:{i}")
                for i, m in enumerate(state["matches"])]
    # a PUBACK is awaited well within this node's timeout: "queued" is said, never "failed"
    end = time.monotonic() + min(turn.deadline.left() - 0.25,
                                 0.5 * hub.settings.resilience.timeouts_s.get("act", 2.0))
    sent = [(action, devices.publish(action, cancel, end - time.monotonic()))  # once per key
            for outcome in outcomes for action in outcome.actions]
    first = state["matches"][0]
    update = {"outcomes": outcomes, "response": join_sentences(o.response for o in outcomes),
              "intent": first.intent, "slots": dict(first.slots)}
    return {**update, **queued_update(state, update["response"], sent)}


def faq(hub, state: dict) -> dict:
    """L3: a canned answer for what the rules and the LLM could not serve."""
    answer = hub.engines.faq().answer(state.get("transcript") or "")
    if answer:
        return {"response": answer, "source": "faq",
                "fallback_level": max(state.get("fallback_level", 0), 3)}
    return {}


def relaxed(hub, state: dict) -> dict:
    """L2: the rules again, relaxed (fuzzy), when the LLM path failed."""
    engine = hub.engines.rules()
    fuzzy = getattr(engine, "recognize_fuzzy", None)
    match = fuzzy(state.get("transcript") or "", hub.conversation_of(state).area) \
        if fuzzy else None
    if match is None:
        return {}
    return {"matches": [match], "source": "rules",
            "fallback_level": max(state.get("fallback_level", 0), 2)}


def no_speech(hub, state: dict) -> dict:
    """Nothing was said: no LLM, nothing spoken."""
    return {"status": "no_speech", "transcript": ""}


def respond(hub, state: dict) -> dict:
    """Make sure there is something to say, including when the action failed."""
    from hub.graph import streaming

    failed = state.get("failed")
    if failed and failed["node"] == "act":
        return {"response": ACT_FAILED, "fallback_level": max(state.get("fallback_level", 0), 3),
                "source": "fallback"}
    speech = streaming.current(state)
    if not hub.speak or (speech is not None and not speech.sentences):
        streaming.release(state)  # nothing streamed: the tts node has nothing to wait for
    if (state.get("response") or "").strip() or state.get("nothing_to_say"):
        return {}
    if speech is not None and speech.sentences:  # the LLM ran out of time after speaking
        return {"response": speech.text, "source": "llm"}
    text = NOT_CAUGHT if state.get("rejected") and not state.get("transcript") else NOT_UNDERSTOOD
    return {"response": text, "source": state.get("source") or "rules"}


def tts(hub, state: dict, cancel: threading.Event) -> dict:
    """Synthesize the response sentence by sentence; TTFA is when the first sentence is ready.

    After a streamed LLM answer, wait for its speech and synthesize only what it left unsaid.
    """
    from hub.graph import streaming

    speech = streaming.current(state)
    if speech is not None and speech.sentences:
        return _finish_answer(hub, state, speech, cancel)
    streaming.release(state)
    canned = hub.canned_audio(state["response"])
    if canned is not None:
        hub.conversation_of(state).play(canned)
        return {"pcm": canned.pcm, "rate": canned.rate,
                "ttfa_ms": since_end_of_input_ms(state)}
    key = response_key(state["response"], hub.settings.tts.voice)
    found = hub.store.get_response_audio(key) if hub.store is not None else None
    if found is not None:  # said before with this voice: no synthesis
        from hub.audio.pcm import AudioChunk

        hub.conversation_of(state).play(AudioChunk(pcm=found[0], rate=found[1],
                                                   text=state["response"]))
        return {"pcm": found[0], "rate": found[1], "ttfa_ms": since_end_of_input_ms(state)}
    speech = _Streamer(hub, state)
    speech.synthesize(state["response"], cancel)
    cut = spoken_update(speech.pieces)
    if speech.pcm and hub.store is not None and not cut:  # a cut answer: its trace needs "spoken"
        hub.store.put_response_audio(key, bytes(speech.pcm), speech.rate)
    return {"pcm": bytes(speech.pcm), "rate": speech.rate, "ttfa_ms": speech.ttfa, **cut}


def _finish_answer(hub, state: dict, speech, cancel: threading.Event) -> dict:
    """The tts of a streamed answer: its audio, plus the sentences streaming could not say."""
    from hub.graph import streaming

    unsaid = speech.finish(cancel)
    streaming.release(state)
    pcm, rate, ttfa = bytes(speech.pcm), speech.rate, speech.ttfa_ms
    pieces = list(speech.pieces)
    if unsaid:
        rest = _Streamer(hub, state)
        rest.synthesize(" ".join(unsaid), cancel)
        pcm, rate, ttfa = pcm + bytes(rest.pcm), rate or rest.rate, ttfa or rest.ttfa
        pieces += rest.pieces
    return {"pcm": pcm or None, "rate": rate, "ttfa_ms": ttfa, **spoken_update(pieces)}


def since_end_of_input_ms(state: dict) -> float:
    """Milliseconds from the end of input (the turn's start) to now: TTFA when audio is ready."""
    return (time.monotonic() - state["started"]) * 1000


def response_key(text: str, voice: str | None = None) -> str:
    """The response-audio cache key of a text (normalized whitespace and case) and voice."""
    said = " ".join(text.lower().split()) + ("" if voice is None else "\x00" + voice)
    return hashlib.sha256(said.encode()).hexdigest()[:32]


def cached_audio(hub, state: dict) -> dict:
    """L1: the response's audio from the cache when TTS failed."""
    key = response_key(state["response"], hub.settings.tts.voice)
    found = hub.store.get_response_audio(key) if hub.store is not None else None
    if found is None:
        return {"pcm": None}
    return {"pcm": found[0], "rate": found[1], "fallback_level": max(state.get("fallback_level", 0), 1),
            "ttfa_ms": since_end_of_input_ms(state)}


def placeholder(hub, state: dict) -> dict:
    """L4: speech rendered ahead of time, so it plays even when TTS is down."""
    from hub.intents.faq import PLACEHOLDER_TEXT

    outcomes = state.get("outcomes") or []
    done = hub.canned_audio(DONE) if outcomes and all(o.ok for o in outcomes) else None
    if done is not None:  # the action happened: say so, not "I can't"
        pcm, rate, text = done.pcm, done.rate, DONE
    else:
        (pcm, rate), text = hub.placeholder_audio(), PLACEHOLDER_TEXT
    return {"pcm": pcm, "rate": rate, "response": text, "source": "fallback",
            "fallback_level": 4, "ttfa_ms": since_end_of_input_ms(state)}
