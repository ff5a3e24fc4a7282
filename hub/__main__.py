"""``python -m hub`` runs the CLI; :func:`run` is also the ``hub`` console script.

Ctrl-C at any moment from here on ends the hub with ``hub: interrupted`` and exit code 130,
never a traceback: the CLI (and its heavy imports: numpy, the engines) is imported inside
the ``try``. Only the interpreter's own start-up (before this file runs) is out of reach.
"""

import sys

EXIT_INTERRUPTED = 130
"""The exit code of an interrupted run (128 + SIGINT), as :class:`hub.errors.ExitCode`."""


def _quiet_sigint() -> None:
    """From now on a Ctrl-C ends the process at once and silently (the default action:
    killed by SIGINT, which a shell reports as 130), not with a KeyboardInterrupt raised
    in the middle of the exit (thread joins, atexit handlers)."""
    import signal

    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    except (ValueError, OSError):  # not the main thread, or no signals here
        pass


def run(argv: list[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``); returns the exit code.

    A KeyboardInterrupt anywhere, including while the CLI's modules are imported, gives
    ``hub: interrupted`` on stderr and :data:`EXIT_INTERRUPTED`.
    """
    try:
        from hub.cli.main import main

        code = main(argv)
    except KeyboardInterrupt:
        _quiet_sigint()
        print("hub: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    _quiet_sigint()
    return code


if __name__ == "__main__":
    raise SystemExit(run())
