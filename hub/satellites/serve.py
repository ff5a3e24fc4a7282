"""Serve the configured satellites: one :class:`SatelliteLink` each, on one event loop.

:func:`serve_satellites` runs until its stop event; :func:`start_satellites` hosts it on a
thread of its own inside ``hub run`` (the local microphone is one more room beside them).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor

from hub.audio.endpoint import live_endpointer
from hub.satellites.claims import WakeClaims
from hub.satellites.link import SatelliteLink
from hub.satellites.turns import SatelliteHost, SatelliteTurns
from hub.wake.detector import make_wake

log = logging.getLogger("hub.satellites")

STOP_TIMEOUT_S = 5.0
"""Longest wait for the satellites' thread to end."""
LOCAL_ROOM = "local microphone"
"""The name the local microphone of ``hub run`` claims wakes under."""


def endpointer_factory(host: SatelliteHost):
    """``() -> Endpointer``: the local microphone's (:func:`hub.audio.endpoint.live_endpointer`:
    ``[asr]`` trailing silence, longest utterance and the recognizer's final-state rule), with
    ``[wake] speech_timeout_s`` (no speech after the wake: the turn is not run)."""

    def make():
        settings = host.settings
        return live_endpointer(settings.asr, host.engines, settings.wake.speech_timeout_s)

    return make


def wake_factory(settings):
    """``() -> WakeWord | None``: the hub's wake word for satellites that stream always."""

    def make():
        if not settings.wake.enabled:
            return None
        return make_wake(settings.wake)

    return make


def build(host: SatelliteHost, *, clock=None, make_endpointer=None, make_wake=None, lines=None):
    """The turns and links of ``host.settings.satellites`` (not yet running); ``lines``: the
    trace output (``lines(dict)``; default stdout, :class:`hub.trace.LineWriter`)."""
    settings = host.settings
    executor = ThreadPoolExecutor(len(settings.satellites) + 2, thread_name_prefix="hub-sat")
    turns = SatelliteTurns(
        host,
        executor,
        make_endpointer or endpointer_factory(host),
        make_wake or wake_factory(settings),
        lines,
    )
    claims = turns.claims = WakeClaims(clock or host.clock)
    turns.links = [
        SatelliteLink(s, turns, claims, clock=clock or host.clock) for s in settings.satellites
    ]
    return turns


async def serve_satellites(
    turns, stop: asyncio.Event, ready=None, announce_timers: bool = False
) -> None:
    """Serve every link of ``turns`` until ``stop`` is set; timers ring on their satellites.
    ``announce_timers``: also write each finished timer's ``timer_finished`` line to
    ``turns.lines`` (``hub serve``; in ``hub run`` the daemon writes it)."""
    loop = asyncio.get_running_loop()

    def ring(alert) -> None:
        turns.ring(alert, loop)
        if announce_timers and not alert.repeat:
            turns.lines(alert.to_json(None))

    callback = turns.host.events.on_timer_finished(ring)
    tasks = [
        asyncio.create_task(link.run(stop), name=f"satellite {link.sat.name}")
        for link in turns.links
    ]
    log.warning(
        "serving %d satellites: %s",
        len(tasks),
        ", ".join(f"{x.sat.name} ({x.sat.area or 'no area'})" for x in turns.links),
    )
    if ready is not None:
        ready()
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        finished = getattr(turns.host.events, "_finished", [])
        if callback in finished:
            finished.remove(callback)
        turns.executor.shutdown(wait=False, cancel_futures=True)


def start_satellites(host: SatelliteHost, **kwargs):
    """Serve ``host.settings.satellites`` on a thread; returns ``(turns, stop)``: call ``stop()``
    to end it (a no-op function and None when none are configured). ``kwargs`` go to
    :func:`build` (``lines``: ``hub run``'s trace output)."""
    if not host.settings.satellites:
        return None, lambda: None
    turns = build(host, **kwargs)
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    started = threading.Event()

    def main():
        try:
            loop.run_until_complete(serve_satellites(turns, stop, started.set))
        finally:
            started.set()
            loop.close()

    thread = threading.Thread(target=main, name="hub-satellites", daemon=True)
    thread.start()
    started.wait()

    def stop_all():
        if not loop.is_closed():
            loop.call_soon_threadsafe(stop.set)
            thread.join(STOP_TIMEOUT_S)

    return turns, stop_all
