"""The local language model: it only *enhances* the rules.

It classifies transcripts the rules did not match (JSON constrained by a schema, checked by
the pure :func:`parse_intent` against the whitelist of intents and the home's names) and gives
short answers to questions, streamed sentence by sentence. Engines: llama.cpp in-process
(:mod:`hub.llm.llama`, the embedded SmolLM2-135M-Instruct or any GGUF) or an OpenAI-compatible
server (:mod:`hub.llm.remote`). Build one with :func:`make_llm`; tests replace it with a stub.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterator
from typing import Protocol, runtime_checkable

from hub.llm.parse import ANSWER, LlmIntent, Rejection, Vocabulary, check_output, parse_intent
from hub.llm.prompts import DEFAULT_INTENTS, HomeNames, home_names
from hub.settings import HomeSettings, LlmSettings

__all__ = [
    "ANSWER",
    "DEFAULT_INTENTS",
    "HomeNames",
    "LlmEngine",
    "LlmIntent",
    "Rejection",
    "Vocabulary",
    "check_output",
    "home_names",
    "interpret",
    "make_llm",
    "parse_intent",
]


@runtime_checkable
class LlmEngine(Protocol):
    """What the graph needs from a language model."""

    name: str

    def classify(
        self, text: str, cancel: threading.Event | None = None, strict: bool = False
    ) -> str:
        """Raw model output (JSON text) for ``text``; ``strict``: the stricter retry prompt.

        Raises:
            TimeoutError_: cancelled or timed out. TransientError, InvalidOutputError,
            BadInputError, FatalError: as the engine maps its failures.
        """
        ...

    def answer(self, question: str, cancel: threading.Event | None = None) -> Iterator[str]:
        """At most two sentences, each yielded as soon as it is complete."""
        ...


def make_llm(
    settings: LlmSettings, home: HomeSettings, intents: Collection[str], release: bool = False
) -> LlmEngine:
    """Build the configured engine: the remote server when ``settings.url`` is set, else llama.cpp.

    The model is loaded here and its prompt cache built; with ``release`` (long-lived
    commands) it is then freed until its first use (``[llm] keep_loaded_s``), else it stays
    ``keep_loaded_s`` seconds. ``intents`` is the whitelist (``Rules.intent_names()``).

    Raises:
        FatalError: the model is missing or corrupt (the message names the path), or
            llama-cpp-python is not installed.
    """
    if settings.url:
        # lazy: an engine's module (and its library) loads only when the engine is built
        from hub.llm.remote import RemoteEngine

        return RemoteEngine(settings, home, intents)
    # lazy: an engine's module (and its library) loads only when the engine is built
    from hub.llm.llama import make_llama_engine

    return make_llama_engine(settings, home, intents, release=release)


def interpret(
    engine: LlmEngine,
    text: str,
    *,
    home: HomeSettings,
    intents: Collection[str],
    min_confidence: float,
    cancel: threading.Event | None = None,
    strict: bool = False,
) -> LlmIntent | None:
    """Classify ``text`` with ``engine`` and check the output (one attempt, no retry).

    Raises:
        InvalidOutputError: the output holds no JSON object (the caller may retry with strict).
        Whatever ``engine.classify`` raises.
    """
    raw = engine.classify(text, cancel=cancel, strict=strict)
    names = home_names(home)
    return parse_intent(
        raw,
        allowed_intents=intents,
        entity_names=names.entity_names,
        area_names=names.area_names,
        sensitive_names=names.sensitive_names,
        min_confidence=min_confidence,
    )
