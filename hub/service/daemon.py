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
import logging
import os
import queue
import signal
import sys

from hub.service.notify import notify

log = logging.getLogger("hub.service.daemon")

EXIT_CODES = {signal.SIGTERM: 0, signal.SIGINT: 130}
"""Exit code after each stopping signal."""


def _endpointer_factory(supervisor_ref: list):
    """``make(start_timeout_s)``: an Endpointer from the current hub's ``[asr]`` settings."""
    from hub.audio.endpoint import Endpointer

    def make(start_timeout_s):
        asr = supervisor_ref[0].hub.settings.asr
        return Endpointer(asr.trailing_silence_ms, asr.max_utterance_s, 16000,
                          start_timeout_s=start_timeout_s)

    return make


def build_supervisor(hub, *, no_wake: bool = False, open_mic=None, player=None):
    """The supervisor of ``hub`` with its microphone, speaker, detectors and echo check.

    ``open_mic(sleep=...)`` and ``player`` replace the real devices (tests).

    Raises:
        hub.errors.ConfigError: a wake or stop model that cannot be loaded.
        hub.errors.DeviceUnavailableError: PortAudio itself cannot be loaded.
    """
    from hub.audio.mic import open_mic as real_open_mic
    from hub.audio.player import make_player
    from hub.service.capture import Capture
    from hub.service.echo import EchoGate
    from hub.service.speaker import Speaker
    from hub.service.supervisor import Supervisor
    from hub.wake.detector import make_wake

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
    capture = Capture(opener, on_waiting=lambda waiting: ref[0].on_waiting(waiting),
                      on_open=lambda: ref[0].on_open())
    device = repr(settings.audio.input_device) if settings.audio.input_device else "default"
    sup = Supervisor(hub, capture, speaker, wake, _endpointer_factory(ref), gate,
                     stop_word=stop_word, device=device)
    ref.append(sup)
    return sup


def ring_timers(hub, speaker) -> None:
    """Play each timer ring (chime + "Your 5 minute timer is done.") on ``speaker`` and print
    its event line; a "stop" (``on_timer_stopped``) cuts the ringing short."""
    import json

    from hub.audio.pcm import AudioChunk

    def ring(alert) -> None:
        if alert.pcm:
            speaker.say(AudioChunk(pcm=alert.pcm, rate=alert.rate, text=alert.text))
        if not alert.repeat:
            sys.stdout.write(json.dumps(alert.to_json(None), ensure_ascii=False) + "\n")
            sys.stdout.flush()

    hub.events.on_timer_finished(ring)
    hub.events.on_timer_stopped(lambda info: speaker.cancel())
    hub.events.start()


def run_daemon(args) -> int:
    """Run until a signal (see the module doc); returns the exit code.

    Raises:
        hub.errors.DeviceUnavailableError: the microphone never opened, or did not come back
            within ``[audio] device_wait_s`` (``hub`` exits with 4).
    """
    from hub.core.replay import make_hub
    from hub.service.watchdog import Watchdog
    from hub.wyoming.server import start_wyoming

    notify("STATUS=loading models")
    hub = make_hub(args, "run", speak=True)
    llm = hub.settings.llm  # the LLM's prompt cache is built here, never inside a turn's deadline
    hub.engines.warm(["asr", "rules", "tts", "devices"]
                     + (["llm"] if "run" in llm.intents_on or "run" in llm.answers_on else []))
    sup = build_supervisor(hub, no_wake=args.no_wake)
    ring_timers(hub, sup.speaker)
    signals: queue.Queue = queue.Queue()
    previous = {s: signal.signal(s, lambda signum, frame: signals.put(signum))
                for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    watchdog = Watchdog(lambda: [sup.capture.beat, sup.beat])
    sup.start()
    watchdog.start()
    stop_wyoming = start_wyoming(hub, hub.settings)  # [wyoming] uri: Home Assistant, same engines
    try:
        code = _serve(sup, signals, args)
    finally:
        stop_wyoming()
        clean = sup.stop()
        watchdog.stop()
        _close_store(sup.hub.store)
        for s, handler in previous.items():
            signal.signal(s, handler)
    return _finish(sup, code, clean)


def _serve(sup, signals: queue.Queue, args) -> int | None:
    """Handle signals until one stops the daemon (its exit code) or capture gives up (None)."""
    from hub.service.reload import reload_hub

    while True:
        try:
            signum = signals.get(timeout=0.5)
        except queue.Empty:
            if sup.wait(0):
                return None
            continue
        if signum == signal.SIGHUP:
            notify("RELOADING=1\nSTATUS=reloading the config")
            new = reload_hub(sup.hub, args)
            if new is not None:
                sup.hub.events.close()  # the new hub restores the timers from the store
                sup.swap_hub(new)
                ring_timers(new, sup.speaker)
                sup.gate.threshold = new.settings.wake.echo_correlation
                sup.gate.tail_s = new.settings.wake.tail_guard_s
            notify(f"READY=1\nSTATUS={sup.state.value}")
            continue
        log.warning("stopped by %s", signal.Signals(signum).name)
        return EXIT_CODES[signum]


def _close_store(store) -> None:
    """Checkpoint the WAL into the database file and close this thread's connection."""
    if store is None:
        return
    try:
        store.pragma("wal_checkpoint(TRUNCATE)")
        store.close()
    except Exception as exc:  # noqa: BLE001 - a broken store must not turn a stop into a crash
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
    log.info("stopped: %d turns, %d barge-ins, %d echo detections ignored, %d blocks dropped",
             sup.turns, sup.barge_ins, sup.echoes_ignored, sup.capture.dropped)
    if not clean:
        log.warning("a thread did not stop in time; leaving without tearing PortAudio down")
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code
