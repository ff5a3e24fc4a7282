"""The daemon's supervisor: one state enum, one owner per resource, an ordered shutdown.

Threads, each with one job (style.md 4):

- capture (:class:`hub.service.capture.Capture`): the only thread touching the input stream;
- listener (:meth:`Supervisor._listen`): wake word, stop word and endpointing on every block,
  all the time, also while the hub answers (full duplex: barge-in);
- turn worker (:meth:`Supervisor._turns`): one turn at a time through the hub, then waits
  for the answer to be played before follow-up listening may open;
- speaker (:class:`hub.service.speaker.Speaker`): playback, cancellable;
- watchdog (:class:`hub.service.watchdog.Watchdog`): ``WATCHDOG=1`` at half of
  ``$WATCHDOG_USEC`` while capture and listener beat.

The main thread only handles signals (:func:`hub.service.daemon.run_daemon`): SIGTERM and
SIGINT call :meth:`Supervisor.stop`, SIGHUP :meth:`Supervisor.swap_hub`.

A capture is never dropped without a trace line saying why; one a wake word interrupts is
held until the wake word's end is told from its command (:mod:`hub.service.held`), a reply
said over playback acted on (``overlap``).
"""

from __future__ import annotations

import enum
import logging
import queue
import threading
import time
from collections.abc import Callable

from hub.audio.format import RATE
from hub.service.held import WAKE_GRACE_S, decide, interrupt
from hub.service.notify import StatusLine, notify, ready
from hub.service.overlap import OverPlayback
from hub.service.stopword import stop_armed
from hub.trace import DROP_REASONS, LineWriter, capture_line

log = logging.getLogger("hub.service.supervisor")

JOIN_S = 2.0
"""How long a stop waits for each thread."""


class State(enum.Enum):
    """What the daemon is doing; shown in systemd's STATUS= and the log."""

    STARTING = "starting"
    LISTENING = "listening"
    CAPTURING = "capturing"
    ANSWERING = "answering"
    WAITING_FOR_DEVICE = "waiting for device"
    STOPPING = "stopping"


class Supervisor:
    """Runs the daemon's threads around one :class:`hub.core.hub.Hub`.

    Args:
        hub: the orchestrator; replaced by :meth:`swap_hub` on reload.
        capture: the microphone owner (not started yet).
        speaker: the playback owner; it is the hub's conversation player.
        wake: the wake word detector (``process(block) -> bool``, ``reset()``), or None to
            take every utterance the VAD hears.
        make_endpointer: ``make_endpointer(start_timeout_s)`` -> an Endpointer.
        gate: the echo check (:class:`hub.service.echo.EchoGate`).
        stop_word: a second detector that only stops playback, or None.
        device: the configured input device's label, for STATUS lines.
        out: where trace lines go (default stdout); :attr:`lines` writes them.
    """

    def __init__(
        self,
        hub,
        capture,
        speaker,
        wake,
        make_endpointer: Callable,
        gate,
        *,
        stop_word=None,
        device: str = "default",
        out=None,
    ):
        self.hub, self.capture, self.speaker, self.wake = hub, capture, speaker, wake
        self.gate, self.stop_word, self.device = gate, stop_word, device
        self.over = OverPlayback(
            lambda: self.hub, speaker, self._queue_over, lambda x: self.lines(x), self._count_barge
        )
        """What a phrase heard over playback does (:mod:`hub.service.overlap`)."""
        self.stopper = None
        """The :class:`hub.service.stopword.StopListener` heard while the hub plays or a timer
        or alarm rings (also between its rings), or None."""
        self.claim: Callable[[float], bool] = lambda at: True
        """``claim(read_at) -> bool``: the house-wide wake claim (satellites); False: another
        room heard this wake first (a duplicate: no barge-in, no turn)."""
        self._make_endpointer = make_endpointer
        self.lines = LineWriter(out)
        """The trace output (one line at a time): the satellites of ``hub run`` and the stop
        listener write their lines through it too."""
        self._kind = "wake"  # what opened the listener's capture: wake, followup, always
        self._held: tuple | None = None
        """(endpointer, kind, its seen_s at the wake) of the capture held, or None."""
        self._state = State.STARTING
        self.status = StatusLine(lambda: [])  # hub run sets one that names what is degraded
        self._state_lock = threading.Lock()
        self._utterances: queue.Queue = queue.Queue()
        self._followup = threading.Event()
        self._stopped = threading.Event()
        self._threads: list[threading.Thread] = []
        self.beat = time.monotonic()
        """Monotonic time the listener last processed a block or idled."""
        self.turns = 0
        """Turns answered so far."""
        self.echoes_ignored = 0
        """Wake/stop detections judged to be the hub's own echo."""
        self.barge_ins = 0
        """Answers cut off by the wake word or the stop word."""

    # -- state -------------------------------------------------------------------------------
    @property
    def state(self) -> State:
        """The current :class:`State`."""
        return self._state

    def set_state(self, state: State) -> None:
        """Enter ``state``: logged and sent to systemd as ``STATUS=``."""
        with self._state_lock:
            if state is self._state or self._state is State.STOPPING:
                return
            self._state = state
        detail = f" {self.device}…" if state is State.WAITING_FOR_DEVICE else ""
        log.info("state: %s%s", state.value, detail)
        self.status.update(f"{'waiting for audio device' if detail else state.value}{detail}")

    def on_waiting(self, waiting: bool) -> None:
        """Capture's callback: the device is missing (True) or delivering again (False)."""
        if waiting:
            self.set_state(State.WAITING_FOR_DEVICE)
        elif self._state is State.WAITING_FOR_DEVICE:
            self.set_state(State.ANSWERING if self.speaker.playing else State.LISTENING)

    def on_open(self) -> None:
        """Capture's callback: the microphone opened for the first time (READY=1)."""
        self.set_state(State.LISTENING)
        ready(self.status.line())  # READY=1 once per process

    # -- start and stop ----------------------------------------------------------------------
    def start(self) -> None:
        """Start capture, listener and turn worker; READY=1 once the microphone is open."""
        self.capture.start()
        for target, name in ((self._listen, "hub-listen"), (self._turns, "hub-turns")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def wait(self, timeout_s: float | None = None) -> bool:
        """Wait until the daemon ended by itself (capture gave up); True when it did."""
        return self._stopped.wait(timeout_s)

    def stop(self) -> bool:
        """Ordered shutdown: playback, capture, listener, turn worker; True when all joined.

        A turn in progress gets its deadline to finish (an action is never cut in half).
        """
        with self._state_lock:
            self._state = State.STOPPING
        notify("STOPPING=1\nSTATUS=stopping")
        log.info("state: stopping")
        self._stopped.set()
        self.speaker.cancel()
        late = [] if self.capture.stop(JOIN_S) else ["hub-capture"]
        self._utterances.put(None)
        deadline_s = self.hub.settings.resilience.deadline_s
        for thread in self._threads:
            thread.join(deadline_s + JOIN_S if thread.name == "hub-turns" else JOIN_S)
            late += [thread.name] if thread.is_alive() else []
        self.speaker.cancel()
        late += [] if self.speaker.wait(JOIN_S) else ["hub-speaker"]
        if late:
            log.warning("not stopped in time: %s", ", ".join(late))
        return not late

    def swap_hub(self, hub) -> None:
        """Use ``hub`` from the next turn on (SIGHUP reload); the turn in progress keeps its own."""
        hub.conversation().player = self.speaker
        self.hub = hub

    # -- the listener ------------------------------------------------------------------------
    def _listen(self) -> None:
        endpointer = None
        listening_for_wake = self.wake is not None
        if not listening_for_wake:
            endpointer, self._kind = self._make_endpointer(None), "always"
        while True:
            try:
                block = self.capture.blocks.get(timeout=0.5)
            except queue.Empty:
                self.beat = time.monotonic()
                if self._stopped.is_set():  # capture may still be ending: stop anyway
                    break
                continue
            self.beat = time.monotonic()
            if block is None:
                break
            read_at, audio = block
            endpointer = self._step(read_at, audio, endpointer)
        why = "stopping" if self._stopped.is_set() else "input_ended"
        if self._held is not None:
            self._dropped(why, self._held[0], self._held[1])
            self._held = None
        if endpointer is not None and endpointer.speech:
            self._dropped(why, endpointer, self._kind)
        if self.capture.error is not None:  # the device never came back: hub exits with 4
            self._stopped.set()

    def _step(self, read_at, block, endpointer):
        """One block (read at ``read_at``) through the listener; returns the endpointer open.

        The wake word detector hears every block (also during a follow-up capture: a wake
        word there starts a new command, issue 18), so it is never lost after a failed or
        empty follow-up, a barge-in or a ring. A capture it interrupts is held or dropped
        with a trace line (:meth:`_interrupted`), never lost silently.
        """
        self.gate.heard(block, at=read_at)
        late = self.over.late_reply()
        if late is not None:  # said over the question's end: the window's turn (overlap.py)
            self._followup.clear()
            self._utterances.put((late, "silence", read_at, "followup"))
            if endpointer is not None and self._kind == "followup":
                return None  # the window this reply answers
        if endpointer is None and self._followup.is_set():
            self._followup.clear()
            log.info(
                "follow-up: listening %g s without the wake word", self.hub.settings.wake.followup_s
            )
            self.set_state(State.CAPTURING)
            endpointer = self._make_endpointer(self.hub.settings.wake.followup_s)
            self._kind = "followup"
            begun = self.stopper.take() if self.stopper is not None else None
            if begun is not None and not self.gate.is_echo(begun.size / 16000):  # a reply begun
                endpointer.push(begun)
        woke = self._detected(block, only_stop=False, at=read_at)
        if woke:
            if endpointer is not None:
                log.info("wake word during a capture: listening for a new command")
                self._interrupted(endpointer, block)
            self.set_state(State.CAPTURING)
            if self.stopper is not None:
                self.stopper.reset()
            self.hub.on_wake()  # the command's turn readied while it is spoken
            self._kind = "wake"
            return self._make_endpointer(self.hub.settings.wake.speech_timeout_s)
        if endpointer is None:
            if self.stopper is not None:  # to the end of an utterance begun while it played
                self.stopper.hear(block, stop_armed(self.hub, self.speaker))
            return None
        ended = endpointer.push(block)
        if self._held is not None:
            going_on = self._held_step(self._held, block, endpointer, ended)
            if going_on is not endpointer:  # the held capture decided the new one's fate
                return going_on
        if not ended:
            return endpointer
        self._utterance(endpointer, read_at, self._kind)
        return None if self.wake is not None else self._make_endpointer(None)

    def _interrupted(self, endpointer, block) -> None:
        """The wake word was heard during ``endpointer``'s capture: :func:`hub.service.held.
        interrupt` says what is dropped (a trace line each) and what is held."""
        dropped, self._held = interrupt(self._held, endpointer, block, self._kind)
        for capture, kind in dropped:
            self._dropped("wake_word", capture, kind)

    def _held_step(self, holding: tuple, block, endpointer, ended: bool):
        """Feed ``block`` to the held capture (``holding``: :attr:`_held`) and act on
        :func:`hub.service.held.decide`; returns the capture to go on with: ``endpointer``
        itself or a new one. The held capture was the wake word: it is never a turn."""
        held, kind, _mark = holding
        verdict = decide(holding, block, endpointer, ended)
        if verdict == "wait":
            return endpointer
        if verdict == "reopen" and not held.ended:
            return self._reopen(endpointer)
        self._held = None
        self._dropped("wake_word", held, kind)
        if verdict == "command":
            return endpointer
        if verdict == "reopen":
            return self._reopen(endpointer)
        if not ended:
            log.info(
                "the held capture was the wake word: listening %.1f s more for its command",
                max(0.0, self.hub.settings.wake.speech_timeout_s - endpointer.seen_s),
            )
        return endpointer

    def _reopen(self, endpointer):
        """A fresh capture for the wake word's command in place of ``endpointer`` (which
        heard nothing of its own), with what is left of ``speech_timeout_s``."""
        left = max(WAKE_GRACE_S, self.hub.settings.wake.speech_timeout_s - endpointer.seen_s)
        self._kind = "wake"
        return self._make_endpointer(left)

    def _detected(self, block, *, only_stop: bool, at: float = 0.0) -> bool:
        """Run the wake (unless ``only_stop``) and stop detectors; True when a detection that
        is not echo should open a new utterance. Barge-in: any real detection stops playback."""
        woke = not only_stop and self.wake is not None and self.wake.process(block)
        stopped = (
            self.stop_word is not None and self.speaker.playing and self.stop_word.process(block)
        )
        if not (woke or stopped):
            return False
        for detector in (self.wake, self.stop_word):
            if detector is not None:
                detector.reset()
        if self.gate.is_echo():
            self.echoes_ignored += 1
            log.info(
                "wake/stop word in the hub's own playback ignored (%d so far; %s)",
                self.echoes_ignored,
                self.gate.detail(),
            )
            return False
        if woke and not self.claim(at):
            log.info("wake word: another room heard it first (duplicate)")
            return False
        if self.speaker.cancel():
            self.barge_ins += 1
            log.info("barge-in: playback stopped by the %s", "wake word" if woke else "stop word")
        return woke

    def _queue_over(self, audio, capture: str) -> None:  # said over playback (overlap.py)
        log.info("utterance of %.2f s (heard over playback: %s)", audio.size / RATE, capture)
        self.set_state(State.ANSWERING)
        self._utterances.put((audio, "silence", time.monotonic(), capture))

    def _count_barge(self) -> None:
        self.barge_ins += 1

    def _dropped(self, reason: str, endpointer=None, kind: str = "wake", **extra) -> None:
        """A capture ends without a turn: one ``capture_dropped`` event line saying why
        (``reason``: a key of :data:`DROP_REASONS`; ``kind``: wake, followup or always;
        ``extra``: more fields, e.g. ``error``) and a log line."""
        line = capture_line(reason, endpointer, kind, **extra)
        log.info("capture dropped (%s): %s", reason, DROP_REASONS.get(reason, reason))
        self.lines(line)

    def _utterance(self, endpointer, read_at: float, kind: str) -> None:
        """The capture ended: its audio is queued as a turn, or (no speech) dropped with a
        trace line."""
        audio = endpointer.audio()
        reason = endpointer.reason
        if audio.size:
            log.info("utterance of %.2f s (endpoint: %s)", audio.size / RATE, reason)
            self.set_state(State.ANSWERING)
            self._utterances.put((audio, reason, read_at, kind))
        else:
            log.info("no speech (%s); waiting for the wake word", reason)
            self._dropped("no_speech", endpointer, kind)
            self.set_state(State.ANSWERING if self.speaker.playing else State.LISTENING)

    # -- the turn worker ---------------------------------------------------------------------
    def _turns(self) -> None:
        while (item := self._utterances.get()) is not None:
            samples, reason, _ended_at, capture = item
            hub = self.hub
            self.speaker.start_turn()
            result, cuts = None, self.speaker.cancelled
            try:
                result = hub.answer_audio(samples, file=None)
            except Exception as exc:  # one failed turn must not end the daemon
                log.error("turn failed: %s: %s", type(exc).__name__, exc)
                self._dropped(
                    "turn_failed",
                    kind=capture,
                    endpoint=reason,
                    audio_s=round(len(samples) / RATE, 2),
                    error=f"{type(exc).__name__}: {exc}",
                )
            finally:
                self.speaker.finish(result.pcm if result else None, result.rate if result else None)
            if result is not None:
                self.turns += 1
                result.trace["endpoint"] = reason  # silence / cap: what ended the utterance
                result.trace["capture"] = capture  # wake, followup, always, over_*
                self.lines(result.trace)
            self.speaker.wait()  # follow-up opens only after the last block was handed over
            if self._stopped.is_set():
                continue
            if (  # a question cut short (barge-in) or already answered over it: no window
                result is not None
                and hub.conversation().awaiting_answer
                and hub.settings.wake.followup_s > 0
                and self.speaker.cancelled == cuts
                and self._utterances.empty()
            ):
                self._followup.set()
            if self._utterances.empty():
                self.set_state(State.LISTENING)
