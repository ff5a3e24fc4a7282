"""The work of each graph node: ``body(state, ctx) -> state update``.

``ctx`` is the turn's :class:`~hub.graph.state.TurnContext` (LangGraph's runtime context): the
engines, store, conversation, home, settings, fixed answers, timers and clock; nothing else is
reachable from here. Guarded bodies (the ones that run an engine) also get the ``cancel`` event
set when their time is up (``body(state, ctx, cancel)``) and raise :class:`~hub.errors.HubError`
on failure, which :func:`hub.graph.guard.guarded` routes. Bodies without an engine
(respond, the fallback levels) never fail. The input nodes are in :mod:`hub.graph.intake`,
the audio ones in :mod:`hub.graph.synthesis`.
"""

from __future__ import annotations

import logging
import threading

from hub import names
from hub.act import together
from hub.act.alert_ring import missed_notice
from hub.act.honest import miss_update, misses_of, nothing_to_stop, several_update
from hub.act.responses import sentence
from hub.act.timing import in_area  # a timer set in a room rings in that room
from hub.devices.queued import all_sent, queued_update
from hub.errors import TimeoutError_
from hub.facts.answers import honest_answer
from hub.facts.changing import OUT_OF_DATE, asks_changing
from hub.facts.claims import made_up
from hub.graph.answers import ACT_FAILED, NOT_CAUGHT, NOT_SAVED, NOT_UNDERSTOOD
from hub.graph.confirmation import (
    NOTHING_TO_CANCEL,
    confirmation_answer,
    question,
    question_answer,
)
from hub.graph.facts import beyond_source, fact_matches, fact_update
from hub.graph.hearing import grammar_pass, hear_again
from hub.graph.speech import join_sentences
from hub.graph.state import TurnContext, TurnState
from hub.intents.catalog import has_side_effects
from hub.intents.faq import curated_level
from hub.intents.followup import record_turn
from hub.intents.meaning import MeaningLost
from hub.intents.multi import bare_after
from hub.intents.reference import resolve_reference
from hub.llm.guard import Refusal, delayed, mentioned, to_match
from hub.llm.markup import clean_answer
from hub.llm.parse import Rejection, Vocabulary, check_output
from hub.store.recall import remember

log = logging.getLogger("hub.graph")


# -- recognition ------------------------------------------------------------------------------
def asr(state: TurnState, ctx: TurnContext, cancel: threading.Event) -> dict:
    """Recognize the utterance; keep every segment said before a pause (BC-07)."""
    engine = ctx.engines.asr()
    stream = ctx.asr_stream
    first_try = not state.get("attempts", {}).get(names.ASR, 0)
    if stream is not None and first_try:
        result = grammar_pass(ctx, lambda _c: stream.finish())  # fed while the audio arrived
    else:
        result = grammar_pass(ctx, lambda c: engine.transcribe(ctx.samples, c))
    if cancel.is_set():
        raise TimeoutError_("asr stopped: out of time", node=names.ASR)
    if (
        result.rejected
        and ctx.timers is not None
        and ctx.timers.stops_ringing(result.rejected_text)
    ):  # a short word
        result = result.taken_as_said()  # scores low; stopping a ring is harmless
    result, heard = hear_again(state, ctx, result, cancel)  # rejected/unsure: Whisper
    alternatives = [result.text] if result.rejected else list(result.alternatives or [result.text])
    segments = [s for s in (result.segments or ()) if s.strip()]
    if not result.rejected and not result.unsure:  # an unsure reading is asked back each time
        remember(ctx.store, ctx.fingerprint_key, ctx.fingerprint, result.text, alternatives)
    return {
        "transcript": result.text,
        "alternatives": [a for a in alternatives if a],
        "rejected": result.rejected,
        "segments": segments,
        "unsure": result.unsure,
        **heard,
    }


# -- understanding ----------------------------------------------------------------------------
def rules(state: TurnState, ctx: TurnContext, cancel: threading.Event) -> dict:
    """Match the alternatives against the rules; each segment is its own command when each
    matches."""
    area = ctx.conversation.area
    said = state.get("transcript") or ""  # "stop": a ringing timer, else the truth
    stopped = ctx.timers.stop_request(said) if ctx.timers is not None else None
    stopped = stopped or nothing_to_stop(said, ctx.timers and ctx.timers.timers, ctx.home)
    if stopped is not None:
        return stopped
    answered = question_answer(ctx.home, state)  # "yes", "no", "kitchen" to the last question
    if answered is not None:
        return answered
    engine = ctx.engines.rules()
    segments = state.get("segments") or []
    if len(segments) > 1:  # every segment a command, else the whole is read part by part
        matches = [engine.recognize(s, area) for s in segments]
        if (
            all(matches)
            and not any(  # "... and the party time" after "turn off ...": as a whole
                bare_after(s, m, p)
                for s, m, p in zip(segments[1:], matches[1:], matches[:-1], strict=True)
            )
        ):
            return {
                "matches": matches,
                "source": "rules",
                "transcript": " ".join(m.text for m in matches),
            }
    text, match = engine.rank(state.get("alternatives") or [state.get("transcript", "")], area)
    if match is None:
        referred = resolve_reference(engine, ctx.home, ctx.conversation, text)  # "turn it off"
        if referred is not None:
            return referred
        if confirmation_answer(text) is False:  # a stray "no": nothing to cancel, no LLM
            return {"matches": [], "response": NOTHING_TO_CANCEL, "source": "rules"}
        # time, date, weather, states: from their source only
        fact = fact_update(ctx.home, text, ctx.clock.now())
        if fact is not None:
            honest = beyond_source(ctx.home, text, fact_matches(fact), check_names=False)
            return (
                fact
                if honest is None
                else {"matches": [], "response": honest, "source": "rules", "transcript": text}
            )
        lacking = several_update(engine, ctx.home, text, area, segments)  # "... and the attic"
        if lacking is not None:
            return lacking
        more = getattr(engine, "recognize_more", None)
        matches = more(text, area) if more else []  # several commands, then fuzzy
        if not matches:
            return _unmatched(engine, ctx, text, area)
    else:  # "add milk to my list and add bread to my list": two items, not one
        split = getattr(engine, "several_swallowed", None)
        matches = (split(match, text, area) if split else None) or [match]
    # a fact intent asked about another time or place
    honest = beyond_source(ctx.home, text, matches)
    if honest is not None:
        return {"matches": [], "response": honest, "source": "rules", "transcript": text}
    return {"matches": matches, "transcript": text, "source": matches[0].source or "rules"}


def _unmatched(engine, ctx: TurnContext, text: str, area: str | None) -> dict:
    """The rules node's update when nothing matched: not understood at once (no LLM) when a
    part of several commands had two readings with the verb carried over (never guessed:
    :meth:`hub.intents.rules.Rules.several_in_doubt`); else whether the FAQ has it and
    whether a loose reading lost a meaning."""
    doubt = getattr(engine, "several_in_doubt", None)
    if doubt and doubt(text, area):
        return {"matches": [], "response": NOT_UNDERSTOOD, "source": "rules", "transcript": text}
    lost = getattr(engine, "meaning_lost", None)
    return {
        "matches": [],
        "faq_hit": bool(ctx.engines.faq().answer(text)),
        "meaning_lost": bool(lost and lost(text, area)),  # "not understood", said last
    }


def llm_vocabulary(ctx: TurnContext):
    """The :class:`hub.llm.parse.Vocabulary` LLM output is checked against: the rules'
    intents, the home's entities and areas, the sensitive entities that need a yes."""
    ents = ctx.home.entities
    return Vocabulary(
        ctx.engines.rules().intent_names(),
        [e.name for e in ents],
        list(ctx.home.areas),
        [e.name for e in ents if e.sensitive and e.confirm],
    )


MAX_RAW_CHARS = 4000
"""Model output longer than this is cut before parsing (a runaway model, BC-13)."""


def llm_intent(state: TurnState, ctx: TurnContext, cancel: threading.Event) -> dict:
    """Ask the LLM what an unmatched transcript means; act only on what passes every check."""
    engine = ctx.engines.llm()
    strict = state.get("attempts", {}).get(names.LLM_INTENT, 0) >= 1  # a retry: stricter prompt
    raw = engine.classify(state["transcript"], cancel, strict=strict)[:MAX_RAW_CHARS]
    log.info("llm raw output: %r", raw)
    result = check_output(raw, llm_vocabulary(ctx), ctx.settings.llm.min_confidence)
    transcript = state["transcript"]
    if isinstance(result, Rejection):
        log.info("llm output not acted on (%s %s)", result.reason, result.value)
        if result.reason in ("unknown_name", "unknown_area") and mentioned(
            result.value, transcript
        ):
            return {"llm": None, "matches": [], "response": result.message, "source": "llm"}
        return {"llm": None, "matches": []}
    if result.intent == "answer":
        return {"llm": result, "matches": []}
    match = delayed(
        to_match(result, transcript, ctx.home),
        transcript,
        ctx.engines.rules(),
        ctx.conversation.area,
    )  # a delayed command: checked by the rules
    if isinstance(match, Refusal):
        return {"llm": None, "matches": [], "response": match.message, "source": "llm"}
    if result.needs_confirmation:
        return {"llm": result, "matches": [], "confirm": match}
    return {"llm": result, "matches": [match], "source": "llm"}


def llm_answer(state: TurnState, ctx: TurnContext, cancel: threading.Event) -> dict:
    """A short spoken answer from the LLM (at most two sentences), cleaned for speech.

    Each sentence goes to the turn's :class:`~hub.graph.streaming.AnswerSpeech` as soon as
    the model finishes it: it is spoken on its own thread (outside this node's budget) while
    the next one is generated, and a retry never says a sentence twice. An answer with
    nothing speakable is "nothing to say" (BC-08): no error, nothing spoken. A question about
    what changes over time (:func:`hub.facts.changing.asks_changing`) is not asked of the
    model: :data:`~hub.facts.changing.OUT_OF_DATE`.
    """
    speech, question = ctx.answer_speech(state["started"]), state["transcript"]
    if asks_changing(question):  # who holds an office now, the latest ...: stale at best
        log.info("question about what changes over time, not asked of the llm: %r", question)
        return {"response": OUT_OF_DATE, "source": "llm"}
    sentences = ctx.engines.llm().answer(question, cancel)
    try:
        for piece in sentences:
            text = sentence(clean_answer(piece))  # the last one may lack its full stop
            if text and made_up(text, ctx.home):  # never a fact of its own (code, not prompt)
                log.info("llm answer claimed a fact, not said: %r", text)
                if not speech.sentences:
                    return {
                        "response": honest_answer(question, ctx.home, ctx.clock.now(), text),
                        "source": "llm",
                    }
                break
            if text:
                speech.add(text)
            if cancel.is_set():
                break
    finally:
        getattr(sentences, "close", lambda: None)()  # stops the generation
    if cancel.is_set():
        raise TimeoutError_("llm answer stopped: out of time", node=names.LLM_ANSWER)
    if not speech.sentences:
        log.info("llm answer had nothing to say for %r", question)
        return {"response": "", "source": "llm", "nothing_to_say": True}
    return {"response": speech.text, "source": "llm"}


def confirm(state: TurnState, ctx: TurnContext) -> dict:
    """Ask before a sensitive action (any path); the next turn's yes in this conversation does
    it."""
    asked = state.get("confirm")
    matches = [asked] if asked is not None else state["matches"]
    ctx.conversation.ask_confirmation(tuple(matches))
    first = matches[0]
    return {
        "response": question(ctx.home, matches),
        "asked_back": True,
        "commands": together.asked_entries(matches),
        "matches": [],
        "source": state.get("source") or first.source,
        "intent": first.intent,
        "slots": dict(first.slots),
    }


# -- action and answer ------------------------------------------------------------------------
def act(state: TurnState, ctx: TurnContext, cancel: threading.Event) -> dict:
    """Carry out each matched intent once, keyed by the turn id (idempotency key)."""
    actor, devices, now = ctx.engines.actor(), ctx.engines.devices(), ctx.clock.monotonic
    unsaved = getattr(ctx.store, "unsaved_writes", 0)  # a change the store cannot take: said
    outcomes = [
        actor.execute(in_area(m, ctx.conversation.area), idempotency_key=f"{state['turn_id']}:{i}")
        for i, m in enumerate(state["matches"])
    ]
    # a PUBACK is awaited well within this node's timeout: "queued" is said, never "failed"
    end = now() + min(
        ctx.deadline.left() - 0.25, 0.5 * ctx.settings.resilience.timeouts_s.get(names.ACT, 2.0)
    )
    said = [
        [(action, devices.publish(action, cancel, end - now())) for action in outcome.actions]
        for outcome in outcomes
    ]  # once per key
    sent = [pair for pairs in said for pair in pairs]
    results = [[result for _, result in pairs] for pairs in said]
    matches = state["matches"]
    record_turn(ctx.conversation, ctx.home, matches, outcomes)  # what "it" means
    response = together.answer(matches, outcomes, results)  # several: one answer, names said
    if getattr(ctx.store, "unsaved_writes", 0) > unsaved:
        response = join_sentences([response, NOT_SAVED])
    done = all(o.ok for o in outcomes) and all_sent(sent)
    update = {
        "outcomes": outcomes,
        "done": done and all(has_side_effects(m.intent) for m in matches),
        "response": response,
        "intent": matches[0].intent,
        "slots": dict(matches[0].slots),
        "commands": together.entries(matches, outcomes, results),
    }
    return {**update, **queued_update(state, response, sent)}


def faq(state: TurnState, ctx: TurnContext) -> dict:
    """A curated answer (``source`` faq): level 0 when it is the answer (the rules missed, the
    FAQ has it), L3 only when it stands in for a failed rules or LLM node. When the LLM failed
    and the FAQ has nothing, Home Assistant's error for what the home lacks, at L2
    (:func:`hub.act.honest.miss_update`)."""
    answer = ctx.engines.faq().answer(state.get("transcript") or "")
    if answer:
        return {
            "response": answer,
            "source": "faq",
            "fallback_level": max(
                state.get("fallback_level", 0), curated_level(state.get("errors"))
            ),
        }
    if any(e["node"] == names.LLM_INTENT for e in state.get("errors") or []):
        # the LLM failed on a request Home Assistant's sentences know, about something the
        # home lacks ("the lights in the garden"): that true answer, not the placeholder
        honest = miss_update(ctx.home, state.get("transcript") or "")
        if honest:
            return {**honest, "fallback_level": max(state.get("fallback_level", 0), 2)}
    return {}


def relaxed(state: TurnState, ctx: TurnContext) -> dict:
    """L2: the rules again, relaxed (a word left out), when the LLM path failed. A reading
    that had to leave out a word that changes the meaning ("don't", "tomorrow", "except":
    :class:`hub.intents.meaning.MeaningLost`; also in a name read as a wildcard,
    :meth:`hub.act.honest.Misses.lost`) does nothing: "Sorry, I couldn't understand that."."""
    rules = ctx.engines.rules()
    read = getattr(rules, "relaxed_reading", None) or getattr(rules, "recognize_fuzzy", None)
    text = state.get("transcript") or ""
    found = read(text, ctx.conversation.area) if read else None
    found = found or misses_of(ctx.home).lost(text)  # "turn on the light unless it's dark"
    if found is None:
        return {}
    level = max(state.get("fallback_level", 0), 2)
    if isinstance(found, MeaningLost):
        return {
            "matches": [],
            "response": NOT_UNDERSTOOD,
            "source": "rules",
            "fallback_level": level,
        }
    return {"matches": [found], "source": "rules", "fallback_level": level}


def no_speech(state: TurnState, ctx: TurnContext) -> dict:
    """Nothing was said: no LLM, nothing spoken."""
    return {"status": "no_speech", "transcript": ""}


def respond(state: TurnState, ctx: TurnContext) -> dict:
    """Make sure there is something to say, including when the action failed; a request for
    what the home lacks gets a true sentence (:mod:`hub.act.honest`), not "couldn't"; alarms
    missed while the hub was off are said first, once (:func:`hub.act.alert_ring.
    missed_notice`); every answer ends as a sentence."""
    out = _respond(state, ctx)
    notice = missed_notice(ctx.alerts) if ctx.alerts is not None else ""
    said = out.get("response", state.get("response")) or ""
    whole = sentence(f"{notice} {said}")  # a full stop for Piper's prosody ("Timer cancelled")
    return {**out, "response": whole} if whole != said else out


def _respond(state: TurnState, ctx: TurnContext) -> dict:
    failed = state.get("failed")
    if failed and failed["node"] == names.ACT:
        return {
            "response": ACT_FAILED,
            "fallback_level": max(state.get("fallback_level", 0), 3),
            "source": "fallback",
        }
    speech = ctx.speech
    if (state.get("response") or "").strip() or state.get("nothing_to_say"):
        return {}
    if speech is not None and speech.sentences:  # the LLM ran out of time after speaking
        return {"response": speech.text, "source": "llm"}
    text = NOT_CAUGHT if state.get("rejected") and not state.get("transcript") else NOT_UNDERSTOOD
    honest = (
        text == NOT_UNDERSTOOD
        and not state.get("meaning_lost")  # not "no device called kitchen light tomorrow"
        and miss_update(ctx.home, state.get("transcript") or "")
    )
    return honest or {"response": text, "source": state.get("source") or "rules"}
