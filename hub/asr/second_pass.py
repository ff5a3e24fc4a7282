"""When and how the open-vocabulary second pass changes the grammar pass's transcript.

:func:`second_pass` is a function of (the first pass's :class:`~hub.asr.base.Transcript`, the
turn's audio, the second engine) plus the collaborators it needs to judge the result:

- It runs only when the grammar **rejected** the speech (out of grammar: a question, an
  unusual phrasing) or is **unsure** of a command's action word (:mod:`hub.asr.confusion`).
  A sure grammar result is returned untouched, without running anything (the rules path
  keeps its speed).
- **Speech evidence first** (:mod:`hub.asr.evidence`, case BC-37): without
  ``min_speech_ms`` of speech found by the hub's VAD the second pass does not run; its text
  is dropped on Whisper's own no-speech, compression, repetition and confidence figures, and
  an invented-looking phrase is dropped when the evidence is weak. A dropped text leaves the
  first pass's result as it was ("didn't catch" for a rejection, asked back when unsure).
- **Rejected**: Whisper's reading becomes the transcript (then rules -> fuzzy -> LLM, with
  every guard of the text path). A command it reads is checked like the grammar's
  (``scorer.doubts``: an action-word rival force-aligned to the audio fits as well) and then
  asked back; so is one that holds a number (only one recognizer heard it).
- **Unsure**: the two readings are compared on *what would be done* (``interpret``: the
  rules' intent and slots). The same action: the doubt is settled, the command is done;
  for a number with a -teen/-ty partner ("15" / "50") only when the agreed reading also
  force-aligns better than the partner by :data:`NUMBER_MARGIN` (both recognizers can
  mishear it alike), else it is asked back.
  Different actions: both readings are force-aligned to the audio with PocketSphinx
  (``scorer.scores``); the second pass's reading is asked back ("Do you want me to ...?")
  unless the grammar's aligns clearly better (``margin``); never acted on without a yes.
  This is system combination by agreement (ROVER-style voting between two recognizers,
  Fiscus 1997) with an acoustic tie-break.
- **Busy**: while an earlier turn's timed-out decode still holds the model (the engine's
  ``stopping``: a segment cannot be stopped inside), the second pass is skipped at once
  (``outcome`` "skipped", ``rejected_reason`` "busy"), so the turn does not wait for it.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import re
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np

from hub.asr import evidence as ev
from hub.asr.base import Transcript
from hub.asr.numbers import has_number, teen_ty_rivals
from hub.asr.whisper_engine import as_float_audio
from hub.asr.whisper_io import normalize
from hub.errors import HubError, TimeoutError_

log = logging.getLogger(__name__)


DISAGREE_MARGIN = 30.0
"""Default ``margin``: ``[asr] confusion_margin`` (20) plus the on/off extra (10), the
margin below which :mod:`hub.asr.confusion` already calls two readings too close."""
TIME_MARGIN = 1.3
"""The time left must exceed the second pass's expected time by this factor."""
NUMBER_MARGIN = 15.0
"""When both recognizers agree on a number that has a -teen/-ty partner ("15" / "50"), the
agreed reading must also force-align better than the partner by this much (ln x 1000), else
it is asked back: both can be wrong together (Whisper tiny.en and the grammar both hear the
hub's own voice's "seventy minutes" as "17"). On the synthetic number set no wrong reading
led its partner by more than 9.4 (BENCHMARKS.md, "Numbers said in commands")."""


@dataclass(frozen=True)
class Decision:
    """The turn's transcript after the second pass, and what the trace records of it."""

    transcript: Transcript
    trace: dict
    """``{}`` when it did not run; else ``why`` (rejected/unsure), ``outcome`` (used, agree,
    disagree, unread: both heard the same words and the rules read neither, dropped,
    failed), ``asked`` (the reading asked back, when unsure is kept), ``number_margin`` (an
    agreed -teen/-ty number's lead over its partner, ln x 1000), ``text``,
    ``no_speech_prob``, ``avg_logprob``, ``compression_ratio``, ``window_s`` (the encoder
    window, s), ``reread`` (why a short window's reading was read again at 30 s, when it
    was), ``speech_ms``, ``dbfs``, ``rejected_reason``."""
    error: HubError | None = None
    """The second pass's own failure (timeout, load), for the trace's ``errors``."""


def needed(first: Transcript) -> str | None:
    """``"rejected"`` or ``"unsure"`` when the second pass should run on ``first``, else None."""
    if first.rejected:
        return "rejected"
    if first.unsure and first.text:
        return "unsure"
    return None


def second_pass(
    first: Transcript,
    samples: np.ndarray,
    engine,
    *,
    interpret: Callable[[str], Hashable | None] = lambda text: None,
    scorer=None,
    cancel=None,
    deadline: float | None = None,
    min_speech_ms: int = 300,
    clock=time.monotonic,
    margin: float = DISAGREE_MARGIN,
) -> Decision:
    """The transcript to go on with (see the module doc).

    Args:
        first: the grammar pass's transcript.
        samples: the turn's int16 mono 16 kHz audio.
        engine: the second recognizer (:class:`hub.asr.whisper_engine.WhisperEngine`:
            ``hear(float_audio, cancel, deadline)``).
        interpret: ``interpret(text)`` -> what the home would do for it (e.g. the rules'
            ``(intent, slots)``), None when nothing.
        scorer: the grammar recognizer's aligner (``scores(samples, texts)`` -> acoustic
            scores or None each; ``doubts(samples, text)`` -> bool), or None.
        cancel, deadline: stop the second pass (a threading.Event; monotonic seconds).
        min_speech_ms: speech the VAD must find for the second pass to run.
        margin: on a disagreement, the grammar's reading is asked back only when it
            force-aligns better than the second pass's by this much (ln x 1000); else the
            second pass's (the grammar's unsure readings are the ones whose alignment margins
            cannot be trusted: PocketSphinx hears a weak "off" as "on").
        clock: monotonic seconds (the deadline's clock). On an unsure command the second
            pass is skipped (the first result stands) when the time left is under
            :data:`TIME_MARGIN` times the engine's ``expected_s()``: a late second pass would
            lose the grammar's result too. Rejected speech has no result to lose: it is heard
            whenever time is left, until ``deadline`` (:func:`_no_time`).
    Returns:
        A :class:`Decision`; never raises for the second pass's own failures (they are in
        ``error`` and the first pass's result stands).
    """
    gate = _gate(first, samples, engine, min_speech_ms, deadline, clock)
    if isinstance(gate, Decision):
        return gate
    why, found, trace = gate
    try:
        heard = _hear_within(engine, as_float_audio(samples), cancel, deadline, clock)
    except HubError as exc:
        log.warning("second pass failed: %s", exc.message)
        return Decision(first, {**trace, "outcome": "failed"}, error=exc)
    trace.update(_figures(heard))
    reason = ev.rejection(heard, found, _needed(why, min_speech_ms))
    if reason is not None:
        log.info("second pass text %r dropped (%s)", heard.text, reason)
        return Decision(first, {**trace, "outcome": "dropped", "rejected_reason": reason})
    text = normalize(heard.text)
    if why == "rejected":
        return _take(text, samples, engine.name, interpret, scorer, trace)
    return _settle(first, text, samples, interpret, scorer, trace, margin)


def _gate(
    first: Transcript, samples, engine, min_speech_ms: int, deadline: float | None, clock
) -> tuple[str, ev.Evidence, dict] | Decision:
    """``(why, speech evidence, trace)`` when the second pass is to run, else the
    :class:`Decision` keeping the first result: not needed, no speech in the audio, the
    model still held by a stopping decode, or no time left for it (see :func:`second_pass`)."""
    why = needed(first)
    if why is None or samples is None or len(samples) == 0:
        return Decision(first, {})
    found = ev.measure(samples)
    trace = {"why": why, "speech_ms": found.speech_ms, "dbfs": found.dbfs}
    if found.speech_ms < _needed(why, min_speech_ms) or found.dbfs < ev.MIN_DBFS:
        return Decision(first, {**trace, "outcome": "dropped", "rejected_reason": "no_speech"})
    if getattr(engine, "stopping", False):  # a timed-out decode still holds the model
        log.info("second pass skipped: the last decode is still stopping")
        return Decision(first, {**trace, "outcome": "skipped", "rejected_reason": "busy"})
    expected = getattr(engine, "expected_s", lambda: 0.0)()
    if deadline is not None and _no_time(why, deadline - clock(), expected):
        getattr(engine, "warm_later", lambda: None)()  # so that the next one fits
        return Decision(
            first,
            {
                **trace,
                "outcome": "skipped",
                "rejected_reason": "no_time",
                "expected_s": round(expected, 2),
            },
        )
    return why, found, trace


def _needed(why: str, min_speech_ms: int) -> int:
    """The VAD's speech (ms) the second pass needs: ``min_speech_ms`` for speech the grammar
    rejected (it may be noise: Whisper writes text over it, BC-37); none for an unsure
    command, which the grammar heard as one of its sentences (its doubt is a word, not
    whether anyone spoke; microVAD found 0-290 ms in short live commands at -18 dBFS, so
    they were asked back unheard). The level (:data:`hub.asr.evidence.MIN_DBFS`) and
    Whisper's own no-speech and confidence checks still apply; a reading the rules do not
    share is asked back, never done."""
    return 0 if why == "unsure" else min_speech_ms


def _no_time(why: str, left: float, expected: float) -> bool:
    """Whether to skip the second pass for time: an unsure command keeps the grammar's result
    (asked back) unless ``left`` exceeds :data:`TIME_MARGIN` times the ``expected`` seconds;
    rejected speech has no result to keep ("didn't catch" either way), so it is skipped only
    when no time is left at all, and otherwise heard until the deadline stops it (the
    expected time is a guess from the last decode: under a passing load spike it is stale)."""
    if why == "rejected":
        return left <= 0.0
    return left < TIME_MARGIN * expected


def _take(text: str, samples, name: str, interpret, scorer, trace: dict) -> Decision:
    """Rejected speech: the second pass's reading, ``unsure`` when the scorer doubts it or
    it holds a number (a number only one recognizer heard is asked back: nothing checked it
    but the alignment, which cannot tell "15" from "50")."""
    doubt = interpret(text) is not None and (
        has_number(text) or (scorer is not None and scorer.doubts(samples, text))
    )
    said = Transcript(text=text, alternatives=(text,), engine=name, segments=(text,), unsure=doubt)
    return Decision(said, {**trace, "outcome": "used", "unsure": doubt})


def _figures(heard) -> dict:
    """The trace's record of what Whisper wrote and its confidence figures."""
    figures = {
        "text": heard.text,
        "no_speech_prob": round(heard.no_speech_prob, 3),
        "avg_logprob": round(heard.avg_logprob, 3),
        "compression_ratio": round(heard.compression_ratio, 3),
        "window_s": getattr(heard, "window_s", None),
    }
    if getattr(heard, "reread", None):
        figures["reread"] = heard.reread  # the short window's reading looked wrong
    if getattr(heard, "unlooped", False):
        figures["unlooped"] = True  # the short window's text repeated itself: cut
    return figures


class _Either:
    """Set when either event is (the turn's cancel, or this call's own deadline)."""

    def __init__(self, *events):
        self.events = [e for e in events if e is not None]

    def is_set(self) -> bool:
        return any(e.is_set() for e in self.events)


def _hear_within(engine, audio, cancel, deadline: float | None, clock):
    """``engine.hear`` on a worker thread, waited for until ``deadline`` at most: a late
    second pass must not take the grammar's result (and the ``asr`` node's breaker) with
    it. When late, the worker is told to stop at its next segment (BC-39 a) and
    :class:`~hub.errors.TimeoutError_` (node ``asr2``) is raised here."""
    if deadline is None:
        return engine.hear(audio, cancel, None)
    stop, box = threading.Event(), {}

    def work() -> None:
        try:
            box["heard"] = engine.hear(audio, _Either(cancel, stop), deadline)
        except BaseException as exc:
            box["error"] = exc

    worker = threading.Thread(target=work, name="hub-asr2", daemon=True)
    worker.start()
    worker.join(max(0.0, deadline - clock()))
    if worker.is_alive():
        stop.set()
        raise TimeoutError_("second pass stopped: out of time", node="asr2")
    if "error" in box:
        raise box["error"]
    return box["heard"]


def _words_of(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def _number_lead(text: str, samples, scorer) -> float | None:
    """How much better ``text`` force-aligns than its -teen/-ty rivals (ln x 1000); None
    when it has none; -inf when it cannot be checked (no scorer, or no alignment)."""
    rivals = teen_ty_rivals(text)
    if not rivals:
        return None
    scores = scorer.scores(samples, [text, *rivals]) if scorer is not None else [None]
    others = [s for s in scores[1:] if s is not None]
    if scores[0] is None or not others:
        return float("-inf")
    return round(scores[0] - max(others), 1)


def _settle(
    first: Transcript, text: str, samples, interpret, scorer, trace: dict, margin: float
) -> Decision:
    """An unsure command: agreement settles it (a -teen/-ty number only with
    :func:`_number_lead`); disagreement is asked back, in the second pass's words unless the
    audio prefers the grammar's reading by ``margin`` or more."""
    mine, theirs = interpret(first.text), interpret(text)
    if mine is not None and mine == theirs:
        lead = _number_lead(first.text, samples, scorer)
        if lead is not None:
            trace["number_margin"] = lead if math.isfinite(lead) else None  # JSON: no inf
            if not lead >= NUMBER_MARGIN:  # both may have misheard it alike: ask
                return Decision(first, {**trace, "outcome": "agree", "asked": first.text})
        return Decision(dataclasses.replace(first, unsure=False), {**trace, "outcome": "agree"})
    if mine is None and theirs is None and _words_of(first.text) == _words_of(text):
        return Decision(first, {**trace, "outcome": "unread", "asked": first.text})
    chosen = first
    if theirs is not None and scorer is not None:
        own, other = scorer.scores(samples, [first.text, text])
        trace.update(score_first=own, score_second=other)
        if other is not None and (own is None or own - other < margin):
            chosen = Transcript(
                text=text, alternatives=(text,), engine="whisper", segments=(text,), unsure=True
            )
    return Decision(chosen, {**trace, "outcome": "disagree", "asked": chosen.text})
