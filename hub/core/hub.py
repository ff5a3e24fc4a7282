"""The orchestrator: engines, breakers, timeouts and store around the turn graph.

``Hub.turn_audio`` / ``Hub.turn_text`` run one turn and return its trace (design.md,
"Trace"). Engines are built lazily, once, by factory functions that tests replace; an engine
that failed to load is not tried again until the breaker's cool-down has passed.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from hub.audio.wav import write_wav_atomic
from hub.core.alarms import make_alerts
from hub.core.conversation import DEFAULT_ID, Conversation, Conversations
from hub.core.engines import DEFAULT_FACTORIES, Engines
from hub.core.timers import make_timer_events
from hub.errors import HubError
from hub.graph import RECURSION_LIMIT, build_graph
from hub.graph.ahead import clock_answers, likely_answers
from hub.graph.answers import CANNED, CannedAnswers, response_key
from hub.graph.state import Guards, TurnContext
from hub.home import Home
from hub.names import ENGINE_NODES
from hub.paths import cache_dir
from hub.resilience.breaker import Breakers
from hub.resilience.clock import Clock
from hub.resilience.deadline import Deadline
from hub.resilience.faults import parse_faults
from hub.resilience.load import LoadProbe
from hub.resilience.timeouts import LatencyTracker, TimeoutPolicy
from hub.settings import Settings
from hub.store.fingerprint import context_key
from hub.trace import make_trace
from hub.tts.prerender import Prerenderer

log = logging.getLogger("hub.core.hub")

NODES = ENGINE_NODES
"""Nodes that run an engine: the ones faults can be injected into (:mod:`hub.names`)."""
JOURNAL_RUNS = 100
"""Journaled turns read at start for each node's recent latency (the tracker keeps 20 runs)."""
CLOCK_AHEAD_S = (1.0, 8.0)
"""After a wake word, the clock's answers are rendered for the minutes of these many seconds
from now: when the command that follows is likely answered (one minute, or both near a
minute's turn)."""


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
        clock: monotonic seconds (a fake in tests): every node, guard, breaker, timer, retry
            and the trace's timings read it.
        wall: seconds since the epoch (a fake in tests): the time and date the nodes answer.
        keep_timers: timers, alarms and reminders are restored from and written to ``store``;
            False (``hub replay``): they live in this process only, so they never ring elsewhere.
    Raises:
        hub.errors.ConfigError: a bad fault spec.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        entry: str = "replay",
        factories=None,
        store=None,
        probe=None,
        speak: bool = True,
        inject=(),
        clock=time.monotonic,
        wall=time.time,
        keep_timers: bool = True,
    ):
        self.settings, self.entry, self.store, self.speak = settings, entry, store, speak
        self.timer_store = store if keep_timers else None
        """Where timers and alarms are kept (None: in memory only, see ``keep_timers``)."""
        res = settings.resilience
        self.home = Home.from_settings(settings.home)
        self.cache_dir = cache_dir()
        self.clock, self.wall = clock, wall
        self.engines = Engines(
            self, {**DEFAULT_FACTORIES, **(factories or {})}, res.breaker_cooldown_s, clock=clock
        )
        self.breakers = Breakers(
            failures=res.breaker_failures, cooldown_s=res.breaker_cooldown_s, clock=clock
        )
        self.latency = LatencyTracker()
        if store is not None:  # the p90 of the last runs survives a restart (and hub doctor)
            self.latency.record_traces(store.recent_turns(JOURNAL_RUNS), res.timeouts_s)
        self.policy = TimeoutPolicy(
            dict(res.timeouts_s), probe or LoadProbe(), self.latency, res.max_load_factor
        )
        self.faults = parse_faults(tuple(res.inject) + tuple(inject), NODES)
        self.conversations = Conversations(clock, self.home.satellite_area)
        self.canned = CannedAnswers(store)
        """The fixed answers' audio rendered ahead of time (:mod:`hub.graph.answers`)."""
        self.events = make_timer_events(self)
        """Timer events: ``hub.events.on_timer_finished(callback)`` (:mod:`hub.act.notifier`)."""
        self.timers = self.events.timers
        self.alarms = make_alerts(self, self.events)
        """Alarms and reminders, rung by ``self.events`` (:mod:`hub.core.alarms`)."""
        self._fingerprint_key = context_key(settings)
        self._clock_job: Prerenderer | None = None
        self.graph = build_graph()

    # -- helpers the nodes use ----------------------------------------------------------------
    def llm_enabled(self, kind: str) -> bool:
        """Whether the LLM classifies (``"intent"``) or answers (``"answer"``) at this entry."""
        cfg = self.settings.llm
        return self.entry in (cfg.intents_on if kind == "intent" else cfg.answers_on)

    def conversation(
        self, conversation_id: str | None = DEFAULT_ID, *, area: str | None = None
    ) -> Conversation:
        """The conversation ``conversation_id`` of this hub (made on first use)."""
        return self.conversations.get(conversation_id, area=area)

    def placeholder_audio(self) -> tuple[bytes, int]:
        """The placeholder speech rendered ahead of time: ``(pcm int16 mono, rate)``
        (:meth:`hub.graph.answers.CannedAnswers.placeholder`)."""
        return self.canned.placeholder()

    def canned_texts(self) -> tuple[str, ...]:
        """The fixed answers rendered ahead of time (placeholder, failed action, not understood)."""
        return CANNED

    def canned_audio(self, text: str):
        """The stored audio of a canned answer as an AudioChunk, or None."""
        return self.canned.audio(text)

    def prerender(self) -> None:
        """Render the canned answers with the configured voice and store them (start-up).

        Skips what is stored already; a TTS that cannot load leaves the shipped placeholder.
        """
        if self.speak:
            self.canned.prerender(self.engines.tts)

    def prerender_answers(self, busy: Callable[[], bool]) -> Prerenderer | None:
        """Start synthesizing the rules path's likely answers into the response cache while
        ``busy()`` is False (``[tts] prerender``, :mod:`hub.tts.prerender`); the running pass,
        or None when it is off, the hub does not speak, or there is no store."""
        tts = self.settings.tts
        if not (self.speak and tts.prerender and self.store is not None):
            return None
        job = Prerenderer(
            lambda: likely_answers(self.home),
            self.engines.tts,
            self.store,
            lambda text: response_key(text, tts.voice),
            busy,
            int(tts.prerender_mb * 1e6),
        )
        job.start()
        return job

    def on_wake(self) -> None:
        """A wake word was heard: ready, on background threads and while the command is
        still being spoken, what its turn may need and would otherwise wait for.

        - The answers that change with the clock ("10:58 PM.", today's date) are rendered for
          the coming minute into the response cache (:func:`hub.graph.ahead.clock_answers`;
          nothing when stored already, when ``[tts] prerender`` is off, or when the hub does
          not speak or has no store).
        - The open-vocabulary second recognizer (``[asr] second_pass``) is loaded unless in
          memory (its load, about 1.2 s, otherwise falls inside the first doubted or rejected
          turn after ``[asr] whisper_keep_loaded_s`` idle).

        Returns at once (the caller is the listener or an event loop); costs nothing when all
        is ready; never raises (a failure is logged and the turn does the work as before).
        Audio is only ever played after its turn produced that text.
        """
        self._render_clock_ahead()
        if self.settings.asr.second_pass:
            threading.Thread(
                target=self._warm_second_pass, name="hub-asr2-wake", daemon=True
            ).start()

    def _warm_second_pass(self) -> None:
        try:
            warm = getattr(self.engines.asr2(), "warm_later", None)
        except HubError as exc:
            log.debug("second recognizer not warmed: %s", exc.message)
            return
        if warm is not None:
            warm()

    def _render_clock_ahead(self) -> None:
        tts = self.settings.tts
        if not (self.speak and tts.prerender and self.store is not None):
            return
        if self._clock_job is not None and not self._clock_job.done.is_set():
            return
        now, zone = self.wall(), self.alarms.zone
        texts = list(
            dict.fromkeys(t for s in CLOCK_AHEAD_S for t in clock_answers(self.home, now + s, zone))
        )
        self._clock_job = Prerenderer(
            lambda: texts,
            self.engines.tts,
            self.store,
            lambda text: response_key(text, tts.voice),
            lambda: False,
            int(tts.prerender_mb * 1e6),
            name="hub-clock-ahead",
            log_level=logging.DEBUG,
        )
        self._clock_job.start()

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

    def answer_audio(
        self,
        samples,
        *,
        file: str | None = None,
        out_path: str | None = None,
        asr_stream=None,
        started: float | None = None,
        silent: bool = False,
        conversation: Conversation | None = None,
    ) -> TurnResult:
        """Run one turn on int16 mono 16 kHz ``samples``.

        ``silent``: the caller found no speech in the audio (``hub.audio.speech_present``);
        the turn ends as ``no_speech`` without running the recognizer. ``conversation``: the
        room or client it belongs to (default: the hub's default conversation).
        """
        if not silent and self._llm_may_follow():
            getattr(self.engines.llm(), "prefetch", lambda: None)()  # loads during the ASR
        return self._turn(
            {"text": None, "silent": silent},
            file=file,
            out_path=out_path,
            started=started,
            conversation=conversation,
            samples=samples,
            asr_stream=asr_stream,
        )

    def answer_text(
        self,
        text: str,
        *,
        out_path: str | None = None,
        conversation: Conversation | None = None,
        preconfirmed: tuple[str, ...] = (),
    ) -> TurnResult:
        """Run one turn on a text utterance (``hub ask``, a Wyoming ``transcript``).

        ``preconfirmed``: sensitive entities already confirmed (a delayed command that was
        confirmed when it was set); any other sensitive target is still asked about.
        """
        return self._turn(
            {"text": text, "preconfirmed": list(preconfirmed)},
            file=None,
            out_path=out_path,
            conversation=conversation,
        )

    def turn_audio(self, samples, **kwargs) -> dict:
        """:meth:`answer_audio`, returning only the trace."""
        return self.answer_audio(samples, **kwargs).trace

    def turn_text(self, text: str, **kwargs) -> dict:
        """:meth:`answer_text`, returning only the trace."""
        return self.answer_text(text, **kwargs).trace

    def _context(
        self, conversation: Conversation, started: float, samples, asr_stream
    ) -> TurnContext:
        """The turn's context: this hub's collaborators and the turn's live objects."""
        deadline = Deadline(
            max(0.0, self.settings.resilience.deadline_s - (self.clock() - started)),
            clock=self.clock,
        )
        return TurnContext(
            deadline,
            engines=self.engines,
            conversation=conversation,
            home=self.home,
            settings=self.settings,
            clock=Clock(self.clock, self.wall),
            guards=Guards(self.breakers, self.policy, self.latency, self.faults),
            canned=self.canned,
            store=self.store,
            timers=self.events,
            alerts=self.alarms,
            llm_on=frozenset(k for k in ("intent", "answer") if self.llm_enabled(k)),
            speak=self.speak,
            fingerprint_key=self._fingerprint_key,
            samples=samples,
            asr_stream=asr_stream,
        )

    def _turn(
        self,
        inputs: dict,
        *,
        file,
        out_path,
        started=None,
        conversation: Conversation | None = None,
        samples=None,
        asr_stream=None,
    ) -> TurnResult:
        started = started if started is not None else self.clock()
        conversation = conversation or self.conversation()
        state = {
            **inputs,
            "turn_id": uuid.uuid4().hex,
            "file": file,
            "started": started,
            "errors": [],
            "attempts": {},
            "timings_ms": {},
            "fallback_level": 0,
            "breakers": [],
            "failed": None,
        }
        turn = self._context(conversation, started, samples, asr_stream)
        try:
            final = self.graph.invoke(state, {"recursion_limit": RECURSION_LIMIT}, context=turn)
        finally:
            if turn.speech is not None:
                turn.speech.close()  # said by the tts node, or stopped by its timeout
        audio = self._write_audio(final, out_path)
        trace = make_trace(final, audio=audio, total_ms=(self.clock() - started) * 1000)
        self._after(trace)
        return TurnResult(
            trace, final.get("pcm"), final.get("rate"), tuple(final.get("outcomes") or ())
        )

    def _after(self, trace: dict) -> None:
        """Journal the turn and its breaker events; update the hub's own MQTT entities."""
        for event in trace["breakers"]:
            if self.store is not None:
                self.store.breaker_event(event["breaker"], event["from"], event["to"])
        if self.store is not None:
            self.store.journal(trace)
            if self.store.degraded:  # BC-33: the turn went on without (part of) the store
                trace["status"] = "degraded"
                trace["errors"].append(
                    {
                        "node": "store",
                        "kind": "unavailable",
                        "message": f"store: {self.store.degraded}",
                    }
                )
        if self.engines.loaded("devices"):
            self.engines.devices().on_turn(trace)  # the hub's own MQTT entities

    @staticmethod
    def _write_audio(final: dict, out_path: str | None) -> str | None:
        if not out_path or not final.get("pcm"):
            return None
        return write_wav_atomic(final["pcm"], final["rate"], out_path)
