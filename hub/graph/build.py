"""The turn as a LangGraph ``StateGraph``: nodes, conditional edges, the fallback ladder.

::

    fingerprint ─► asr ─► rules ─► act ─────────────► respond ─► tts ─► END
         │  (cache hit)    │  └─► llm_intent ─► act / confirm / llm_answer
         └────────────────►┘          └─(fails)─► relaxed rules (L2) ─► faq (L3) ─► placeholder (L4)
    asr fails ─► cached transcript of a similar utterance (L1) ─► placeholder (L4)
    tts fails ─► cached audio (L1) ─► placeholder (L4)

A failed node is retried only when :func:`hub.resilience.retry.should_retry` allows it and its
attempt count in state is below :data:`hub.resilience.retry.MAX_ATTEMPTS`, so no loop can reach
LangGraph's recursion limit (case BC-16). Routes that need the turn's deadline or audio get its
:class:`~hub.graph.state.TurnContext` from LangGraph (``runtime.context``).
"""

from __future__ import annotations

from functools import partial

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from hub.graph import nodes, streaming
from hub.graph.confirmation import needs_confirmation
from hub.graph.guard import BREAKER_OPEN, guarded, takes_turn
from hub.graph.state import TurnContext, TurnState
from hub.intents.catalog import has_side_effects
from hub.resilience.retry import MAX_ATTEMPTS, should_retry

RECURSION_LIMIT = 40
"""Far above the longest possible path (about 16 steps with every retry taken)."""


def _failed(state: dict, node: str) -> str | None:
    failed = state.get("failed")
    return failed["kind"] if failed and failed["node"] == node else None


def _retry(state: dict, turn: TurnContext, node: str, kind: str, *,
           side_effect: bool = False) -> bool:
    """Whether a failed node runs again (the rules: :mod:`hub.resilience.retry`)."""
    attempt = (state.get("attempts") or {}).get(node, 0)
    if kind == BREAKER_OPEN or attempt >= MAX_ATTEMPTS:
        return False
    return should_retry(kind, attempt, node, turn.deadline, side_effect=side_effect,
                        has_idempotency_key=True)


def route_fingerprint(state: dict, runtime: Runtime[TurnContext]) -> str:
    samples = runtime.context.samples
    if state.get("transcript"):
        return "rules"
    if state.get("silent") or samples is None or len(samples) == 0:
        return "no_speech"
    return "asr"


def route_asr(state: dict, runtime: Runtime[TurnContext]) -> str:
    kind = _failed(state, "asr")
    if kind:
        if _retry(state, runtime.context, "asr", kind):
            return "asr"
        return "cached_transcript" if state.get("l1") else "placeholder"
    if state.get("transcript"):
        return "rules"
    return "respond" if state.get("rejected") else "no_speech"


def route_cached_transcript(state: dict) -> str:
    return "rules" if state.get("transcript") else "placeholder"


def route_rules(hub, state: dict, runtime: Runtime[TurnContext]) -> str:
    kind = _failed(state, "rules")
    if kind:  # understanding is down: canned answers, then the placeholder, at once
        return "rules" if _retry(state, runtime.context, "rules", kind) else "faq"
    if state.get("matches"):
        return _act_or_ask(hub, state)
    if state.get("response"):
        return "respond"  # a "no" to a confirmation question
    if state.get("faq_hit"):
        return "faq"
    return "llm_intent" if hub.llm_enabled("intent") else "faq"


QUESTION_WORDS = frozenset({"what", "what's", "whats", "why", "how", "who", "who's", "when",
                            "where", "which", "is", "are", "can", "could", "do", "does",
                            "should", "tell", "explain"})


def is_question(text: str) -> bool:
    """True when ``text`` reads as a question (a question word first, or a ``?`` last)."""
    words = text.lower().split()
    return bool(words) and (words[0] in QUESTION_WORDS or text.rstrip().endswith("?"))


HOME_WORDS = frozenset({"light", "lights", "lamp", "door", "doors", "window", "windows", "lock",
                        "locked", "timer", "timers", "temperature", "thermostat", "blinds",
                        "curtains", "garage", "tv", "fan", "switch", "heating", "alarm"})


def about_the_home(text: str) -> bool:
    """True when ``text`` talks about devices or timers (the rules' domain, not the LLM's)."""
    return bool(HOME_WORDS & set(text.lower().replace("?", " ").split()))


def route_llm_intent(hub, state: dict, runtime: Runtime[TurnContext]) -> str:
    kind = _failed(state, "llm_intent")
    if kind:
        return "llm_intent" if _retry(state, runtime.context, "llm_intent", kind) else "relaxed"
    if state.get("matches"):
        return _act_or_ask(hub, state)
    if state.get("confirm") is not None:
        return "confirm"
    if state.get("response"):
        return "respond"  # a refusal to speak
    if not hub.llm_enabled("answer"):
        return "faq"
    llm, text = state.get("llm"), state.get("transcript", "")
    if about_the_home(text):
        return "faq"  # the rules own the home; a small model would invent its state
    if (llm is not None and llm.intent == "answer") or is_question(text):
        return "llm_answer"
    return "faq"


def route_llm_answer(state: dict, runtime: Runtime[TurnContext]) -> str:
    kind = _failed(state, "llm_answer")
    if kind:
        speech = streaming.current(state)
        if kind == "timeout" and speech is not None and speech.sentences:
            return "respond"  # what was said stands; a retry would only say it again
        return "llm_answer" if _retry(state, runtime.context, "llm_answer", kind) else "relaxed"
    return "respond"


def route_relaxed(hub, state: dict) -> str:
    return _act_or_ask(hub, state) if state.get("matches") else "faq"


def _act_or_ask(hub, state: dict) -> str:
    """``confirm`` when a match would change a sensitive entity not yet confirmed, or when the
    recognizer was unsure of a command's action word (``unsure``: "on" or "off"?), else ``act``."""
    if state.get("confirmed"):
        return "act"
    if state.get("unsure") and any(has_side_effects(m.intent) for m in state["matches"]):
        return "confirm"
    if not needs_confirmation(hub.home, state["matches"], state.get("preconfirmed") or ()):
        return "act"
    return "confirm"


UNDERSTANDING = ("rules", "llm_intent", "llm_answer")


def route_faq(state: dict) -> str:
    """A canned answer, else: when understanding failed, the placeholder; else "not understood"."""
    if state.get("response"):
        return "respond"
    failed = any(e["node"] in UNDERSTANDING for e in state.get("errors") or [])
    return "placeholder" if failed else "respond"


def route_act(state: dict, runtime: Runtime[TurnContext]) -> str:
    kind = _failed(state, "act")
    if kind and _retry(state, runtime.context, "act", kind, side_effect=True):
        return "act"
    return "respond"


def route_respond(hub, state: dict) -> str:
    speech = streaming.current(state)
    if hub.speak and speech is not None and speech.sentences:
        return "tts"  # the LLM's answer is being spoken: wait for it, say what it left
    return "tts" if hub.speak and (state.get("response") or "").strip() else END


def route_tts(state: dict, runtime: Runtime[TurnContext]) -> str:
    kind = _failed(state, "tts")
    if kind:
        return "tts" if _retry(state, runtime.context, "tts", kind) else "cached_audio"
    return END


def route_cached(state: dict) -> str:
    return END if state.get("pcm") else "placeholder"


def _plain(fn, hub):
    """``fn(hub, state)`` as a node; ``fn(hub, state, turn)`` is given the turn's context."""
    if not takes_turn(fn):
        return partial(fn, hub)

    def run(state: dict, runtime: Runtime[TurnContext]) -> dict:
        return fn(hub, state, runtime.context)

    run.__name__ = f"node_{fn.__name__}"
    return run


def build_graph(hub):
    """Compile the turn graph for the orchestrator ``hub`` (see :class:`hub.core.hub.Hub`)."""
    g = StateGraph(TurnState, context_schema=TurnContext)
    plain = {"fingerprint": nodes.fingerprint, "confirm": nodes.confirm, "faq": nodes.faq,
             "respond": nodes.respond, "cached_audio": nodes.cached_audio,
             "placeholder": nodes.placeholder, "relaxed": nodes.relaxed,
             "no_speech": nodes.no_speech, "cached_transcript": nodes.cached_transcript}
    for name, fn in plain.items():
        g.add_node(name, _plain(fn, hub))
    # node -> (its circuit breaker, the engine it loads); the MQTT backend holds its own
    # breaker, so a broker that is down never blocks answers that need no device
    engines = {"asr": ("asr", "asr"), "rules": ("rules", "rules"), "llm_intent": ("llm", "llm"),
               "llm_answer": ("llm", "llm"), "act": (None, "devices"), "tts": ("tts", "tts")}
    for name, (breaker, loads) in engines.items():
        g.add_node(name, guarded(name, getattr(nodes, name), hub, engine=breaker, loads=loads))
    g.add_edge(START, "fingerprint")
    g.add_conditional_edges("fingerprint", route_fingerprint, ["asr", "rules", "no_speech"])
    g.add_conditional_edges("asr", route_asr,
                            ["asr", "rules", "placeholder", "no_speech", "respond",
                             "cached_transcript"])
    g.add_conditional_edges("cached_transcript", route_cached_transcript,
                            ["rules", "placeholder"])
    g.add_conditional_edges("rules", partial(route_rules, hub),
                            ["rules", "act", "confirm", "llm_intent", "faq", "respond"])
    g.add_conditional_edges("llm_intent", partial(route_llm_intent, hub),
                            ["llm_intent", "act", "confirm", "llm_answer", "faq", "relaxed",
                             "respond"])
    g.add_conditional_edges("llm_answer", route_llm_answer, ["llm_answer", "respond", "relaxed"])
    g.add_conditional_edges("relaxed", partial(route_relaxed, hub), ["act", "confirm", "faq"])
    g.add_conditional_edges("faq", route_faq, ["respond", "placeholder"])
    g.add_conditional_edges("act", route_act, ["act", "respond"])
    g.add_edge("confirm", "respond")
    g.add_conditional_edges("respond", partial(route_respond, hub), ["tts", END])
    g.add_conditional_edges("tts", route_tts, ["tts", "cached_audio", END])
    g.add_conditional_edges("cached_audio", route_cached, ["placeholder", END])
    g.add_edge("placeholder", END)
    g.add_edge("no_speech", END)
    return g.compile()
