"""``hub run``: the daemon. Microphone -> wake word -> utterance -> turn -> speaker.

The microphone (:mod:`hub.audio.mic`) reopens a failed device by name with back-off; the
listening loop (:mod:`hub.service.listen`) tells systemd it is ready and alive. Answers are played sentence by sentence as TTS makes them.
One JSON trace line per turn goes to stdout; the same trace goes to the journal.
"""

from __future__ import annotations

import json
import signal
import logging
import queue
import sys
import threading

from hub.errors import HubError
from hub.service.notify import notify

log = logging.getLogger("hub.service.daemon")


class Speaker:
    """Plays each turn's sentences as they are synthesized, on a thread of its own.

    Args:
        player: a :class:`hub.audio.player.Player` (``play(iterable of AudioChunk)``).
    """

    def __init__(self, player):
        self._player = player
        self._queue: queue.Queue | None = None
        self._thread: threading.Thread | None = None
        self._pushed = False

    def start_turn(self) -> None:
        """Open a turn: chunks enqueued from now on play in order."""
        self._queue, self._pushed = queue.Queue(), False
        self._thread = threading.Thread(target=self._play, args=(self._queue,),
                                        name="hub-speaker", daemon=True)
        self._thread.start()

    def _play(self, q: queue.Queue) -> None:
        try:
            self._player.play(iter(q.get, None))
        except HubError as exc:
            log.warning("playback failed: %s", exc.message)

    def enqueue(self, chunk) -> None:
        """Play ``chunk`` (an AudioChunk) after those before it."""
        if self._queue is not None:
            self._pushed = True
            self._queue.put(chunk)

    def end_turn(self, pcm: bytes | None, rate: int | None, timeout_s: float = 60.0) -> None:
        """Close the turn; play ``pcm`` (cached or placeholder audio) when TTS streamed nothing."""
        from hub.audio.pcm import AudioChunk

        if self._queue is None:
            return
        if not self._pushed and pcm and rate:
            self._queue.put(AudioChunk(pcm=pcm, rate=rate, text=""))
        self._queue.put(None)
        waited = 0.0
        while self._thread is not None and self._thread.is_alive() and waited < timeout_s:
            self._thread.join(1.0)
            waited += 1.0
            notify("WATCHDOG=1")  # a long answer is playing: the daemon is alive
        self._queue = None


def run_daemon(args) -> int:
    """Run until interrupted.

    The microphone reopens a failed device by name by itself; when it stays unavailable for
    ``[audio] device_wait_s``, DeviceUnavailableError ends the daemon with exit code 4, and
    systemd's ``Restart=on-failure`` takes over.
    """
    from hub.service.listen import listen
    from hub.audio.mic import open_mic
    from hub.audio.player import make_player
    from hub.core.replay import make_hub
    from hub.wake.detector import make_wake
    from hub.wyoming.server import start_wyoming

    hub = make_hub(args, "run", speak=True)
    settings = hub.settings
    llm = settings.llm  # the LLM's prompt cache is built here, never inside a turn's deadline
    hub.engines.warm(["asr", "rules", "tts", "devices"]
                     + (["llm"] if "run" in llm.intents_on or "run" in llm.answers_on else []))
    wake = None if args.no_wake or not settings.wake.enabled else make_wake(settings.wake)
    speaker = Speaker(make_player(settings.audio))
    hub.conversation().player = speaker
    stop_wyoming = start_wyoming(hub, settings)  # [wyoming] uri: Home Assistant, same engines
    try:
        with open_mic(settings.audio) as mic:
            return _serve_until_signal(hub, speaker, listen(mic, wake, settings), mic)
    finally:
        stop_wyoming()


def _serve_until_signal(hub, speaker: Speaker, utterances, mic) -> int:
    """Serve on a worker thread; SIGINT/SIGTERM close the microphone and end the daemon.

    The main thread only waits, so a signal is handled at once even while the worker is
    blocked in a PortAudio read. Returns 130 after SIGINT, 0 after SIGTERM or the end.
    """
    got: list = []
    done = threading.Event()
    errors: list = []

    def work():
        try:
            _serve(hub, speaker, utterances)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
            errors.append(exc)
        finally:
            done.set()

    def handler(signum, frame):
        got.append(signum)
        done.set()

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
    threading.Thread(target=work, name="hub-listen", daemon=True).start()
    while not done.wait(0.5):
        pass
    if errors:
        raise errors[0]
    if got:
        log.warning("stopped by %s", signal.Signals(got[0]).name)
        mic.close()
    return 130 if got and got[0] == signal.SIGINT else 0


def _serve(hub, speaker: Speaker, utterances) -> None:
    for samples in utterances:
        speaker.start_turn()
        result = None
        try:
            result = hub.answer_audio(samples, file=None)
        finally:
            speaker.end_turn(result.pcm if result else None, result.rate if result else None)
        trace = result.trace
        sys.stdout.write(json.dumps(trace, ensure_ascii=False) + "\n")
        sys.stdout.flush()
