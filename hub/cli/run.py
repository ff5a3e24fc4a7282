"""``hub run``: registration of the daemon's command line (the daemon is :mod:`hub.service`)."""

from __future__ import annotations

import argparse

from hub.cli.args import make_hub, settings_for

RUN_EPILOG = """\
microphone: [audio] input_device = "NAME" picks the input by a case-insensitive substring of
its PortAudio name (exact name first); empty means the system default. `hub doctor` lists
the devices, marks the one `hub run` would open with its rates and channels, and says what
is wrong. A missing device is waited for ([audio] device_wait_s, default 120 s), then the
daemon exits with 4.

signals: SIGTERM stops cleanly (exit 0), SIGINT too (exit 130), SIGHUP reloads the config
([home], [intents], thresholds) keeping the loaded models.

output: one JSON trace line per turn on stdout."""


def add_parsers(sub, *, common, inject, store) -> None:
    """Register ``run``."""
    p = sub.add_parser(
        "run",
        help="listen on the microphone and answer (the daemon)",
        description="Listen for the wake word, then answer each utterance. "
        "Exits with 4 when no audio device can be opened.",
        epilog=RUN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    common(p)
    inject(p)
    store(p)
    p.add_argument("--no-wake", action="store_true", help="treat every utterance as addressed")
    p.set_defaults(func=_run_daemon)


def _run_daemon(args) -> int:
    from hub.service.daemon import run_daemon  # lazy: hub --help must not load the daemon

    return run_daemon(args, make_hub, lambda: settings_for(args))
