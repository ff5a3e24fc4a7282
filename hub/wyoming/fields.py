"""The data fields of every Wyoming event the server reads, checked by type before use.

The ``wyoming`` package's ``from_event`` reads ``event.data`` without looking at types
(``data["text"]`` is a ``KeyError`` when missing; an ``int`` text fails much later as an
``AttributeError``, which closed the connection). :data:`FIELDS` is the one table of what
the server reads from each event type; :func:`problem` names the first field that is missing
or of the wrong type ("synthesize: 'text' must be a string"), and the connection answers that
event with one ``error`` event and stays open (:meth:`hub.wyoming.parts.Parts.handle`).
Fields not in the table are ignored, as the protocol allows; so a ``ping`` is always answered
(its ``text`` is copied back as it came, as the ``wyoming`` package's servers do).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wyoming.event import Event


@dataclass(frozen=True)
class Field:
    """One data field: its kind (``"string"``, ``"integer"``, ``"object"``, ``"list of
    strings"``) and whether the event needs it (optional fields may be absent or null)."""

    kind: str
    required: bool = False


def _ok(kind: str, value: Any) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":  # JSON true is no number of samples
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "object":
        return isinstance(value, dict)
    if kind == "list of strings":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    raise ValueError(f"unknown field kind {kind!r}")


TEXT = Field("string", required=True)
INT = Field("integer", required=True)
OPTIONAL_INT = Field("integer")
OPTIONAL_TEXT = Field("string")
OBJECT = Field("object")
NAMES = Field("list of strings")

_AUDIO = {"rate": INT, "width": INT, "channels": INT, "timestamp": OPTIONAL_INT}

FIELDS: dict[str, dict[str, Field]] = {
    "synthesize": {"text": TEXT, "voice": OBJECT, "context": OBJECT},
    "synthesize-start": {"voice": OBJECT, "context": OBJECT},
    "synthesize-chunk": {"text": TEXT},
    "synthesize-stop": {},
    "transcribe": {
        "name": OPTIONAL_TEXT,
        "language": OPTIONAL_TEXT,
        "context": OBJECT,
        "transcript_names": NAMES,
        "transcript_terms": NAMES,
    },
    "audio-start": _AUDIO,
    "audio-chunk": _AUDIO,
    "audio-stop": {"timestamp": OPTIONAL_INT},
    "detect": {"names": NAMES, "context": OBJECT},
    "transcript": {"text": TEXT, "language": OPTIONAL_TEXT, "context": OBJECT},
    "recognize": {"text": TEXT, "context": OBJECT},
    "ping": {},  # its text is copied into the pong as it came, never read
    "pong": {},  # a client's answer to a ping: nothing in it is read
    "select-program": {"name": OPTIONAL_TEXT},
}
"""Event type -> the fields the server reads and their types (the ``wyoming`` package's
event classes, 1.7-1.10)."""


def problem(event: Event) -> str | None:
    """What is wrong with ``event``'s data, or None (also for a type not in :data:`FIELDS`).

    Examples: ``"synthesize: 'text' must be a string (got int)"``,
    ``"audio-start: 'rate' must be an integer (it is missing)"``.
    """
    fields = FIELDS.get(event.type)
    if fields is None:
        return None
    data = event.data if isinstance(event.data, dict) else {}
    for name, field in fields.items():
        value = data.get(name)
        kind = ("an " if field.kind[0] in "aeiou" else "a ") + field.kind
        if value is None:
            if field.required:
                got = "it is missing" if name not in data else "got null"
                return f"{event.type}: {name!r} must be {kind} ({got})"
            continue
        if not _ok(field.kind, value):
            return f"{event.type}: {name!r} must be {kind} (got {type(value).__name__})"
    return None
