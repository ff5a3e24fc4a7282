"""``python -m hub`` runs the CLI; :func:`run` is also the ``hub`` console script.

Ctrl-C at any moment from this module's first line on ends the hub with ``hub: interrupted``
and exit code 130, never a traceback. Until the CLI (and its heavy imports: numpy, the
engines) is loaded, a SIGINT handler installed when this module loads exits at once (there
is nothing to clean up yet, and a library's bare ``except:`` cannot swallow it); from then
on Python's KeyboardInterrupt is back and :func:`hub.cli.main.main` handles it. Only the
interpreter's own start-up (before this module runs) is out of reach.

The process ends as Python's own exit does (non-daemon threads joined, atexit handlers run,
output flushed) but without the interpreter's teardown (:func:`_end`): a daemon thread still
inside native code then (a model loading while ``hub wyoming`` warms, a synthesis) is killed
with the process instead of being unwound through C++ frames, which aborted it with
"terminate called without an active exception" and exit -6 (SIGABRT) instead of its code.
"""

import atexit
import contextlib
import os
import signal
import sys
import threading

EXIT_INTERRUPTED = 130
"""The exit code of an interrupted run (128 + SIGINT), as :class:`hub.errors.ExitCode`."""


def _exit_interrupted(signum=None, frame=None) -> None:
    """Say ``hub: interrupted`` and end the process with :data:`EXIT_INTERRUPTED` now
    (``os._exit``: no atexit handlers, no thread joins; there is nothing to save yet)."""
    try:
        sys.stderr.write("hub: interrupted\n")
        sys.stderr.flush()
    finally:
        os._exit(EXIT_INTERRUPTED)


def _on_sigint(handler) -> None:
    with contextlib.suppress(ValueError, OSError):  # not the main thread, or no signals here
        signal.signal(signal.SIGINT, handler)


_on_sigint(_exit_interrupted)  # from the very start: before the CLI's imports


def run(argv: list[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``); returns the exit code.

    A Ctrl-C while the CLI's modules are imported, while it runs, or while the process
    exits gives ``hub: interrupted`` on stderr and :data:`EXIT_INTERRUPTED`.
    """
    _on_sigint(_exit_interrupted)
    try:
        # lazy: after the SIGINT handler above, so a Ctrl-C while the CLI loads is handled
        from hub.cli.main import main

        _on_sigint(signal.default_int_handler)  # the CLI cleans up on KeyboardInterrupt
        code = main(argv)
    except KeyboardInterrupt:  # while the CLI's commands are imported (its parser)
        _on_sigint(signal.SIG_IGN)
        sys.stdout.flush()
        _exit_interrupted()  # at once: Python's exit would turn this into a SIGINT death
    _on_sigint(signal.SIG_DFL)  # a Ctrl-C during the exit (thread joins) ends it silently
    _end(code)
    return code  # not reached


def _end(code: int) -> None:
    """End the process with ``code``: what Python's exit does first (join the non-daemon
    threads: ``threading._shutdown``, as ``Py_FinalizeEx`` calls it; run the atexit handlers;
    flush stdout and stderr), then ``os._exit`` instead of the interpreter's teardown, which
    kills the daemon threads that try to take the GIL by unwinding them (see the module doc)."""
    with contextlib.suppress(Exception):
        getattr(threading, "_shutdown", lambda: None)()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    raise SystemExit(run())
