"""The turn graph's node names: their one home (the graph, the Hub, settings, trace, stats,
benchmarks and fault injection all read them here).

A plain leaf module (it imports nothing), so the settings can check ``timeouts_s`` and
``inject`` against it without importing the graph.
"""

from __future__ import annotations

FINGERPRINT = "fingerprint"
ASR = "asr"
ASR2 = "asr2"
"""The second recognizer's engine and error entries (it runs inside the ``asr`` node)."""
CACHED_TRANSCRIPT = "cached_transcript"
RULES = "rules"
LLM_INTENT = "llm_intent"
LLM_ANSWER = "llm_answer"
CONFIRM = "confirm"
RELAXED = "relaxed"
FAQ = "faq"
ACT = "act"
RESPOND = "respond"
TTS = "tts"
CACHED_AUDIO = "cached_audio"
PLACEHOLDER = "placeholder"
NO_SPEECH = "no_speech"

ENGINE_NODES = (ASR, RULES, LLM_INTENT, LLM_ANSWER, ACT, TTS)
"""Nodes that run an engine: the ones with a timeout (``[resilience] timeouts_s``) and the
ones faults can be injected into (``[resilience] inject``)."""

LLM_NODES = (LLM_INTENT, LLM_ANSWER)
"""Nodes that run the LLM: they share ``[llm] budget_s`` and may retry once on a timeout."""

UNDERSTANDING = (RULES, LLM_INTENT, LLM_ANSWER)
"""Nodes that find what was meant: when one failed, the FAQ's miss leads to the placeholder."""
