"""The Wyoming server: the package's ``AsyncServer`` classes, one :class:`HubHandler` per
connection, one shared :class:`hub.core.hub.Hub`, optional zeroconf.

Engines run on a thread pool of this server; a turn limit keeps concurrent graph turns within
the resilience runner's worker slots (:data:`hub.resilience.runner.MAX_WORKERS`), so ten clients
at once queue for the engines instead of failing, and a slow client (one that sends or reads
slowly) holds no engine while it waits on the network.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from urllib.parse import urlparse

from wyoming.server import AsyncServer

from hub.errors import ConfigError, HubError
from hub.tts.piper import voice_paths
from hub.wake.detector import WakeWord
from hub.wyoming import DEFAULT_URI  # noqa: F401 - where ``hub wyoming`` listens
from hub.wyoming.early import check_uri
from hub.wyoming.handler import HubHandler
from hub.wyoming.info import build_info
from hub.wyoming.wake import wake_models

log = logging.getLogger("hub.wyoming")


DRAIN_TIMEOUT_S = 60.0
"""After a client half-closes, longest wait for its queued requests to be answered."""

STOP_TIMEOUT_S = 5.0
"""Longest wait for the server thread of :func:`start_wyoming` to end."""


class Context:
    """What every connection of one server shares.

    Args:
        hub: the Hub whose engines answer (built with ``speak=False``: Home Assistant asks
            for speech separately).
        settings: :class:`hub.settings.WyomingSettings`.
    """

    def __init__(self, hub, settings):
        self.hub = hub
        self.idle_timeout_s = settings.idle_timeout_s
        self.drain_timeout_s = max(DRAIN_TIMEOUT_S, hub.settings.resilience.deadline_s + 5.0)
        self.wake_models: list[str] = []
        self.executor = ThreadPoolExecutor(settings.max_turns + 8, thread_name_prefix="hub-wy")
        self.connections: set[asyncio.Task] = set()
        """The running connection tasks (cancelled when the server stops)."""
        self._turns: asyncio.Semaphore | None = None
        self._max_turns = settings.max_turns
        self.refresh_info()

    def refresh_info(self, wake: bool = False) -> None:
        """Rebuild ``info`` (what ``describe`` answers) from the engines loaded now;
        ``wake``: also find the wake word models that load."""
        hub = self.hub
        if wake:
            self.wake_models = [m for m in wake_models(hub.settings.wake.model) if _wake_loads(m)]
        self.info = build_info(
            asr_engine=_loaded_name(hub, "asr"),
            voice=_voice(hub),
            wake_models=self.wake_models,
            language=hub.settings.home.language,
            handle=hub.engines.loaded("rules"),
        )

    async def run(self, fn, *args):
        """``fn(*args)`` on this server's thread pool."""
        return await asyncio.get_running_loop().run_in_executor(self.executor, partial(fn, *args))

    def turn(self) -> asyncio.Semaphore:
        """The limit on concurrent graph turns (``async with ctx.turn(): ...``)."""
        if self._turns is None:
            self._turns = asyncio.Semaphore(self._max_turns)
        return self._turns


def _wake_loads(model: str) -> bool:
    """True when the microWakeWord ``model`` loads (a broken custom model is left out)."""
    try:
        WakeWord(model)
        return True
    except HubError as exc:
        log.warning("wake word %s unavailable: %s", model, exc.message)
        return False


def _loaded_name(hub, engine: str) -> str | None:
    return getattr(hub.engines.get(engine), "name", engine) if hub.engines.loaded(engine) else None


def _voice(hub):
    if not hub.engines.loaded("tts"):
        return None

    return voice_paths(hub.settings.tts)[0]


def _warm_then_describe(ctx: Context) -> None:
    """Warm the engines (background start); ``describe`` lists each one once it is ready.

    Each engine is built on a daemon thread, so a stop during a slow model load is not held
    up by it (SIGTERM still exits at once).
    """
    hub = ctx.hub
    ctx.refresh_info(wake=True)

    def build(name: str) -> None:
        try:
            hub.engines.get(name)
        except HubError as exc:
            log.warning("%s unavailable: %s", name, exc.message)
        ctx.refresh_info()

    threads = [
        threading.Thread(target=build, args=(n,), name=f"hub-warm-{n}", daemon=True)
        for n in _warm_names(hub)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    hub.prerender()
    log.info("wyoming: engines ready (%s)", _programs(ctx.info))


def _warm_names(hub) -> list[str]:
    """The engines the server offers; the LLM when it is on for ``run``."""
    llm = ["llm"] if hub.llm_enabled("intent") or hub.llm_enabled("answer") else []
    return ["asr", "rules", "devices", "tts"] + llm


def warm(hub) -> None:
    """Load the engines the server offers (failures are logged; those parts are left out).

    The LLM's prompt cache is built here when the LLM is on for ``run``, never in a turn.
    """
    hub.engines.warm(_warm_names(hub))


async def _zeroconf(uri: str):
    """Announce ``_wyoming._tcp`` for a TCP ``uri``; None (logged) when it cannot."""
    parsed = urlparse(uri)
    if parsed.scheme != "tcp" or parsed.port is None:
        return None
    try:
        # lazy: zeroconf (about 0.3 s) loads only when announcing is on
        from wyoming.zeroconf import HomeAssistantZeroconf

        host = None if parsed.hostname in ("0.0.0.0", "::", "") else parsed.hostname
        zc = HomeAssistantZeroconf(port=parsed.port, host=host)
        await asyncio.wait_for(zc.register_server(), 5.0)
        log.info("zeroconf: announced _wyoming._tcp on port %d", parsed.port)
        return zc
    except Exception as exc:
        log.warning("zeroconf announcement failed (%s); add the hub by host and port", exc)
        return None


async def serve(
    hub,
    settings,
    uri: str,
    *,
    zeroconf: bool,
    stop: asyncio.Event | None = None,
    ready=None,
    background: bool = False,
    early=None,
) -> None:
    """Serve ``uri`` until ``stop`` is set.

    Args:
        hub: the shared Hub (engines warmed by the caller or here).
        settings: :class:`hub.settings.WyomingSettings`.
        uri: ``tcp://HOST:PORT`` or ``unix://PATH``.
        zeroconf: announce the server over mDNS (TCP only).
        stop: set it to stop; None: serve until cancelled.
        ready: called with no arguments once the socket listens.
        background: warm the engines on a thread after the socket listens (``describe``
            lists what is ready; a request before an engine is ready waits for it).
        early: ``(server, pending)`` from :func:`hub.wyoming.early.listen_early`: the socket
            already listens; its connections are handed to this hub.
    Raises:
        ConfigError: a bad URI, or the address cannot be listened on.
    """
    ctx = Context(hub, settings)
    if not background:
        ctx.refresh_info(wake=True)
    if early is None:
        server = await _listen(ctx, uri)
    else:
        server, pending = early
        pending.ctx = ctx
        pending.ready.set()
    if background:  # engines still warming: say so, "engines ready" follows
        log.info("wyoming server listening on %s (engines loading)", uri)
    else:
        log.info("wyoming server listening on %s (%s)", uri, _programs(ctx.info))
    zc = await _zeroconf(uri) if zeroconf else None
    if ready is not None:
        ready()
    if background:
        threading.Thread(
            target=_warm_then_describe, args=(ctx,), name="hub-warm", daemon=True
        ).start()
    try:
        await (stop or asyncio.Event()).wait()
    finally:
        await server.stop()
        for task in list(ctx.connections):
            task.cancel()
        await asyncio.gather(*ctx.connections, return_exceptions=True)
        if zc is not None:
            with contextlib.suppress(Exception):
                await zc._aiozc.async_close()  # the package offers no public close
        ctx.executor.shutdown(wait=False, cancel_futures=True)


async def _listen(ctx: Context, uri: str) -> AsyncServer:
    server = AsyncServer.from_uri(check_uri(uri))
    try:
        await server.start(partial(HubHandler, ctx))
    except OSError as exc:
        raise ConfigError(f"wyoming.uri: cannot listen on {uri}: {exc.strerror or exc}") from None
    return server


def _programs(info) -> str:
    parts = [name for name in ("asr", "tts", "wake", "handle") if getattr(info, name)]
    return ", ".join(parts) or "no programs"


def start_wyoming(hub, settings):
    """Host the Wyoming server of ``settings.wyoming`` inside another command (``hub run``).

    Returns a function that stops it (a no-op when ``settings.wyoming.uri`` is empty).
    The server runs on its own thread and event loop and shares ``hub``'s engines.

    Raises:
        ConfigError: a bad ``wyoming.uri`` or an address that cannot be listened on.
    """
    cfg = settings.wyoming
    if not cfg.uri:
        return lambda: None
    check_uri(cfg.uri)
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    started, failed = threading.Event(), []

    def main():
        try:
            loop.run_until_complete(
                serve(hub, cfg, cfg.uri, zeroconf=cfg.zeroconf, stop=stop, ready=started.set)
            )
        except HubError as exc:
            failed.append(exc)
        finally:
            started.set()
            loop.close()

    thread = threading.Thread(target=main, name="hub-wyoming", daemon=True)
    thread.start()
    started.wait()
    if failed:
        raise failed[0]

    def stop_server():
        if loop.is_closed():
            return
        loop.call_soon_threadsafe(stop.set)
        thread.join(STOP_TIMEOUT_S)

    return stop_server
