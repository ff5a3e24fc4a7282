"""The turn as a LangGraph ``StateGraph``: nodes, conditional edges, the fallback ladder.

::

    fingerprint ─► asr ─► rules ─► act ─────────────► respond ─► tts ─► END
         │  (cache hit)    │  └─► llm_intent ─► act / confirm / llm_answer
         └────────────────►┘          └─(fails)─► relaxed rules (L2) ─► faq (L3) ─► placeholder (L4)
    asr fails ─► cached transcript of a similar utterance (L1) ─► placeholder (L4)
    tts fails ─► cached audio (L1) ─► placeholder (L4)

A failed node is retried only when :func:`hub.resilience.retry.should_retry` allows it and its
attempt count in state is below :data:`hub.resilience.retry.MAX_ATTEMPTS`, so no loop can reach
LangGraph's recursion limit (case BC-16). Nodes and routes get the turn's
:class:`~hub.graph.state.TurnContext` from LangGraph (``runtime.context``); node names are
:mod:`hub.names`.
"""

from __future__ import annotations

from collections.abc import Callable

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from hub.graph import intake, nodes, synthesis
from hub.graph.confirmation import needs_confirmation
from hub.graph.guard import BREAKER_OPEN, Body, guarded
from hub.graph.state import TurnContext, TurnState
from hub.home import Home
from hub.intents.catalog import has_side_effects
from hub.llm.retrieve import relevant
from hub.names import (
    ACT,
    ASR,
    CACHED_AUDIO,
    CACHED_TRANSCRIPT,
    CONFIRM,
    FAQ,
    FINGERPRINT,
    LLM_ANSWER,
    LLM_INTENT,
    NO_SPEECH,
    PLACEHOLDER,
    RELAXED,
    RESPOND,
    RULES,
    TTS,
    UNDERSTANDING,
)
from hub.resilience.retry import MAX_ATTEMPTS, should_retry

RECURSION_LIMIT = 40
"""Far above the longest possible path (about 16 steps with every retry taken)."""


def _failed(state: TurnState, node: str) -> str | None:
    failed = state.get("failed")
    return failed["kind"] if failed and failed["node"] == node else None


def _retry(
    state: TurnState, turn: TurnContext, node: str, kind: str, *, side_effect: bool = False
) -> bool:
    """Whether a failed node runs again (the rules: :mod:`hub.resilience.retry`)."""
    attempt = (state.get("attempts") or {}).get(node, 0)
    if kind == BREAKER_OPEN or attempt >= MAX_ATTEMPTS:
        return False
    return should_retry(
        kind, attempt, node, turn.deadline, side_effect=side_effect, has_idempotency_key=True
    )


def route_fingerprint(state: TurnState, runtime: Runtime[TurnContext]) -> str:
    samples = runtime.context.samples
    if state.get("transcript"):
        return RULES
    if state.get("silent") or samples is None or len(samples) == 0:
        return NO_SPEECH
    return ASR


def route_asr(state: TurnState, runtime: Runtime[TurnContext]) -> str:
    kind = _failed(state, ASR)
    if kind:
        if _retry(state, runtime.context, ASR, kind):
            return ASR
        return CACHED_TRANSCRIPT if state.get("l1") else PLACEHOLDER
    if state.get("transcript"):
        return RULES
    return RESPOND if state.get("rejected") else NO_SPEECH


def route_cached_transcript(state: TurnState) -> str:
    return RULES if state.get("transcript") else PLACEHOLDER


def route_rules(state: TurnState, runtime: Runtime[TurnContext]) -> str:
    kind = _failed(state, RULES)
    if kind:  # understanding is down: canned answers, then the placeholder, at once
        return RULES if _retry(state, runtime.context, RULES, kind) else FAQ
    if state.get("matches"):
        return _act_or_ask(runtime.context.home, state)
    if state.get("response"):
        return RESPOND  # a "no" to a confirmation question
    if state.get("faq_hit"):
        return FAQ
    llm_on = runtime.context.llm_on
    if "answer" in llm_on and open_question(
        runtime.context.settings.home, state.get("transcript", "")
    ):
        return LLM_ANSWER  # classifying it could only say "answer", in most of the time left
    return LLM_INTENT if "intent" in llm_on else FAQ


QUESTION_WORDS = frozenset(
    {
        "what",
        "what's",
        "whats",
        "why",
        "how",
        "who",
        "who's",
        "when",
        "where",
        "which",
        "is",
        "are",
        "can",
        "could",
        "do",
        "does",
        "should",
        "tell",
        "explain",
    }
)


def is_question(text: str) -> bool:
    """True when ``text`` reads as a question (a question word first, or a ``?`` last)."""
    words = text.lower().split()
    return bool(words) and (words[0] in QUESTION_WORDS or text.rstrip().endswith("?"))


HOME_WORDS = frozenset(
    {
        "light",
        "lights",
        "lamp",
        "door",
        "doors",
        "window",
        "windows",
        "lock",
        "locked",
        "timer",
        "timers",
        "temperature",
        "thermostat",
        "blinds",
        "curtains",
        "garage",
        "tv",
        "fan",
        "switch",
        "heating",
        "alarm",
    }
)


def about_the_home(text: str) -> bool:
    """True when ``text`` talks about devices or timers (the rules' domain, not the LLM's)."""
    return bool(HOME_WORDS & set(text.lower().replace("?", " ").split()))


def open_question(home, text: str) -> bool:
    """True when ``text`` is a question that names nothing of ``home`` (the ``[home]``
    settings): no device or timer
    word (:func:`about_the_home`), no entity, area or domain word (:func:`relevant`). Such a
    question goes to the answer model without the classify call (in a 137-entity home on a
    loaded 2-core machine that call took 4-5 s of the 6 s the two LLM nodes share)."""
    if not is_question(text) or about_the_home(text):
        return False
    entities, areas = relevant(home, text)
    return not entities and not areas


def route_llm_intent(state: TurnState, runtime: Runtime[TurnContext]) -> str:
    kind = _failed(state, LLM_INTENT)
    if kind:
        return LLM_INTENT if _retry(state, runtime.context, LLM_INTENT, kind) else RELAXED
    if state.get("matches"):
        return _act_or_ask(runtime.context.home, state)
    if state.get("confirm") is not None:
        return CONFIRM
    if state.get("response"):
        return RESPOND  # a refusal to speak
    if "answer" not in runtime.context.llm_on:
        return FAQ
    llm, text = state.get("llm"), state.get("transcript", "")
    if about_the_home(text):
        return FAQ  # the rules own the home; a small model would invent its state
    if (llm is not None and llm.intent == "answer") or is_question(text):
        return LLM_ANSWER
    return FAQ


def route_llm_answer(state: TurnState, runtime: Runtime[TurnContext]) -> str:
    kind = _failed(state, LLM_ANSWER)
    if kind:
        speech = runtime.context.speech
        if kind == "timeout" and speech is not None and speech.sentences:
            return RESPOND  # what was said stands; a retry would only say it again
        return LLM_ANSWER if _retry(state, runtime.context, LLM_ANSWER, kind) else RELAXED
    return RESPOND


def route_relaxed(state: TurnState, runtime: Runtime[TurnContext]) -> str:
    if state.get("matches"):
        return _act_or_ask(runtime.context.home, state)
    return RESPOND if state.get("response") else FAQ  # a reading that lost the meaning


def _act_or_ask(home: Home, state: TurnState) -> str:
    """``confirm`` when a match would change a sensitive entity not yet confirmed, or when the
    recognizer was unsure of a command's action word (``unsure``: "on" or "off"?), else ``act``."""
    if state.get("confirmed"):
        return ACT
    if state.get("unsure") and any(has_side_effects(m.intent) for m in state["matches"]):
        return CONFIRM
    if not needs_confirmation(home, state["matches"], state.get("preconfirmed") or ()):
        return ACT
    return CONFIRM


def route_faq(state: TurnState) -> str:
    """A canned answer, else: when understanding failed, the placeholder; else "not understood"."""
    if state.get("response"):
        return RESPOND
    failed = any(e["node"] in UNDERSTANDING for e in state.get("errors") or [])
    return PLACEHOLDER if failed else RESPOND


def route_act(state: TurnState, runtime: Runtime[TurnContext]) -> str:
    kind = _failed(state, ACT)
    if kind and _retry(state, runtime.context, ACT, kind, side_effect=True):
        return ACT
    return RESPOND


def route_respond(state: TurnState, runtime: Runtime[TurnContext]) -> str:
    speech, speak = runtime.context.speech, runtime.context.speak
    if speak and speech is not None and speech.sentences:
        return TTS  # the LLM's answer is being spoken: wait for it, say what it left
    return TTS if speak and (state.get("response") or "").strip() else END


def route_tts(state: TurnState, runtime: Runtime[TurnContext]) -> str:
    kind = _failed(state, TTS)
    if kind:
        return TTS if _retry(state, runtime.context, TTS, kind) else CACHED_AUDIO
    return END


def route_cached(state: TurnState) -> str:
    return END if state.get("pcm") else PLACEHOLDER


def _plain(fn: Callable[[TurnState, TurnContext], dict]):
    """``fn(state, ctx)`` as a node (LangGraph gives it the runtime, whose context is ctx)."""

    def run(state: TurnState, runtime: Runtime[TurnContext]) -> dict:
        return fn(state, runtime.context)

    run.__name__ = f"node_{fn.__name__}"
    return run


PLAIN = {
    FINGERPRINT: intake.fingerprint,
    CONFIRM: nodes.confirm,
    FAQ: nodes.faq,
    RESPOND: nodes.respond,
    CACHED_AUDIO: synthesis.cached_audio,
    PLACEHOLDER: synthesis.placeholder,
    RELAXED: nodes.relaxed,
    NO_SPEECH: nodes.no_speech,
    CACHED_TRANSCRIPT: intake.cached_transcript,
}
"""Nodes without an engine: they never fail."""

GUARDED: dict[str, tuple[Body, str | None, str]] = {
    ASR: (nodes.asr, "asr", "asr"),
    RULES: (nodes.rules, "rules", "rules"),
    LLM_INTENT: (nodes.llm_intent, "llm", "llm"),
    LLM_ANSWER: (nodes.llm_answer, "llm", "llm"),
    ACT: (nodes.act, None, "devices"),
    TTS: (synthesis.tts, "tts", "tts"),
}
"""Node -> (its work, its circuit breaker, the engine it loads); the MQTT backend holds its own
breaker, so a broker that is down never blocks answers that need no device."""


def build_graph():
    """Compile the turn graph; run it with ``graph.invoke(state, config, context=TurnContext)``."""
    g = StateGraph(TurnState, context_schema=TurnContext)
    for name, fn in PLAIN.items():
        g.add_node(name, _plain(fn))
    for name, (body, breaker, loads) in GUARDED.items():
        g.add_node(name, guarded(name, body, engine=breaker, loads=loads))
    g.add_edge(START, FINGERPRINT)
    g.add_conditional_edges(FINGERPRINT, route_fingerprint, [ASR, RULES, NO_SPEECH])
    g.add_conditional_edges(
        ASR, route_asr, [ASR, RULES, PLACEHOLDER, NO_SPEECH, RESPOND, CACHED_TRANSCRIPT]
    )
    g.add_conditional_edges(CACHED_TRANSCRIPT, route_cached_transcript, [RULES, PLACEHOLDER])
    g.add_conditional_edges(
        RULES, route_rules, [RULES, ACT, CONFIRM, LLM_INTENT, LLM_ANSWER, FAQ, RESPOND]
    )
    g.add_conditional_edges(
        LLM_INTENT, route_llm_intent, [LLM_INTENT, ACT, CONFIRM, LLM_ANSWER, FAQ, RELAXED, RESPOND]
    )
    g.add_conditional_edges(LLM_ANSWER, route_llm_answer, [LLM_ANSWER, RESPOND, RELAXED])
    g.add_conditional_edges(RELAXED, route_relaxed, [ACT, CONFIRM, FAQ, RESPOND])
    g.add_conditional_edges(FAQ, route_faq, [RESPOND, PLACEHOLDER])
    g.add_conditional_edges(ACT, route_act, [ACT, RESPOND])
    g.add_edge(CONFIRM, RESPOND)
    g.add_conditional_edges(RESPOND, route_respond, [TTS, END])
    g.add_conditional_edges(TTS, route_tts, [TTS, CACHED_AUDIO, END])
    g.add_conditional_edges(CACHED_AUDIO, route_cached, [PLACEHOLDER, END])
    g.add_edge(PLACEHOLDER, END)
    g.add_edge(NO_SPEECH, END)
    return g.compile()
