"""``hub run``: the daemon. Microphone -> wake word -> utterance -> turn -> speaker.

:func:`run_daemon` builds the parts, hands them to the
:class:`~hub.service.supervisor.Supervisor` and then only handles signals on the main
thread: SIGTERM -> exit 0, SIGINT -> exit 130, both after an ordered shutdown (playback,
capture, listener, turn worker; the store's WAL checkpointed); SIGHUP -> reload the config
(:mod:`hub.service.reload`). When the microphone stays unavailable for ``[audio]
device_wait_s``, the daemon exits with code 4 and systemd's ``Restart=`` takes over.
One JSON trace line per turn goes to stdout; the same trace goes to the journal.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import queue
import signal
import sys
from collections.abc import Callable

from hub.audio.endpoint import Endpointer, live_endpointer
from hub.audio.mic import open_mic as real_open_mic
from hub.audio.pcm import AudioChunk
from hub.audio.player import make_player
from hub.core.hub import Hub
from hub.satellites.serve import LOCAL_ROOM, start_satellites
from hub.service.capture import Capture
from hub.service.echo import EchoGate
from hub.service.notify import StatusLine, degraded_parts, loading, notify
from hub.service.reload import reload_hub
from hub.service.speaker import Speaker
from hub.service.stopword import StopListener, StopRecognizer
from hub.service.supervisor import State, Supervisor
from hub.service.watchdog import Watchdog
from hub.settings import Settings
from hub.store.retention import finish
from hub.trace import LineWriter
from hub.wake.detector import make_wake
from hub.wyoming.server import start_wyoming

log = logging.getLogger("hub.service.daemon")

EXIT_CODES = {signal.SIGTERM: 0, signal.SIGINT: 130}
"""Exit code after each stopping signal."""


def _endpointer_factory(supervisor_ref: list):
    """``make(start_timeout_s)``: an Endpointer from the current hub's ``[asr]`` settings."""

    def make(start_timeout_s):
        hub = supervisor_ref[0].hub
        return live_endpointer(hub.settings.asr, getattr(hub, "engines", None), start_timeout_s)

    return make


def build_supervisor(hub, *, no_wake: bool = False, open_mic=None, player=None):
    """The supervisor of ``hub`` with its microphone, speaker, detectors and echo check.

    ``open_mic(sleep=...)`` and ``player`` replace the real devices (tests).

    Raises:
        hub.errors.ConfigError: a wake or stop model that cannot be loaded.
        hub.errors.DeviceUnavailableError: PortAudio itself cannot be loaded.
    """
    settings = hub.settings
    wake = None if no_wake or not settings.wake.enabled else make_wake(settings.wake)
    stop_word = None
    if settings.wake.stop_model:
        stop_word = make_wake(dataclasses.replace(settings.wake, model=settings.wake.stop_model))
    gate = EchoGate(settings.wake.echo_correlation, settings.wake.tail_guard_s)
    speaker = Speaker(player if player is not None else make_player(settings.audio), gate)
    hub.conversation().player = speaker
    ref: list = []
    opener = open_mic or (lambda sleep: real_open_mic(settings.audio, sleep=sleep))
    capture = Capture(
        opener,
        on_waiting=lambda waiting: ref[0].on_waiting(waiting),
        on_open=lambda: ref[0].on_open(),
    )
    device = repr(settings.audio.input_device) if settings.audio.input_device else "default"
    sup = Supervisor(
        hub,
        capture,
        speaker,
        wake,
        _endpointer_factory(ref),
        gate,
        stop_word=stop_word,
        device=device,
    )
    ref.append(sup)
    sup.stopper = _stop_listener(hub, sup, gate)
    return sup


def _stop_listener(hub, sup, gate):
    """The stop-word listener on the hub's PocketSphinx decoder, or None when the recognizer
    is another (its grammar search lives in that decoder)."""
    engines = getattr(hub, "engines", None)
    engine = engines.asr() if engines is not None else None
    if getattr(engine, "passes", None) is None or getattr(engine, "vocab", None) is None:
        return None
    return StopListener(
        lambda ms, cap: Endpointer(ms, cap, 16000, preroll_s=0.3),
        StopRecognizer(engine),
        sup.over.on_heard,
        gate.is_echo,
        hold=sup.speaker.hold,
        release=sup.speaker.release,
        detail=gate.detail,
        replies=sup.over.replies,
    )


def ring_timers(hub, speaker, lines: Callable[[dict], None] | None = None) -> None:
    """Play each timer ring (chime + "Your 5 minute timer is done.") on ``speaker`` (unless it
    was set in a satellite's area: it rings there) and print its event line with ``lines``
    (the trace output; default a :class:`hub.trace.LineWriter` on stdout); a "stop"
    (``on_timer_stopped``) cuts the ringing short."""
    elsewhere = {x.area for x in getattr(hub.settings, "satellites", ())} - {
        getattr(getattr(hub, "home", None), "satellite_area", "")
    }
    emit = lines if lines is not None else LineWriter()

    def ring(alert) -> None:
        if alert.pcm and alert.timer.area not in elsewhere:  # a satellite's timer rings there
            speaker.say(AudioChunk(pcm=alert.pcm, rate=alert.rate, text=alert.text))
        if not alert.repeat:
            emit(alert.to_json(None))

    hub.events.on_timer_finished(ring)
    hub.events.on_timer_stopped(lambda info: speaker.cancel())
    hub.events.start()


def run_daemon(args, make_hub: Callable[..., Hub], settings_of: Callable[[], Settings]) -> int:
    """Run until a signal (see the module doc); returns the exit code.

    Args:
        args: ``hub run``'s arguments (``no_wake``, ``inject``).
        make_hub: ``make_hub(args, "run", speak=True)`` builds the daemon's
            :class:`~hub.core.hub.Hub` (:func:`hub.cli.args.make_hub`).
        settings_of: reads the settings again, for a reload on SIGHUP.

    Raises:
        hub.errors.DeviceUnavailableError: the microphone never opened, or did not come back
            within ``[audio] device_wait_s`` (``hub`` exits with 4).
    """
    hub, names = load_hub(args, make_hub)
    sup = build_supervisor(hub, no_wake=args.no_wake)
    sup.status = StatusLine(lambda: degraded_of(sup.hub, names))
    ring_timers(hub, sup.speaker, sup.lines)
    signals: queue.Queue = queue.Queue()
    previous = {
        s: signal.signal(s, lambda signum, frame: signals.put(signum))
        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
    }
    watchdog = Watchdog(lambda: [sup.capture.beat, sup.beat])
    sup.start()
    prerender = [start_prerender(sup)]
    watchdog.start()
    stop_wyoming = start_wyoming(hub, hub.settings)  # [wyoming] uri: Home Assistant, same engines
    # [[satellites]]: more rooms, same engines; their lines through the supervisor's writer
    turns, stop_satellites = start_satellites(hub, lines=sup.lines)
    if turns is not None:  # the local microphone takes part in the house-wide wake claim
        sup.claim = functools.partial(turns.claims.claim, LOCAL_ROOM)
    try:
        code = _serve(
            sup,
            signals,
            lambda old: reload_hub(old, settings_of, getattr(args, "inject", ())),
            prerender,
        )
    finally:
        for job in filter(None, prerender):
            job.stop()
        stop_satellites()
        stop_wyoming()
        clean = sup.stop()
        watchdog.stop()
        _close_store(sup.hub.store)
        for s, handler in previous.items():
            signal.signal(s, handler)
    return _finish(sup, code, clean)


def start_prerender(sup):
    """Start the hub's pre-render of likely answers (:meth:`hub.core.hub.Hub.prerender_answers`),
    rendering only while the daemon listens for the wake word and plays nothing."""
    return sup.hub.prerender_answers(
        lambda: sup.state is not State.LISTENING or sup.speaker.playing
    )


def load_hub(args, make_hub: Callable[..., Hub]) -> tuple[Hub, list[str]]:
    """``make_hub(args, "run", speak=True)`` and its engines warmed, while systemd is sent
    ``EXTEND_TIMEOUT_USEC`` (a slow SD card, a first grammar build: :func:`loading`).
    Returns the hub and the names of the engines warmed. The LLM's prompt cache is built
    here, never inside a turn's deadline."""
    with loading("models", until_ready=True):  # also while it waits for the microphone
        hub = make_hub(args, "run", speak=True)
        llm = hub.settings.llm
        names = ["asr", "rules", "tts", "devices"] + (
            ["llm"] if "run" in llm.intents_on or "run" in llm.answers_on else []
        )
        hub.engines.warm(names)
    return hub, names


def degraded_of(hub, names) -> list[str]:
    """What is degraded now among the engines ``names`` of ``hub`` (``STATUS=``)."""
    engines = hub.engines
    devices = engines.devices() if engines.loaded("devices") else None
    return degraded_parts(engines.loaded, names, devices)


def _serve(
    sup, signals: queue.Queue, reload: Callable[[Hub], Hub | None], prerender: list
) -> int | None:
    """Handle signals until one stops the daemon (its exit code) or capture gives up (None).

    ``reload(old_hub)``: the new hub on SIGHUP, or None to keep the running one; a new hub's
    pre-render pass is appended to ``prerender``.
    """
    while True:
        try:
            signum = signals.get(timeout=0.5)
        except queue.Empty:
            if sup.wait(0):
                return None
            sup.status.update()  # MQTT, Home Assistant or a model came or went
            continue
        if signum == signal.SIGHUP:
            notify("RELOADING=1\nSTATUS=reloading the config")
            with loading("the new config"):  # a changed home may rebuild the speech grammar
                new = reload(sup.hub)
            if new is not None:
                sup.hub.events.close()  # the new hub restores the timers from the store
                sup.swap_hub(new)
                for job in filter(None, prerender):
                    job.stop()
                prerender.append(start_prerender(sup))  # the new home's answers
                sup.stopper = _stop_listener(new, sup, sup.gate)  # the new recognizer's decoder
                ring_timers(new, sup.speaker, sup.lines)
                sup.gate.threshold = new.settings.wake.echo_correlation
                sup.gate.tail_s = new.settings.wake.tail_guard_s
            notify(f"READY=1\nSTATUS={sup.state.value}")
            continue
        log.info("stopped by %s", signal.Signals(signum).name)
        return EXIT_CODES[signum]


def _close_store(store) -> None:
    """Checkpoint the WAL into the database file, record the row counts and close this
    thread's connection (:func:`hub.store.retention.finish`, as every command at its end)."""
    if store is None:
        return
    try:
        finish(store)
    except Exception as exc:
        log.warning("store not checkpointed at stop: %s", exc)


def _finish(sup, code: int | None, clean: bool) -> int:
    """The exit code; raises the capture's error when it ended the daemon.

    When a thread is still blocked inside PortAudio, the process leaves with ``os._exit``
    after flushing, because tearing PortAudio down under a blocked read crashes.
    """
    if code is None:
        if sup.capture.error is not None:
            raise sup.capture.error
        code = 1
    log.info(
        "stopped: %d turns, %d barge-ins, %d echo detections ignored, %d blocks dropped",
        sup.turns,
        sup.barge_ins,
        sup.echoes_ignored,
        sup.capture.dropped,
    )
    if not clean:
        log.warning("a thread did not stop in time; leaving without tearing PortAudio down")
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code
