"""The trace: one JSON object per turn (design.md, "Trace"); the same object goes to the journal.

Lines that are not turns are events (``{"event": ...}``); a capture that ends without a turn is
one ``capture_dropped`` line (:func:`capture_line`, issue 18), on the local microphone of
``hub run`` and on every satellite alike. :class:`LineWriter` writes them, one line at a time.
"""

from __future__ import annotations

import json
import sys
import threading

from hub.audio.format import RATE

STATUSES = ("ok", "no_speech", "bad_input", "degraded")


def _status(final: dict) -> str:
    if final.get("status") in ("no_speech", "bad_input"):
        return final["status"]
    return "degraded" if final.get("errors") else "ok"


def make_trace(final: dict, *, audio: str | None, total_ms: float) -> dict:
    """Build the trace of a finished turn from its final graph state.

    Returns:
        ``{file, transcript, intent, slots, source, response, audio, fallback_level, errors,
        timings_ms, status, breakers, acted, asked_back, commands}``; ``commands`` lists every
        command of the turn in order (``{intent, slots, entities, result, response}``,
        :mod:`hub.act.together`; [] when none was acted on or asked about; ``intent`` and
        ``slots`` are the first's); ``acted`` is True when a command was carried
        out (a device, timer, alarm, reminder or list changed, or a device command sent or
        queued), False for a rejection, a question asked back, a refusal or an answer;
        ``timings_ms`` has each node that ran, ``ttfa``
        (end of input -> first answer audio ready, or null when nothing was spoken) and ``total``.
        ``response`` is what was spoken: when the TTS cut a long answer (``[tts] max_chars``,
        case BC-10) it is the spoken text with the cut notice, as the TTS said it, and
        ``response_full`` (only then) is the whole answer.
    """
    timings = dict(final.get("timings_ms") or {})
    ttfa = final.get("ttfa_ms")
    timings["ttfa"] = round(ttfa, 1) if ttfa is not None else None
    timings["total"] = round(total_ms, 1)
    level = final.get("fallback_level", 0)  # a strict cache hit is the normal path: 0
    cut = {"response_full": final.get("response") or ""} if final.get("spoken") else {}
    return {
        "file": final.get("file"),
        "transcript": final.get("transcript") or "",
        "intent": final.get("intent"),
        "slots": final.get("slots") or {},
        "source": "cache"
        if final.get("cache_hit") and final.get("source") in ("rules", "fuzzy")
        else final.get("source"),
        "response": final.get("spoken") or final.get("response") or "",
        **cut,
        "audio": audio,
        "fallback_level": level,
        "errors": list(final.get("errors") or []),
        "timings_ms": timings,
        "status": _status(final),
        "breakers": list(final.get("breakers") or []),
        "acted": any(outcome.actions for outcome in final.get("outcomes") or ()),
        "asked_back": bool(final.get("asked_back")),
        "commands": list(final.get("commands") or []),
        **({"second_pass": final["second_pass"]} if final.get("second_pass") else {}),
    }


def bad_input_trace(file: str | None, message: str) -> dict:
    """The trace of an input that could not be read (status ``bad_input``, nothing run)."""
    return {
        "file": file,
        "transcript": "",
        "intent": None,
        "slots": {},
        "source": None,
        "response": "",
        "audio": None,
        "fallback_level": 0,
        "errors": [{"node": "input", "kind": "bad_input", "message": message}],
        "timings_ms": {"ttfa": None, "total": 0.0},
        "status": "bad_input",
        "breakers": [],
        "acted": False,
        "asked_back": False,
        "commands": [],
    }


DROP_REASONS = {
    "no_speech": "no speech began before the capture's start timeout (or a satellite's audio-stop)",
    "wake_word": "the wake word was heard: a new command's capture replaces this one",
    "turn_failed": "the turn raised (the error is in the event)",
    "stopping": "the daemon stopped while the capture was open (or its turn not begun)",
    "input_ended": "the microphone ended while the capture was open",
    "duplicate": "another room heard the same wake word first: it answers (satellites)",
    "mislabelled": "the satellite's audio arrives at a multiple of its label's pace (BC-45 f)",
    "disconnected": "the satellite's connection ended during the capture or before its turn",
    "restarted": "the satellite started its pipeline again while the capture was open",
}
"""``capture_dropped`` reasons and what each means."""


def capture_line(reason: str, endpointer=None, kind: str = "wake", **extra) -> dict:
    """The ``capture_dropped`` event line of a capture that ends without a turn.

    Args:
        reason: a key of :data:`DROP_REASONS`.
        endpointer: the capture's :class:`hub.audio.endpoint.Endpointer`, or None (no audio
            was taken): adds ``endpoint``, ``speech_s``, ``audio_s`` and ``ignored_s``.
        kind: what opened the capture: wake, followup or always.
        extra: more fields (``error``, ``satellite``, ...), added last.

    Returns:
        ``{"event": "capture_dropped", "reason", "capture", ...}``.
    """
    line: dict = {"event": "capture_dropped", "reason": reason, "capture": kind}
    if endpointer is not None:
        line.update(
            endpoint=endpointer.reason,
            speech_s=round(endpointer.speech_s, 2),
            audio_s=round(endpointer.audio().size / RATE, 2),
            ignored_s=list(endpointer.ignored),
        )
    line.update(extra)
    return line


class LineWriter:
    """The trace output: each JSON object on one line of ``out``, one line at a time from
    any thread (``hub run``'s listener, stop listener, turn worker and satellites share one).

    Args:
        out: a text stream with ``write`` and ``flush``; None: ``sys.stdout`` at each write.
    """

    def __init__(self, out=None):
        self.out = out
        self._lock = threading.Lock()

    def __call__(self, line: dict) -> None:
        """Write ``line`` as JSON (non-ASCII kept) and a newline, then flush."""
        text = json.dumps(line, ensure_ascii=False) + "\n"
        with self._lock:
            out = self.out if self.out is not None else sys.stdout
            out.write(text)
            out.flush()
