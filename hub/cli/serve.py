"""``hub serve``: be the voice server of the ``[[satellites]]``, without a local microphone."""

from __future__ import annotations

import asyncio
import logging
import signal

from hub.cli.args import make_hub
from hub.errors import ConfigError

log = logging.getLogger("hub.satellites")


def add_parsers(sub, *, common, inject, store) -> None:
    """Register ``serve``."""
    p = sub.add_parser(
        "serve",
        help="serve Wyoming satellites ([[satellites]]) without a local microphone",
        description="Connect to every [[satellites]] entry (a wyoming-satellite "
        "is a TCP server) and answer what each one hears in its own area. "
        "`hub run` does the same beside its microphone.",
    )
    common(p)
    inject(p)
    store(p)
    p.set_defaults(func=run_serve)


def run_serve(args) -> int:
    """Serve until SIGINT (exit 130) or SIGTERM (exit 0).

    Raises:
        hub.errors.ConfigError: no ``[[satellites]]`` configured (exit 2).
    """
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.service.daemon import load_hub

    hub, _ = load_hub(args, make_hub)
    if not hub.settings.satellites:
        raise ConfigError(
            "satellites: none configured; add [[satellites]] tables "
            "(`hub config example` shows one)"
        )
    return asyncio.run(_serve(hub))


async def _serve(hub) -> int:
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.satellites.serve import build, serve_satellites
    from hub.service.notify import notify

    stop, got = asyncio.Event(), []
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, lambda s=signum: (got.append(s), stop.set()))
    hub.events.start()
    try:
        await serve_satellites(build(hub), stop, ready=lambda: notify("READY=1"))
    finally:
        hub.events.close()
    if got:  # as `hub run` says it (INFO)
        log.info("stopped by %s", signal.Signals(got[0]).name)
    return 130 if got and got[0] == signal.SIGINT else 0
