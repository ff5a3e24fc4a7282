"""Captures that end without a turn, and a capture held through a wake detection (issue 18).

A capture is never dropped without a trace line saying why (issue 18): each capture that ends
without a turn prints one event line, ``{"event": "capture_dropped", "reason", "capture",
"endpoint", "speech_s", "audio_s", "ignored_s"}`` (:func:`hub.trace.capture_line`), ``reason``
one of :data:`hub.trace.DROP_REASONS`.

A wake word heard during a capture (in the reply window after a question, the capture holds
the wake word's own speech) opens a new command, as everywhere else: the new capture waits
``[wake] speech_timeout_s`` for it, whatever the pause after the wake word, and the wake
word's audio is never decoded as the command or the answer. The interrupted capture is *held*
only to tell the wake word's own end from the command (:func:`decide`, acted on by
:meth:`hub.service.supervisor.Supervisor._held_step`): the detector fires inside or at the end
of the word, so the rest of it reaches the new capture too; speech of the new capture within
:data:`TAIL_S` of the held speech's end is that tail (the new capture is started over), speech
going on :data:`COMMAND_S` after the detection or past the tail is the command. The held
capture is then dropped (``capture_dropped`` ``wake_word``): it is never a turn. A question
pending then is answered by the next turn like any other: the command after the wake word
replaces it (not a yes: nothing is done); a wake word with no command after it leaves it
pending (a turn with no speech is no turn).
"""

from __future__ import annotations

import logging

log = logging.getLogger("hub.service.supervisor")

WAKE_GRACE_S = 1.0
"""The least start timeout (s) a new command's capture is given when it is started over."""
COMMAND_S = 0.4
"""Speech (s) going on after a wake detection in the held capture that makes it the wake
word's command (the new capture has that command)."""
TAIL_S = 0.3
"""Speech of the new capture within this much (s) of the held capture's own end is the held
speech's tail (the wake word's end), not a new command."""


def decide(holding: tuple, block, endpointer, ended: bool) -> str:
    """Feed ``block`` to the held capture and say what the wake word's capture is now.

    Args:
        holding: ``(held endpointer, its kind, its seen_s at the wake detection)``.
        block: the block just read (``endpointer`` has had it).
        endpointer: the new capture the wake word opened.
        ended: the new capture ended with ``block``.

    Returns:
        ``"command"``: speech going on in the held capture :data:`COMMAND_S` after the wake,
        or speech of the new capture's own (past the held speech's end by :data:`TAIL_S`):
        the command has begun; the held capture is dropped. ``"reopen"``: the new capture
        heard only the held speech's tail (the wake word's end) and that speech is over:
        start it over. ``"wait"``: the held speech goes on. ``"wake"``: the held capture
        was the wake word (it ended, the new capture heard nothing of it): dropped, the new
        capture goes on waiting for the command.
    """
    held, _kind, mark = holding
    if not held.ended:
        held.push(block)
    after = max(0.0, held.speech_end_s - mark)  # held speech going on after the wake
    own = endpointer.speech and endpointer.speech_end_s > after + TAIL_S
    if after >= COMMAND_S or own:
        return "command"
    if endpointer.speech and (ended or held.ended):
        return "reopen"
    if not held.ended and not ended:
        return "wait"
    return "wake"


def interrupt(holding: tuple | None, endpointer, block, kind: str):
    """The wake word was heard during ``endpointer``'s capture (of ``kind``; ``block``, the
    block it ended in, included): a capture without speech is dropped, one holding speech is
    held until :func:`decide` tells the wake word's end from its command; a capture already
    held (``holding``) is dropped for the newer one. Returns ``([(dropped endpointer, its
    kind)], the new holding or None)``."""
    dropped = [holding[:2]] if holding is not None else []
    if not endpointer.speech:
        return dropped + [(endpointer, kind)], None
    endpointer.push(block)  # the held capture hears the block the wake word ended in
    log.info(
        "capture of %.2f s of speech held until the wake word's own end is known",
        endpointer.speech_s,
    )
    return dropped, (endpointer, kind, endpointer.seen_s)
