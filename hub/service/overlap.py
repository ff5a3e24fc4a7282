"""Speech heard while the hub plays, acted on (issue 18: live follow-ups, stop means stop).

The stop listener (:class:`hub.service.stopword.StopListener`) decodes each short utterance
said while the hub plays (an answer, a question, a ring) with a small grammar: the stop
phrases, and, while a question waits for its answer or something rings, the replies ("yes",
"no", "never mind", ...) and the snooze phrases. :class:`OverPlayback` acts on what it read:

- While a question waits (``Conversation.awaiting_answer``), a reply or a stop word said over
  it is its answer: playback stops and the utterance is a turn of its own, decoded by the
  recognizer like any capture (the same path as a replayed file, so "no" is "Okay, I won't."
  and "yes" does it). Said while the question still played, its trace's ``capture`` is
  ``over_question``; said over its very end (the playback had ended when the decode came),
  it is the follow-up window's turn (``followup``), handed to the listener's thread
  (:meth:`OverPlayback.late_reply`) so that one capture, not two, answers the question.
- A snooze phrase while an alarm rings: playback stops, the utterance is a turn
  (``over_ring``), which snoozes the alarm as "okay nabu, snooze" does.
- Any other stop word: playback stops, and a ringing timer or alarm with it (the
  ``stopped`` event line).

A reply begun over the question's end and still being said when the follow-up window opens
is not decoded here: the window's capture takes it over (:meth:`StopListener.take`).
"""

from __future__ import annotations

import logging
import queue
from collections.abc import Callable

import numpy as np

from hub.service.stopword import REPLY_PHRASES, SNOOZE_PHRASES, stop_rings

log = logging.getLogger("hub.service.supervisor")


def heard_kind(text: str) -> str:
    """``"snooze"``, ``"reply"`` or ``"stop"``: what the stop listener's phrase ``text`` is."""
    said = " ".join(text.lower().split())
    if said in SNOOZE_PHRASES:
        return "snooze"
    return "reply" if said in REPLY_PHRASES else "stop"


class OverPlayback:
    """Acts on a phrase the stop listener heard (see the module doc).

    Args:
        hub: ``hub()`` -> the current :class:`hub.core.hub.Hub` (its conversation and timer
            events).
        speaker: the :class:`hub.service.speaker.Speaker` (``cancel() -> bool``, ``playing``).
        queue_turn: ``queue_turn(audio, capture)`` -> a turn of ``audio`` (int16 16 kHz)
            whose trace's ``capture`` is ``capture``.
        emit: ``emit(line)`` -> one JSON event line on the trace output.
        on_cut: called when playback was cut (the supervisor counts barge-ins).
    """

    def __init__(
        self,
        hub: Callable,
        speaker,
        queue_turn: Callable[[np.ndarray, str], None],
        emit: Callable[[dict], None],
        on_cut: Callable[[], None] = lambda: None,
    ):
        self._hub, self._speaker, self._queue_turn = hub, speaker, queue_turn
        self._emit, self._on_cut = emit, on_cut
        self._late: queue.Queue = queue.Queue()

    def replies(self) -> bool:
        """True while replies and snooze phrases are listened for too: a question waits for
        its answer, or a timer or alarm rings. Never raises (False on a failing check)."""
        try:
            hub = self._hub()
            return bool(hub.conversation().awaiting_answer or hub.events.stop_armed)
        except Exception as exc:
            log.debug("reply check failed: %s", exc)
            return False

    def on_heard(self, text: str, audio: np.ndarray) -> None:
        """The stop listener heard ``text`` in ``audio`` (on its own thread): act on it."""
        kind = heard_kind(text)
        hub = self._hub()
        if hub.conversation().awaiting_answer and kind in ("reply", "stop"):
            if self._cut():
                log.info("reply %r said over the question: it is the answer", text)
                self._queue_turn(audio, "over_question")
            else:  # over its very end: the listener's thread makes it the window's turn
                self._speaker.release()
                log.info("reply %r said over the question's end: it is the answer", text)
                self._late.put(audio)
            return
        if kind == "snooze" and hub.events.stop_armed:
            self._cut()
            log.info("snooze said while it rings: a turn")
            self._queue_turn(audio, "over_ring")
            return
        if kind != "stop":  # a reply with no question: nothing to act on
            self._speaker.release()
            log.info("stop listener: %r with no question waiting: ignored", text)
            return
        self._stop(text, hub)

    def _cut(self) -> bool:
        cut = self._speaker.cancel()
        if cut:
            self._on_cut()
        return cut

    def _stop(self, text: str, hub) -> None:
        """A stop word: stop playback, and the ringing with it, silently
        (:func:`hub.service.stopword.stop_rings`); one event line."""
        cut = self._cut()
        rang = stop_rings(hub.events)
        stopped = [kind for kind, done in rang.items() if done]
        log.info("stop word %r: playback %s; stopped %s", text, cut, stopped or "no ring")
        self._emit({"event": "stopped", "said": text, "playback": cut, **rang})

    def late_reply(self) -> np.ndarray | None:
        """A reply said over the question's very end, not yet a turn (the listener's thread
        takes it: it replaces the follow-up window), or None."""
        try:
            return self._late.get_nowait()
        except queue.Empty:
            return None
