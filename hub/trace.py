"""The trace: one JSON object per turn (design.md, "Trace"); the same object goes to the journal."""

from __future__ import annotations

STATUSES = ("ok", "no_speech", "bad_input", "degraded")


def _status(final: dict) -> str:
    if final.get("status") in ("no_speech", "bad_input"):
        return final["status"]
    return "degraded" if final.get("errors") else "ok"


def make_trace(final: dict, *, audio: str | None, total_ms: float) -> dict:
    """Build the trace of a finished turn from its final graph state.

    Returns:
        ``{file, transcript, intent, slots, source, response, audio, fallback_level, errors,
        timings_ms, status, breakers, acted}``; ``acted`` is True when a command was carried
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
    }
