"""The state one turn carries through the graph.

No field has a reducer: every node returns whole new values (``errors`` included), so one
request never inherits another's errors and nothing can be appended forever (case BC-16).
"""

from __future__ import annotations

from typing import Any, TypedDict


class TurnState(TypedDict, total=False):
    """One turn's state. Times are seconds (monotonic) unless the name says ``_ms``."""

    # input
    turn_id: str            # also the idempotency key of the turn's actions
    conversation_id: str    # the room or client (hub.core.conversation.Conversation)
    entry: str              # "replay", "ask" or "run"
    file: str | None        # input file, for the trace
    text: str | None        # text input (hub ask); None for audio
    samples: Any            # int16 mono 16 kHz numpy array, or None
    silent: bool            # no speech found in the audio: skip the recognizer
    asr_stream: Any         # an AsrStream already fed (real-time input), or None
    preconfirmed: list[str]  # sensitive entities confirmed before the turn (a delayed command)
    deadline: Any           # hub.resilience.Deadline started at end of input
    started: float          # monotonic time at end of input
    # progress
    fingerprint: Any        # hub.store.fingerprint.Fingerprint, or None
    l1: dict | None         # a loosely similar utterance's transcript, for when ASR fails
    transcript: str
    alternatives: list[str]
    rejected: bool
    segments: list[str]     # utterance segments the recognizer found (BC-07)
    cache_hit: bool         # the transcript came from the fingerprint cache (L1)
    faq_hit: bool           # the FAQ has a confident answer for an unmatched transcript
    matches: list           # hub.intents.IntentMatch, one per command, in order
    outcomes: list          # hub.act.Outcome per match
    confirm: Any            # an LLM match waiting for a spoken yes
    pending: Any            # tuple of matches the previous turn asked about, or None
    confirmed: bool         # the matches were confirmed by a yes: act without asking
    nothing_to_say: bool    # the LLM answer had no speakable text (BC-08): nothing is spoken
    ttfa_ms: float | None   # end of input -> first answer audio ready
    llm: Any                # hub.llm.LlmIntent or None
    response: str
    source: str | None
    intent: str | None
    slots: dict
    audio: str | None
    pcm: bytes | None       # the answer audio, int16 mono
    rate: int
    fallback_level: int
    status: str
    errors: list[dict]
    attempts: dict[str, int]
    failed: dict | None     # {"node", "kind"} of the last failure, None after a success
    timings_ms: dict[str, float]
    load_ms: dict[str, float]   # part of timings_ms spent building engines (not LLM budget)
    breakers: list[dict]    # breaker transitions during the turn
