"""``hub wyoming``: serve the hub's asr, tts, wake and handle programs over Wyoming.

Under systemd it says ``READY=1`` once it listens and, with ``WatchdogSec=``, ``WATCHDOG=1``
from its event loop twice per interval, so a stuck loop gets the service restarted.
"""

from __future__ import annotations

import asyncio
import dataclasses
import signal

from hub.wyoming import DEFAULT_URI


def add_parsers(sub, *, common, inject, store) -> None:
    """Register ``wyoming``."""
    p = sub.add_parser("wyoming", help="serve Home Assistant over the Wyoming protocol",
                       description="A Wyoming server: speech recognition restricted to the "
                       "home's vocabulary, Piper speech (streaming), microWakeWord wake words "
                       "and the hub as a conversation agent. Add it in Home Assistant under "
                       "Settings > Devices & services > Wyoming Protocol (host and port).")
    common(p)
    inject(p)
    store(p)
    p.add_argument("--uri", help=f"tcp://HOST:PORT or unix://PATH (default: [wyoming] uri, "
                   f"else {DEFAULT_URI})")
    p.add_argument("--no-zeroconf", action="store_true",
                   help="do not announce the server over mDNS")
    p.add_argument("--no-llm", action="store_true",
                   help="rules only: no local language model")
    p.set_defaults(func=run_wyoming)


def run_wyoming(args) -> int:
    """Serve until SIGINT (exit 130) or SIGTERM (exit 0)."""
    from hub.core.replay import make_hub
    from hub.wyoming.server import check_uri, serve, warm

    hub = make_hub(args, "run", speak=False)
    cfg = hub.settings.wyoming
    uri = check_uri(args.uri or cfg.uri or DEFAULT_URI)
    cfg = dataclasses.replace(cfg, zeroconf=cfg.zeroconf and not args.no_zeroconf)
    warm(hub)
    return asyncio.run(_serve(hub, cfg, uri, serve))


async def _serve(hub, cfg, uri: str, serve) -> int:
    from hub.service.notify import notify

    stop, got = asyncio.Event(), []
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, lambda s=signum: (got.append(s), stop.set()))
    watchdog = asyncio.create_task(_watchdog())
    try:
        await serve(hub, cfg, uri, zeroconf=cfg.zeroconf, stop=stop,
                    ready=lambda: notify("READY=1"))
    finally:
        watchdog.cancel()
    return 130 if got and got[0] == signal.SIGINT else 0


async def _watchdog() -> None:
    """``WATCHDOG=1`` twice per systemd watchdog interval, from the serving loop."""
    from hub.service.notify import notify, watchdog_interval_s

    interval = watchdog_interval_s()
    while interval:
        notify("WATCHDOG=1")
        await asyncio.sleep(interval / 2)
