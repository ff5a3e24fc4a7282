"""What one turn carries through the graph: its state (data) and its context (live objects).

:class:`TurnState` is plain data: strings, numbers, lists, dicts, the answer's audio bytes and
the frozen dataclasses of the understanding (:class:`~hub.intents.rules.IntentMatch`,
:class:`~hub.llm.parse.LlmIntent`, :class:`~hub.act.common.Outcome`), so it can be traced,
journaled or checkpointed. It is made of one typed part per stage of the turn
(:class:`TurnInput`, :class:`Heard`, :class:`Understanding`, :class:`Answer`,
:class:`Progress`); each key belongs to exactly one part.

What is not data (the collaborators: engines, store, conversation, home, settings, fixed
answers, timers, clock; and the turn's live objects: audio samples, a running recognizer
stream, the deadline, the fingerprint's arrays, the streamed answer) is in the turn's
:class:`TurnContext`, LangGraph's runtime context (``graph.invoke(state, config,
context=...)``; nodes and routes get it as ``runtime.context``). The orchestrator makes one
per turn; nothing below it ever sees the orchestrator.

No field has a reducer: every node returns whole new values (``errors`` included), so one
request never inherits another's errors and nothing can be appended forever (case BC-16).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

from hub.act.common import Outcome  # LangGraph resolves TurnState's hints: real imports
from hub.graph.streaming import AnswerSpeech
from hub.intents.followup import SlotQuestion
from hub.intents.match import IntentMatch
from hub.llm.parse import LlmIntent

if TYPE_CHECKING:  # TurnContext's hints are never resolved at run time
    import numpy as np

    from hub.act.alarms import Alerts
    from hub.act.notifier import TimerEvents
    from hub.asr.base import AsrStream
    from hub.graph.answers import CannedAnswers
    from hub.graph.streaming import AnswerSpeech
    from hub.home import Home
    from hub.resilience.breaker import Breakers
    from hub.resilience.clock import Clock
    from hub.resilience.deadline import Deadline
    from hub.resilience.faults import Fault
    from hub.resilience.timeouts import LatencyTracker, TimeoutPolicy
    from hub.settings import Settings
    from hub.store.db import Store
    from hub.store.fingerprint import Fingerprint


class L1Hit(TypedDict):
    """A loosely similar utterance heard before (the fingerprint cache's L1)."""

    transcript: str
    alternatives: list[str]
    similarity: float  # cosine similarity of the fingerprints, 0..1


class ErrorEntry(TypedDict):
    """One entry of the trace's ``errors`` (:meth:`hub.errors.HubError.as_trace`)."""

    node: str
    kind: str
    message: str


class Failure(TypedDict):
    """The last failed node and its error kind (the conditional edges route on it)."""

    node: str
    kind: str


BreakerEvent = TypedDict("BreakerEvent", {"breaker": str, "from": str, "to": str, "at": float})
"""A circuit breaker's transition (:meth:`hub.resilience.breaker.Breaker.take_transitions`)."""


class TurnInput(TypedDict, total=False):
    """What the orchestrator gives the turn (times: monotonic seconds)."""

    turn_id: str  # also the idempotency key of the turn's actions
    file: str | None  # input file, for the trace
    text: str | None  # text input (hub ask); None for audio
    silent: bool  # no speech found in the audio: skip the recognizer
    preconfirmed: list[str]  # sensitive entities confirmed before the turn (a delayed command)
    started: float  # monotonic time at end of input


class Heard(TypedDict, total=False):
    """What was said: the fingerprint cache and the recognizer."""

    l1: L1Hit | None  # a loosely similar utterance's transcript, for when ASR fails
    transcript: str
    alternatives: list[str]
    rejected: bool  # the recognizer rejected the speech as outside the grammar
    segments: list[str]  # utterance segments the recognizer found (BC-07)
    unsure: bool  # a reading that changes the action fits almost as well: ask back
    cache_hit: bool  # the transcript came from the fingerprint cache (L1)
    second_pass: dict  # what the open-vocabulary second pass heard and did


class Understanding(TypedDict, total=False):
    """What it means: rules, LLM, FAQ, the confirmation question."""

    faq_hit: bool  # the FAQ has a confident answer for an unmatched transcript
    meaning_lost: bool  # a loose reading left out "don't", "tomorrow", ...: not understood
    matches: list[IntentMatch]  # one per command, in order
    confirm: IntentMatch | None  # an LLM match waiting for a spoken yes
    pending: tuple[IntentMatch, ...] | None  # what the previous turn asked about
    asked: SlotQuestion | None  # the slot the previous turn asked for ("Which area?")
    confirmed: bool  # the matches were confirmed by a yes: act without asking
    asked_back: bool  # this turn asked a yes/no before acting (the trace's ``asked_back``)
    llm: LlmIntent | None
    source: str | None  # who understood it: "rules", "llm", "faq", "fallback"
    intent: str | None
    slots: dict[str, object]


class CommandEntry(TypedDict):
    """One command of the turn, as the trace's ``commands`` lists it
    (:func:`hub.act.together.entry`)."""

    intent: str
    slots: dict[str, object]
    entities: list[str]  # the targets it resolved to
    result: str  # done, queued, not_sent, not_done, answered, asked_back
    response: str  # what its handler answered ("" when asked back)


class Answer(TypedDict, total=False):
    """What was done and said."""

    outcomes: list[Outcome]  # one per match
    commands: list[CommandEntry]  # every command acted on or asked about, in order
    done: bool  # every command changed something and was carried out (none queued or refused)
    response: str
    spoken: str  # what was spoken when the TTS cut the response (else unset)
    nothing_to_say: bool  # the LLM answer had no speakable text (BC-08): nothing is spoken
    pcm: bytes | None  # the answer audio, int16 mono
    rate: int | None  # its sample rate, Hz
    ttfa_ms: float | None  # end of input -> first answer audio ready
    fallback_level: int  # 0 (none) .. 4 (placeholder)
    status: str  # "no_speech" when nothing was said (hub.trace.STATUSES)


class Progress(TypedDict, total=False):
    """The resilience layer's bookkeeping (written by :func:`hub.graph.guard.guarded`)."""

    errors: list[ErrorEntry]
    attempts: dict[str, int]  # node -> runs so far
    failed: Failure | None  # the last failure, None after a success
    timings_ms: dict[str, float]  # node -> time spent
    load_ms: dict[str, float]  # part of timings_ms spent building engines (not LLM budget)
    breakers: list[BreakerEvent]  # breaker transitions during the turn


class TurnState(TurnInput, Heard, Understanding, Answer, Progress, total=False):
    """One turn's state: every part above, flat (each key is one LangGraph channel)."""


class EngineSet(Protocol):
    """The engines a node may use (:class:`hub.core.engines.Engines`), built on first use;
    each accessor raises HubError when its engine cannot be built."""

    def get(self, name: str) -> Any: ...
    def asr(self) -> Any: ...
    def rules(self) -> Any: ...
    def actor(self) -> Any: ...
    def devices(self) -> Any: ...
    def tts(self) -> Any: ...
    def llm(self) -> Any: ...
    def faq(self) -> Any: ...


class TurnConversation(Protocol):
    """The room or client a turn belongs to (:class:`hub.core.conversation.Conversation`)."""

    area: str | None

    def play(self, chunk: Any) -> None: ...
    def ask_confirmation(self, match: Any) -> None: ...
    def take_confirmation(self) -> Any: ...
    def ask_slot(self, question: Any) -> None: ...
    def take_slot(self) -> Any: ...
    def acted_on(self, entities: Any) -> None: ...
    def last_acted(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class Guards:
    """The resilience state a guarded node runs under (shared by every turn of a hub)."""

    breakers: Breakers
    policy: TimeoutPolicy
    latency: LatencyTracker
    faults: dict[str, Fault]


@dataclass
class TurnContext:
    """One turn's live objects and collaborators, never in the state (LangGraph's runtime
    context). What a node may touch is here and in the state; nothing else.

    Args:
        deadline: the turn's budget, started at end of input.
        engines: the engines (recognizer, rules, actor, devices, TTS, LLM, FAQ).
        conversation: the room or client (its area, pending question, player).
        home: the home (entities, areas, state).
        settings: every setting (the nodes read ``llm``, ``tts``, ``store``, ``resilience``).
        clock: the hub's one clock (monotonic for timings and budgets, wall for facts).
        guards: breakers, timeout policy, latency tracker, injected faults.
        canned: the fixed answers' audio rendered ahead of time.
        store: the cache/journal (:class:`hub.store.db.Store`), or None.
        timers: the timer events ("stop" while a timer rings), or None.
        alerts: the alarms and reminders (missed ones are said before the answer), or None.
        llm_on: ``"intent"`` and/or ``"answer"``: what the LLM does at this entry.
        speak: synthesize the answer (False: text only).
        fingerprint_key: the fingerprint cache's context key (:func:`hub.store.fingerprint.
            context_key`).
        samples: int16 mono 16 kHz audio, or None for text input.
        asr_stream: a recognizer stream already fed (real-time input), or None.
        fingerprint: the utterance's fingerprint; set by the ``fingerprint`` node, stored
            with the transcript by the ``asr`` node.
        speech: the streamed LLM answer (the speech sink), made by the ``llm_answer`` node
            (:meth:`answer_speech`); the orchestrator closes it when the turn ends.
        played: the answer's audio chunks the ``tts`` node handed to the conversation's
            player, in order (kept when it fails half-way, so the fallback says what was
            said).
    """

    deadline: Deadline
    engines: EngineSet
    conversation: TurnConversation
    home: Home
    settings: Settings
    clock: Clock
    guards: Guards
    canned: CannedAnswers
    store: Store | None = None
    timers: TimerEvents | None = None
    alerts: Alerts | None = None
    llm_on: frozenset[str] = frozenset()
    speak: bool = True
    fingerprint_key: str = ""
    samples: np.ndarray | None = None
    asr_stream: AsrStream | None = None
    fingerprint: Fingerprint | None = None
    speech: AnswerSpeech | None = None
    played: list[Any] = field(default_factory=list)

    def answer_speech(self, started: float) -> AnswerSpeech:
        """The turn's streamed answer, made on first use (the same one on a retry).

        ``started``: monotonic time of the end of input (the state's ``started``).
        """
        if self.speech is None:
            self.speech = AnswerSpeech(
                self.engines.tts,
                self.conversation.play,
                started,
                self.clock.monotonic,
                speak=self.speak,
            )
        return self.speech
