"""One error tree for the hub, rooted at :class:`HubError`.

Every engine adapter maps its library's exceptions into one of these kinds before anything
is retried (design.md, "Retry by error class"):

- ``timeout``: the call ran past its timeout; may retry within the turn's budget.
- ``transient``: a passing failure (busy device, dropped connection); may retry.
- ``invalid_output``: the engine answered, but the answer is unusable (bad JSON, garbage);
  may retry once with a stricter request.
- ``fatal``: the engine is broken (missing model, crash); never retried.
- ``bad_input``: the user's input cannot be used (not a WAV, truncated header); never retried.
"""

from __future__ import annotations

from enum import IntEnum
from typing import ClassVar

KINDS = ("timeout", "transient", "invalid_output", "fatal", "bad_input")


class ExitCode(IntEnum):
    """The exit codes of every ``hub`` command (README, "Exit codes"): the one table."""

    OK = 0
    """Every input handled, ``no_speech`` and ``degraded`` turns included."""
    INTERNAL = 1
    """A bug (``-vv`` shows the traceback)."""
    BAD_INPUT = 2
    """An input unreadable or unsupported, or a bad config or usage."""
    NETWORK = 3
    """Network unreachable (``hub models fetch``)."""
    DEVICE = 4
    """Audio device unavailable (``hub run``)."""
    NOT_SAVED = 5
    """The user's data (a list, the timers, the alarms) was changed but could not be saved
    before the command ended (the store locked by another process past ``[store]
    save_wait_s``, or unwritable): it is lost, and stderr names it. It replaces 0, 130 and
    143 (the daemons' stop included), never an error's code."""
    INTERRUPTED = 130
    """Ctrl-C (SIGINT)."""
    TERMINATED = 143
    """SIGTERM (128 + 15), in a command that is not a daemon (``run``, ``wyoming`` and ``serve``
    stop cleanly with 0)."""


class HubError(Exception):
    """Base of every error the hub raises on purpose.

    Args:
        message: one line for a person; no traceback is ever shown for a HubError.
        node: the graph node (or part) that raised it, e.g. ``"asr"``.
        file: the input file the error concerns, if any.
    """

    kind: ClassVar[str] = "fatal"

    def __init__(self, message: str, *, node: str | None = None, file: str | None = None):
        super().__init__(message)
        self.message = message
        self.node = node
        self.file = file

    def as_trace(self) -> dict:
        """The ``{node, kind, message}`` entry of a trace's ``errors`` list."""
        return {"node": self.node, "kind": self.kind, "message": self.message}


class TimeoutError_(HubError):
    """A call ran past its timeout (kind ``timeout``)."""

    kind = "timeout"


class TransientError(HubError):
    """A passing failure that may succeed if tried again (kind ``transient``)."""

    kind = "transient"


class InvalidOutputError(HubError):
    """An engine answered with something unusable (kind ``invalid_output``)."""

    kind = "invalid_output"


class FatalError(HubError):
    """An engine or part is broken; retrying cannot help (kind ``fatal``)."""

    kind = "fatal"


class BadInputError(HubError):
    """The input cannot be used: unreadable, unsupported or corrupt (kind ``bad_input``)."""

    kind = "bad_input"


class ConfigError(HubError):
    """The configuration is invalid; the message names the key's path (kind ``fatal``)."""

    kind = "fatal"


class DeviceUnavailableError(HubError):
    """No audio device could be opened (kind ``transient``; ``hub run`` exits with 4)."""

    kind = "transient"
