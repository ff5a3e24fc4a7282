"""``hub wyoming``: serve the hub's asr, tts, wake and handle programs over Wyoming.

Under systemd it says ``READY=1`` once it listens and, with ``WatchdogSec=``, ``WATCHDOG=1``
from its event loop twice per interval, so a stuck loop gets the service restarted.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import signal

from hub.cli.args import make_hub, settings_for
from hub.wyoming import DEFAULT_URI

log = logging.getLogger("hub.wyoming")


def add_parsers(sub, *, common, inject, store) -> None:
    """Register ``wyoming``."""
    p = sub.add_parser(
        "wyoming",
        help="serve Home Assistant over the Wyoming protocol",
        description="A Wyoming server: speech recognition restricted to the "
        "home's vocabulary, Piper speech (streaming), microWakeWord wake words "
        "and the hub as a conversation agent. Add it in Home Assistant under "
        "Settings > Devices & services > Wyoming Protocol (host and port).",
    )
    common(p)
    inject(p)
    store(p)
    p.add_argument(
        "--uri", help=f"tcp://HOST:PORT or unix://PATH (default: [wyoming] uri, else {DEFAULT_URI})"
    )
    p.add_argument(
        "--no-zeroconf", action="store_true", help="do not announce the server over mDNS"
    )
    p.add_argument("--no-llm", action="store_true", help="rules only: no local language model")
    p.set_defaults(func=run_wyoming)


def run_wyoming(args) -> int:
    """Serve until SIGINT (exit 130) or SIGTERM (exit 0).

    The socket listens before the hub is built (:mod:`hub.wyoming.early`); the config is read
    first, so a bad one still exits 2 before anything listens.
    """
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.wyoming.early import check_uri

    settings = settings_for(args)
    cfg = settings.wyoming
    uri = check_uri(args.uri or cfg.uri or DEFAULT_URI)
    cfg = dataclasses.replace(cfg, zeroconf=cfg.zeroconf and not args.no_zeroconf)
    return asyncio.run(_serve(args, cfg, uri, settings.home.language))


async def _serve(args, cfg, uri: str, language: str) -> int:
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.service.notify import notify
    from hub.wyoming.early import Pending, listen_early

    stop, got = asyncio.Event(), []
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, lambda s=signum: (got.append(s), stop.set()))
    pending = Pending(language)
    server = await listen_early(uri, pending)
    notify("READY=1")
    watchdog = asyncio.create_task(_watchdog())
    try:
        hub = asyncio.create_task(asyncio.to_thread(_make_hub, args))
        await asyncio.wait(
            {hub, asyncio.create_task(stop.wait())}, return_when=asyncio.FIRST_COMPLETED
        )
        if not stop.is_set():
            # lazy: the server imports the turn graph; the socket listens before that loads
            from hub.wyoming.server import serve

            await serve(
                hub.result(),
                cfg,
                uri,
                zeroconf=cfg.zeroconf,
                stop=stop,
                background=True,
                early=(server, pending),
            )
    finally:
        watchdog.cancel()
        await server.stop()
    if got:  # as `hub run` says it (INFO)
        log.info("stopped by %s", signal.Signals(got[0]).name)
    return 130 if got and got[0] == signal.SIGINT else 0


def _make_hub(args):
    return make_hub(args, "run", speak=False)


async def _watchdog() -> None:
    """``WATCHDOG=1`` twice per systemd watchdog interval, from the serving loop."""
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.service.notify import notify, watchdog_interval_s

    interval = watchdog_interval_s()
    while interval:
        notify("WATCHDOG=1")
        await asyncio.sleep(interval / 2)
