"""Captures that end without a turn, and a capture held through a wake detection (issue 18).

A capture is never dropped without a trace line saying why (issue 18): each capture that ends
without a turn prints one event line, ``{"event": "capture_dropped", "reason", "capture",
"endpoint", "speech_s", "audio_s", "ignored_s"}`` (:func:`hub.trace.capture_line`), ``reason``
one of :data:`hub.trace.DROP_REASONS`. A wake word detected during a capture that already
holds speech (a "yes" in the follow-up window) does not throw that speech away: the capture is
*held* and heard to its own end beside the new command's capture, then decided
(:func:`decide`, acted on by :meth:`hub.service.supervisor.Supervisor._held_step`): speech
going on after the detection, or beginning in the new capture, is the wake word's command (the
held capture was the wake word: dropped, ``wake_word``); otherwise the held capture is the turn
(its trace's ``capture`` is ``wake_overlap``), once it ended and :data:`WAKE_GRACE_S` passed
without new speech. Known limit: the wake word alone, then a pause longer than that before its
command, is a turn of its own ("didn't catch"), and the command said during that answer is not
captured.
"""

from __future__ import annotations

import logging

log = logging.getLogger("hub.service.supervisor")

WAKE_GRACE_S = 1.0
"""After a wake word detected during a capture holding speech: how long (s) the new capture
must stay without speech of its own for the held capture to be the turn."""
COMMAND_S = 0.4
"""Speech (s) going on after a wake detection in the held capture that makes it the wake
word's command (then the new capture has that command, and the held one is dropped)."""
TAIL_S = 0.3
"""Speech of the new capture within this much (s) of the held capture's own end is the held
speech's tail, not a new command."""


def decide(holding: tuple, block, endpointer, ended: bool) -> str:
    """Feed ``block`` to the held capture and say what it is now.

    Args:
        holding: ``(held endpointer, its kind, its seen_s at the wake detection)``.
        block: the block just read (``endpointer`` has had it).
        endpointer: the new capture the wake word opened.
        ended: the new capture ended with ``block``.

    Returns:
        ``"command"``: speech going on in the held capture :data:`COMMAND_S` after the wake,
        or speech of the new capture's own (past the held speech's end by :data:`TAIL_S`),
        is the wake word's command: the held capture is dropped (``wake_word``).
        ``"reopen"``: the new capture ended on the held speech's tail alone: start it over.
        ``"wait"``: not decided yet. ``"turn"``: the held capture is the turn (it ended and
        the new capture heard :data:`WAKE_GRACE_S` without speech of its own).
    """
    held, _kind, mark = holding
    if not held.ended:
        held.push(block)
    after = max(0.0, held.speech_end_s - mark)  # held speech going on after the wake
    own = endpointer.speech and endpointer.speech_end_s > after + TAIL_S
    if after >= COMMAND_S or own:
        return "command"
    if ended and endpointer.speech:
        return "reopen"
    if not held.ended or (endpointer.seen_s < WAKE_GRACE_S and not ended):
        return "wait"
    return "turn"


def interrupt(holding: tuple | None, endpointer, block, kind: str):
    """The wake word was heard during ``endpointer``'s capture (of ``kind``; ``block``, the
    block it ended in, included): a capture without speech is dropped, one holding speech is
    held to be decided by :func:`decide`; a capture already held (``holding``) is dropped for
    the newer one. Returns ``([(dropped endpointer, its kind)], the new holding or None)``."""
    dropped = [holding[:2]] if holding is not None else []
    if not endpointer.speech:
        return dropped + [(endpointer, kind)], None
    endpointer.push(block)  # the held capture hears the block the wake word ended in
    log.info(
        "capture of %.2f s of speech held: it is the turn unless the wake word's command follows",
        endpointer.speech_s,
    )
    return dropped, (endpointer, kind, endpointer.seen_s)
