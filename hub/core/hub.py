"""The orchestrator: engines, breakers, timeouts and store around the turn graph.

``Hub.turn_audio`` / ``Hub.turn_text`` run one turn and return its trace (design.md,
"Trace"). Engines are built lazily, once, by factory functions that tests replace; an engine
that failed to load is not tried again until the breaker's cool-down has passed.
"""

from __future__ import annotations

import logging
import time
import uuid
import wave
from dataclasses import dataclass

from hub.errors import HubError
from hub.core.conversation import DEFAULT_ID, Conversation, Conversations
from hub.paths import DATA_DIR, cache_dir
from hub.core.engines import DEFAULT_FACTORIES, Engines
from hub.graph import RECURSION_LIMIT, build_graph
from hub.resilience.breaker import Breakers
from hub.resilience.deadline import Deadline
from hub.resilience.faults import parse_faults
from hub.resilience.load import LoadProbe
from hub.resilience.timeouts import LatencyTracker, TimeoutPolicy
from hub.settings import Settings

log = logging.getLogger("hub.core.hub")

NODES = ("asr", "rules", "llm_intent", "llm_answer", "act", "tts")
"""Nodes that run an engine: the ones faults can be injected into."""

PLACEHOLDER_WAV = DATA_DIR / "placeholder.wav"



@dataclass(frozen=True)
class TurnResult:
    """What one turn gives back: its trace and the answer audio (int16 mono at ``rate``)."""

    trace: dict
    pcm: bytes | None
    rate: int | None
    outcomes: tuple = ()
    """The :class:`hub.act.Outcome` of each command carried out (none when nothing was done)."""


class Hub:
    """One hub: settings, engines, resilience state and the compiled graph.

    Args:
        settings: all settings.
        entry: ``"replay"``, ``"ask"`` or ``"run"`` (the LLM gating in ``[llm]`` uses it).
        factories: engine factories replacing :data:`DEFAULT_FACTORIES` entries (tests).
        store: a :class:`hub.store.db.Store`, or None for no caching and no journal.
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
        self.cache_dir = cache_dir()
        self.engines = Engines(self, {**DEFAULT_FACTORIES, **(factories or {})},
                               res.breaker_cooldown_s)
        self.breakers = Breakers(failures=res.breaker_failures, cooldown_s=res.breaker_cooldown_s,
                                 clock=clock)
        self.latency = LatencyTracker()
        self.policy = TimeoutPolicy(dict(res.timeouts_s), probe or LoadProbe(), self.latency,
                                    res.max_load_factor)
        self.faults = parse_faults(tuple(res.inject) + tuple(inject), NODES)
        self.clock = clock
        self.conversations = Conversations(clock, self.home.satellite_area)
        from hub.act.notifier import make_timer_events

        self.events = make_timer_events(self)
        """Timer events: ``hub.events.on_timer_finished(callback)`` (:mod:`hub.act.notifier`)."""
        self.timers = self.events.timers
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
                           list(self.home.areas), [e.name for e in ents if e.sensitive and e.confirm])
        return vocab, self.settings.llm.min_confidence

    def llm_match(self, result, transcript: str, area: str | None = None):
        """An IntentMatch for an LLM result, or a Refusal (see :mod:`hub.llm.guard`); a
        delayed command goes through the rules' check (:func:`hub.llm.guard.delayed`)."""
        from hub.llm.guard import delayed, to_match

        match = to_match(result, transcript, self.home)
        return delayed(match, transcript, self.engines.rules(), area)

    def domain_of(self, name: str) -> str | None:
        """The domain of the entity ``name``."""
        for ent in self.home.entities:
            if ent.name == name:
                return ent.domain
        return None

    def conversation(self, conversation_id: str | None = DEFAULT_ID, *,
                     area: str | None = None) -> Conversation:
        """The conversation ``conversation_id`` of this hub (made on first use)."""
        return self.conversations.get(conversation_id, area=area)

    def conversation_of(self, state: dict) -> Conversation:
        """The conversation a turn's state belongs to."""
        return self.conversations.get(state.get("conversation_id") or DEFAULT_ID)

    def placeholder_audio(self) -> tuple[bytes, int]:
        """The placeholder speech rendered ahead of time: ``(pcm int16 mono, rate)``.

        The copy rendered at start-up with the configured voice when there is one, else the
        one that ships (``hub/data/placeholder.wav``, en_US-joe-medium).
        """
        from hub.intents.faq import PLACEHOLDER_TEXT

        chunk = self.canned_audio(PLACEHOLDER_TEXT)
        if chunk is not None:
            return chunk.pcm, chunk.rate
        with wave.open(str(PLACEHOLDER_WAV), "rb") as w:
            return w.readframes(w.getnframes()), w.getframerate()

    def canned_texts(self) -> tuple[str, ...]:
        """The fixed answers rendered ahead of time (placeholder, failed action, not understood)."""
        from hub.intents.faq import PLACEHOLDER_TEXT
        from hub.graph.nodes import ACT_FAILED, DONE, NOT_UNDERSTOOD

        return (PLACEHOLDER_TEXT, ACT_FAILED, NOT_UNDERSTOOD, DONE)

    def canned_audio(self, text: str):
        """The stored audio of a canned answer as an AudioChunk, or None."""
        from hub.graph.nodes import response_key
        from hub.audio.pcm import AudioChunk

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
    def _llm_may_follow(self) -> bool:
        """True when a voice turn may reach the LLM, so a released model is worth loading
        while the recognizer runs: the LLM is on and the recognizer is open-vocabulary (a
        grammar-bound one only hears sentences the rules match)."""
        if not self.engines.loaded("llm"):
            return False
        if not (self.llm_enabled("intent") or self.llm_enabled("answer")):
            return False
        return bool(getattr(self.engines.asr(), "open_vocabulary", True))

    def answer_audio(self, samples, *, file: str | None = None, out_path: str | None = None,
                     asr_stream=None, started: float | None = None, silent: bool = False,
                     conversation: Conversation | None = None) -> TurnResult:
        """Run one turn on int16 mono 16 kHz ``samples``.

        ``silent``: the caller found no speech in the audio (``hub.audio.speech_present``);
        the turn ends as ``no_speech`` without running the recognizer. ``conversation``: the
        room or client it belongs to (default: the hub's default conversation).
        """
        if not silent and self._llm_may_follow():
            getattr(self.engines.llm(), "prefetch", lambda: None)()  # loads during the ASR
        return self._turn({"text": None, "silent": silent}, file=file, out_path=out_path,
                          started=started, conversation=conversation, samples=samples,
                          asr_stream=asr_stream)

    def answer_text(self, text: str, *, out_path: str | None = None,
                    conversation: Conversation | None = None,
                    preconfirmed: tuple[str, ...] = ()) -> TurnResult:
        """Run one turn on a text utterance (``hub ask``, a Wyoming ``transcript``).

        ``preconfirmed``: sensitive entities already confirmed (a delayed command that was
        confirmed when it was set); any other sensitive target is still asked about.
        """
        return self._turn({"text": text, "preconfirmed": list(preconfirmed)},
                          file=None, out_path=out_path, conversation=conversation)

    def turn_audio(self, samples, **kwargs) -> dict:
        """:meth:`answer_audio`, returning only the trace."""
        return self.answer_audio(samples, **kwargs).trace

    def turn_text(self, text: str, **kwargs) -> dict:
        """:meth:`answer_text`, returning only the trace."""
        return self.answer_text(text, **kwargs).trace

    def _turn(self, inputs: dict, *, file, out_path, started=None,
              conversation: Conversation | None = None, samples=None,
              asr_stream=None) -> TurnResult:
        from hub.graph.state import TurnContext
        from hub.trace import make_trace

        started = started if started is not None else self.clock()
        conversation = conversation or self.conversation()
        state = {**inputs, "turn_id": uuid.uuid4().hex, "file": file,
                 "conversation_id": conversation.conversation_id,
                 "started": started,
                 "errors": [], "attempts": {}, "timings_ms": {}, "fallback_level": 0,
                 "breakers": [], "failed": None}
        turn = TurnContext(Deadline(max(0.0, self.settings.resilience.deadline_s
                                         - (self.clock() - started)), clock=self.clock),
                           samples=samples, asr_stream=asr_stream)
        final = self.graph.invoke(state, {"recursion_limit": RECURSION_LIMIT}, context=turn)
        audio = self._write_audio(final, out_path)
        trace = make_trace(final, audio=audio, total_ms=(time.monotonic() - started) * 1000)
        for event in trace["breakers"]:
            if self.store is not None:
                self.store.breaker_event(event["breaker"], event["from"], event["to"])
        if self.store is not None:
            self.store.journal(trace)
            if self.store.degraded:  # BC-33: the turn went on without (part of) the store
                trace["status"] = "degraded"
                trace["errors"].append({"node": "store", "kind": "unavailable",
                                        "message": f"store: {self.store.degraded}"})
        if self.engines.loaded("devices"):
            self.engines.devices().on_turn(trace)  # the hub's own MQTT entities
        return TurnResult(trace, final.get("pcm"), final.get("rate"),
                          tuple(final.get("outcomes") or ()))

    @staticmethod
    def _write_audio(final: dict, out_path: str | None) -> str | None:
        from hub.audio.wav import write_wav_atomic

        if not out_path or not final.get("pcm"):
            return None
        return write_wav_atomic(final["pcm"], final["rate"], out_path)
