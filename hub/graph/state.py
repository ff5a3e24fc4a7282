"""What one turn carries through the graph: its state (data) and its context (live objects).

:class:`TurnState` is plain data: strings, numbers, lists, dicts, the answer's audio bytes and
the frozen dataclasses of the understanding (:class:`~hub.intents.rules.IntentMatch`,
:class:`~hub.llm.parse.LlmIntent`, :class:`~hub.act.common.Outcome`), so it can be traced,
journaled or checkpointed. It is made of one typed part per stage of the turn
(:class:`TurnInput`, :class:`Heard`, :class:`Understanding`, :class:`Answer`,
:class:`Progress`); each key belongs to exactly one part.

What is not data (the audio samples, a running recognizer stream, the deadline with its clock,
the fingerprint's arrays) is in the turn's :class:`TurnContext`, LangGraph's runtime context
(``graph.invoke(state, config, context=...)``; nodes and routes get it as
``runtime.context``). The orchestrator makes one per turn.

No field has a reducer: every node returns whole new values (``errors`` included), so one
request never inherits another's errors and nothing can be appended forever (case BC-16).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

from hub.act.common import Outcome  # LangGraph resolves TurnState's hints: real imports
from hub.intents.rules import IntentMatch
from hub.llm.parse import LlmIntent

if TYPE_CHECKING:  # TurnContext's hints are never resolved at run time
    import numpy as np

    from hub.asr.base import AsrStream
    from hub.resilience.deadline import Deadline
    from hub.store.fingerprint import Fingerprint


class L1Hit(TypedDict):
    """A loosely similar utterance heard before (the fingerprint cache's L1)."""

    transcript: str
    alternatives: list[str]
    similarity: float       # cosine similarity of the fingerprints, 0..1


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

    turn_id: str            # also the idempotency key of the turn's actions
    conversation_id: str    # the room or client (hub.core.conversation.Conversation)
    file: str | None        # input file, for the trace
    text: str | None        # text input (hub ask); None for audio
    silent: bool            # no speech found in the audio: skip the recognizer
    preconfirmed: list[str]  # sensitive entities confirmed before the turn (a delayed command)
    started: float          # monotonic time at end of input


class Heard(TypedDict, total=False):
    """What was said: the fingerprint cache and the recognizer."""

    l1: L1Hit | None        # a loosely similar utterance's transcript, for when ASR fails
    transcript: str
    alternatives: list[str]
    rejected: bool          # the recognizer rejected the speech as outside the grammar
    segments: list[str]     # utterance segments the recognizer found (BC-07)
    unsure: bool            # a reading that changes the action fits almost as well: ask back
    cache_hit: bool         # the transcript came from the fingerprint cache (L1)


class Understanding(TypedDict, total=False):
    """What it means: rules, LLM, FAQ, the confirmation question."""

    faq_hit: bool           # the FAQ has a confident answer for an unmatched transcript
    matches: list[IntentMatch]          # one per command, in order
    confirm: IntentMatch | None         # an LLM match waiting for a spoken yes
    pending: tuple[IntentMatch, ...] | None  # what the previous turn asked about
    confirmed: bool         # the matches were confirmed by a yes: act without asking
    llm: LlmIntent | None
    source: str | None      # who understood it: "rules", "llm", "faq", "fallback"
    intent: str | None
    slots: dict[str, object]


class Answer(TypedDict, total=False):
    """What was done and said."""

    outcomes: list[Outcome]  # one per match
    response: str
    spoken: str             # what was spoken when the TTS cut the response (else unset)
    nothing_to_say: bool    # the LLM answer had no speakable text (BC-08): nothing is spoken
    pcm: bytes | None       # the answer audio, int16 mono
    rate: int | None        # its sample rate, Hz
    ttfa_ms: float | None   # end of input -> first answer audio ready
    fallback_level: int     # 0 (none) .. 4 (placeholder)
    status: str             # "no_speech" when nothing was said (hub.trace.STATUSES)


class Progress(TypedDict, total=False):
    """The resilience layer's bookkeeping (written by :func:`hub.graph.guard.guarded`)."""

    errors: list[ErrorEntry]
    attempts: dict[str, int]            # node -> runs so far
    failed: Failure | None  # the last failure, None after a success
    timings_ms: dict[str, float]        # node -> time spent
    load_ms: dict[str, float]   # part of timings_ms spent building engines (not LLM budget)
    breakers: list[BreakerEvent]        # breaker transitions during the turn


class TurnState(TurnInput, Heard, Understanding, Answer, Progress, total=False):
    """One turn's state: every part above, flat (each key is one LangGraph channel)."""


@dataclass
class TurnContext:
    """One turn's live objects, never in the state (LangGraph's runtime context).

    Args:
        deadline: the turn's budget, started at end of input.
        samples: int16 mono 16 kHz audio, or None for text input.
        asr_stream: a recognizer stream already fed (real-time input), or None.
        fingerprint: the utterance's fingerprint; set by the ``fingerprint`` node, stored
            with the transcript by the ``asr`` node.
    """

    deadline: Deadline
    samples: np.ndarray | None = None
    asr_stream: AsrStream | None = None
    fingerprint: Fingerprint | None = None
