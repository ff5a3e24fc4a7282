"""The orchestrator: engines, breakers, timeouts and store around the turn graph.

``Hub.turn_audio`` / ``Hub.turn_text`` run one turn and return its trace (design.md,
"Trace"). Engines are built lazily, once, by factory functions that tests replace; an engine
that failed to load is not tried again until the breaker's cool-down has passed.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
import wave
from pathlib import Path
from typing import Callable

from hub.errors import FatalError, HubError
from hub.graph import RECURSION_LIMIT, build_graph
from hub.resilience.breaker import Breakers
from hub.resilience.deadline import Deadline
from hub.resilience.faults import parse_faults
from hub.resilience.load import LoadProbe
from hub.resilience.timeouts import LatencyTracker, TimeoutPolicy
from hub.settings import Settings

log = logging.getLogger("hub.pipeline")

NODES = ("asr", "rules", "llm_intent", "llm_answer", "act", "tts")
"""Nodes that run an engine: the ones faults can be injected into."""

PLACEHOLDER_WAV = Path(__file__).parent / "data" / "placeholder.wav"

CONFIRM_TIMEOUT_S = 20.0
"""How long a question "Do you want me to ...?" waits for its yes (the next turn)."""


def _asr(hub):
    from hub.asr import make_asr_engine

    return make_asr_engine(hub.settings.asr, hub.settings.home, cache_dir=hub.cache_dir)


def _rules(hub):
    from hub.intents import Rules

    return Rules(hub.home, hub.settings.intents)


def _actor(hub):
    from hub.act import Actor
    from hub.timers import Timers

    return Actor(hub.home, Timers())


class _NoDevices:
    """The device backend when ``[mqtt]`` is off: actions stay in the in-process home."""

    def publish(self, action: dict, cancel=None) -> None:
        """Nothing to send."""


def _devices(hub):
    from hub.mqtt import make_backend

    return make_backend(hub.settings.mqtt, hub.store) or _NoDevices()


def _tts(hub):
    from hub.tts import make_tts

    return make_tts(hub.settings.tts)


def _llm(hub):
    from hub.llm import make_llm

    return make_llm(hub.settings.llm, hub.settings.home, hub.engines.rules().intent_names())


def _faq(hub):
    from hub.faq import Faq

    path = hub.settings.resilience.faq
    return Faq(Path(path) if path else None)


DEFAULT_FACTORIES: dict[str, Callable] = {
    "asr": _asr, "rules": _rules, "actor": _actor, "tts": _tts, "llm": _llm, "faq": _faq,
    "devices": _devices,
}
"""Engine factories by name; each takes the Hub and returns the engine."""


class Engines:
    """Engines built on first use, once; a failed build is remembered for ``retry_after_s``.

    Each engine has its own lock, so one engine's factory may use another engine (the LLM's
    whitelist comes from the rules) and a slow build blocks only the callers of that engine.
    """

    def __init__(self, hub, factories: dict[str, Callable], retry_after_s: float):
        self._hub, self._factories, self._retry_after = hub, factories, retry_after_s
        self._built: dict[str, object] = {}
        self._failed: dict[str, tuple[float, HubError]] = {}
        self._locks = {name: threading.Lock() for name in factories}

    def get(self, name: str):
        """The engine ``name``, building it if needed.

        Raises:
            HubError: the engine could not be built (a FatalError unless the factory said more).
        """
        engine = self._built.get(name)
        if engine is not None:
            return engine
        with self._locks[name]:
            if name in self._built:
                return self._built[name]
            failed = self._failed.get(name)
            if failed and time.monotonic() - failed[0] < self._retry_after:
                raise failed[1]
            try:
                engine = self._factories[name](self._hub)
            except HubError as exc:
                self._failed[name] = (time.monotonic(), exc)
                raise
            except Exception as exc:  # noqa: BLE001 - a library's own error while loading
                err = FatalError(f"cannot load {name}: {exc}", node=name)
                self._failed[name] = (time.monotonic(), err)
                raise err from None
            self._built[name] = engine
            self._failed.pop(name, None)
            return engine

    def warm(self, names) -> None:
        """Build ``names`` now (before the first turn); failures are logged, not raised.

        With ``tts`` among them, the canned answers are rendered and stored too.
        """
        for name in names:
            try:
                self.get(name)
            except HubError as exc:
                log.warning("%s unavailable: %s", name, exc.message)
        if "tts" in names:
            self._hub.prerender()

    def loaded(self, name: str) -> bool:
        """True when ``name`` has been built."""
        return name in self._built

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda: self.get(name)


class Hub:
    """One hub: settings, engines, resilience state and the compiled graph.

    Args:
        settings: all settings.
        entry: ``"replay"``, ``"ask"`` or ``"run"`` (the LLM gating in ``[llm]`` uses it).
        factories: engine factories replacing :data:`DEFAULT_FACTORIES` entries (tests).
        store: a :class:`hub.store.Store`, or None for no caching and no journal.
        probe: the load probe (tests inject fake ones).
        speak: synthesize answers (False: text only).
        inject: ``NODE=FAULT`` specs added to ``[resilience] inject``.
    Raises:
        hub.errors.ConfigError: a bad fault spec.
    """

    def __init__(self, settings: Settings, *, entry: str = "replay", factories=None, store=None,
                 probe=None, speak: bool = True, inject=(), clock=time.monotonic):
        from hub.home import Home

        self.settings, self.entry, self.store, self.speak = settings, entry, store, speak
        res = settings.resilience
        self.home = Home.from_settings(settings.home)
        self.cache_dir = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hub"
        self.engines = Engines(self, {**DEFAULT_FACTORIES, **(factories or {})},
                               res.breaker_cooldown_s)
        self.breakers = Breakers(failures=res.breaker_failures, cooldown_s=res.breaker_cooldown_s,
                                 clock=clock)
        self.latency = LatencyTracker()
        self.policy = TimeoutPolicy(dict(res.timeouts_s), probe or LoadProbe(), self.latency,
                                    res.max_load_factor)
        self.faults = parse_faults(tuple(res.inject) + tuple(inject), NODES)
        self.clock = clock
        self.player = None
        self.last_audio: tuple[bytes | None, int | None] = (None, None)
        self._pending = None
        self.graph = build_graph(self)

    # -- helpers the nodes use ----------------------------------------------------------------
    def llm_enabled(self, kind: str) -> bool:
        """Whether the LLM classifies (``"intent"``) or answers (``"answer"``) at this entry."""
        cfg = self.settings.llm
        return self.entry in (cfg.intents_on if kind == "intent" else cfg.answers_on)

    def llm_vocabulary(self):
        """``(Vocabulary, min_confidence)`` for checking LLM output against this home."""
        from hub.llm.parse import Vocabulary

        ents = self.home.entities
        vocab = Vocabulary(self.engines.rules().intent_names(), [e.name for e in ents],
                           list(self.home.areas), [e.name for e in ents if e.sensitive])
        return vocab, self.settings.llm.min_confidence

    def llm_match(self, result, transcript: str):
        """An IntentMatch for an LLM result, or a Refusal (see :mod:`hub.graph.llm_guard`)."""
        from hub.graph.llm_guard import to_match

        return to_match(result, transcript, self.home)

    def domain_of(self, name: str) -> str | None:
        """The domain of the entity ``name``."""
        for ent in self.home.entities:
            if ent.name == name:
                return ent.domain
        return None

    def pending_confirmation(self, match) -> None:
        """Remember an action waiting for a spoken yes (the next turn)."""
        self._pending = (time.monotonic(), match)

    def take_confirmation(self):
        """The action waiting for a yes, if asked less than :data:`CONFIRM_TIMEOUT_S` ago.

        Taking it clears it: the question is answered by the very next turn or not at all.
        """
        pending, self._pending = self._pending, None
        if pending is None or time.monotonic() - pending[0] > CONFIRM_TIMEOUT_S:
            return None
        return pending[1]

    def play_chunk(self, chunk) -> None:
        """Hand a synthesized sentence to the player, when there is one (``hub run``)."""
        if self.player is not None:
            self.player.enqueue(chunk)

    def placeholder_audio(self) -> tuple[bytes, int]:
        """The placeholder speech rendered ahead of time: ``(pcm int16 mono, rate)``.

        The copy rendered at start-up with the configured voice when there is one, else the
        one that ships (``hub/data/placeholder.wav``, en_US-joe-medium).
        """
        from hub.faq import PLACEHOLDER_TEXT

        chunk = self.canned_audio(PLACEHOLDER_TEXT)
        if chunk is not None:
            return chunk.pcm, chunk.rate
        with wave.open(str(PLACEHOLDER_WAV), "rb") as w:
            return w.readframes(w.getnframes()), w.getframerate()

    def canned_texts(self) -> tuple[str, ...]:
        """The fixed answers rendered ahead of time (placeholder, failed action, not understood)."""
        from hub.faq import PLACEHOLDER_TEXT
        from hub.graph.nodes import ACT_FAILED, DONE, NOT_UNDERSTOOD

        return (PLACEHOLDER_TEXT, ACT_FAILED, NOT_UNDERSTOOD, DONE)

    def canned_audio(self, text: str):
        """The stored audio of a canned answer as an AudioChunk, or None."""
        from hub.graph.nodes import response_key
        from hub.tts import AudioChunk

        if self.store is None or text not in self.canned_texts():
            return None
        found = self.store.get_response_audio("canned:" + response_key(text))
        return AudioChunk(pcm=found[0], rate=found[1], text=text) if found else None

    def prerender(self) -> None:
        """Render the canned answers with the configured voice and store them (start-up).

        Skips what is stored already; a TTS that cannot load leaves the shipped placeholder.
        """
        from hub.graph.nodes import response_key

        if self.store is None or not self.speak:
            return
        for text in self.canned_texts():
            if self.canned_audio(text) is not None:
                continue
            try:
                tts = self.engines.tts()
                chunks = list(tts.synthesize(text))
            except HubError as exc:
                log.warning("canned answers not rendered: %s", exc.message)
                return
            pcm = b"".join(c.pcm for c in chunks)
            self.store.put_response_audio("canned:" + response_key(text), pcm,
                                          chunks[0].rate if chunks else tts.rate)

    # -- turns ---------------------------------------------------------------------------------
    def turn_audio(self, samples, *, file: str | None = None, out_path: str | None = None,
                   asr_stream=None, started: float | None = None, silent: bool = False) -> dict:
        """Run one turn on int16 mono 16 kHz ``samples``; returns the trace.

        ``silent``: the caller found no speech in the audio (``hub.audio.speech_present``);
        the turn ends as ``no_speech`` without running the recognizer.
        """
        return self._turn({"samples": samples, "text": None, "asr_stream": asr_stream,
                           "silent": silent},
                          file=file, out_path=out_path, started=started)

    def turn_text(self, text: str, *, out_path: str | None = None) -> dict:
        """Run one turn on a text utterance (``hub ask``); returns the trace."""
        return self._turn({"samples": None, "text": text}, file=None, out_path=out_path)

    def _turn(self, inputs: dict, *, file, out_path, started=None) -> dict:
        from hub.trace import make_trace

        started = started if started is not None else time.monotonic()
        state = {**inputs, "turn_id": uuid.uuid4().hex, "entry": self.entry, "file": file,
                 "out_path": out_path, "started": started,
                 "deadline": Deadline(max(0.0, self.settings.resilience.deadline_s
                                              - (time.monotonic() - started))),
                 "errors": [], "attempts": {}, "timings_ms": {}, "fallback_level": 0,
                 "breakers": [], "failed": None}
        final = self.graph.invoke(state, {"recursion_limit": RECURSION_LIMIT})
        self.last_audio = (final.get("pcm"), final.get("rate"))
        audio = self._write_audio(final, out_path)
        trace = make_trace(final, audio=audio, total_ms=(time.monotonic() - started) * 1000)
        for event in trace["breakers"]:
            if self.store is not None:
                self.store.breaker_event(event["breaker"], event["from"], event["to"])
        if self.store is not None:
            self.store.journal(trace)
        return trace

    @staticmethod
    def _write_audio(final: dict, out_path: str | None) -> str | None:
        if not out_path or not final.get("pcm"):
            return None
        path = Path(out_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".wav.part")
        with wave.open(str(tmp), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(final["rate"])
            w.writeframes(final["pcm"])
        os.replace(tmp, path)
        return str(path)
