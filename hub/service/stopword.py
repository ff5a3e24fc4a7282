"""Stop means stop: while the hub plays (an answer, a timer ringing), a short utterance that
is a stop word ("stop", "cancel", "that's enough", …) silences it, without the wake word.

While playback runs and no utterance is being captured, the listener feeds every block to a
:class:`StopListener`. It cuts short utterances with its own endpointer (0.15 s of trailing
silence: a stop word is one short phrase) and decodes each with a small grammar of the stop
phrases, a search of the recognizer's own PocketSphinx decoder (no second acoustic model),
and the phone loop for rejection (:func:`hub.asr.pocketsphinx_engine.phone_loop_llr`): speech
that fits a stop phrase worse than free phones is not a stop word. (A filler loop of the
home's words beside the phrases, one pass instead of two, was tried: slower, and it read
"stop" as "to got".) A wake word said during playback resets the listener, so "okay nabu",
close to "enough" for the phone loop, never stops anything by itself. Decoding runs on a
thread of its own, so the listener never waits for it; meanwhile playback is held (paused
after the block being written), so a stop word silences the speaker at once, and anything
else costs the answer a pause of the decode's length (0.1-0.4 s on a loaded core). The
listener hears only while it is armed (:func:`stop_armed`) and no capture is open, and an
utterance begun then to its end; a pre-roll without speech is forgotten when it is disarmed,
never joined to the next playback's start.

Echo: the utterance is dropped when the echo check (:class:`hub.service.echo.EchoGate`, the
device's measured coupling) judges its whole span, pre-roll to end, the hub's own voice.
Measured in ``hub run`` on the test sound server with an echo path
(``scripts/measure_stop_echo.py``, BENCHMARKS.md "Stop listener and the hub's own voice"):
before, in 11 runs (timer rings, short and 40 s answers; gain 0.2-1.0, 20-200 ms, noise and
reverberation) 26 stretches of the hub's own voice passed the check and paused playback, and
one stopped an answer ("silence", llr -1.26: the coupling measured before the echo had come; a
stretch judged by its last window); after, none in the same 11 runs, and the user's "stop" on
the FIFO microphone without an echo path is still heard.

Trace: an utterance that is not a stop word prints no line, only INFO logs (the echo check's
numbers, what the stop grammar read, its phone-loop confidence, the decode's time). It is not
a capture (no turn was ever to come of it).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable

import numpy as np

from hub.asr.pocketsphinx_engine import PHONE_LOOP, phone_loop_llr
from hub.asr.sphinx_decoder import model_dir
from hub.audio.endpoint import Endpointer

log = logging.getLogger("hub.service.stopword")

STOP_PHRASES = (
    "stop",
    "stop it",
    "stop the timer",
    "stop the alarm",
    "cancel",
    "enough",
    "that's enough",
    "that is enough",
    "never mind",
    "quiet",
    "silence",
)
"""What stops playback when said while the hub plays."""
REPLY_PHRASES = (
    "yes",
    "yeah",
    "yep",
    "sure",
    "yes please",
    "do it",
    "go ahead",
    "no",
    "nope",
    "no thanks",
    "don't",
)
"""Answers to a yes/no question, listened for (beside the stop phrases) while the hub's
question plays: said over it, they are its reply (:mod:`hub.service.overlap`). Not "okay":
the wake word "okay nabu" reads as it (phone-loop confidence +0.23 on the hub's voice)."""
SNOOZE_PHRASES = ("snooze", "snooze it", "snooze the alarm")
"""What snoozes a ringing alarm without the wake word (README, "Alarms")."""
SEARCH = "stop_words"
"""Name of the stop phrases' search in the recognizer's decoder."""
REPLY_SEARCH = "stop_or_reply"
"""Name of the search of the stop phrases, the replies and the snooze phrases."""
TRAILING_MS = 150
"""Silence after a stop word that ends it (ms)."""
MAX_S = 2.5
"""Longest utterance still taken for a stop word (s); longer speech is not one."""
MARGIN_S = 0.15
"""Silence kept before and after the speech of a stop word for the decode (s)."""
RECENT_S = 0.5
"""Audio heard while no capture was open kept for a capture that opens next (s): a reply
begun in the moment between the question's last audio and the follow-up window's opening."""
REJECT_LLR = -1.6
"""Phone-loop confidence below which a stop-phrase reading is rejected (measured on the hub's
voice: stop words -1.25 to +0.48; "yes" read as "enough" -2.3 to -2.7, "okay nabu" -1.7 to -1.9,
"what time is it" -4.2)."""


def _jsgf(phrases) -> str:
    return (
        "#JSGF V1.0;\ngrammar stop;\npublic <stop> = "
        + " | ".join(f"( {p} )" for p in phrases)
        + " ;\n"
    )


def _add_words(decoder, words) -> None:
    """Add the stop phrases' words missing from the decoder's dictionary (from the wheel's
    CMUdict)."""
    missing = {w for w in words if not decoder.lookup_word(w)}
    if not missing:
        return
    with open(model_dir().parent / "cmudict-en-us.dict", encoding="utf-8") as f:
        for line in f:
            word, _, phones = line.strip().partition(" ")
            if word in missing:
                decoder.add_word(word, phones, True)
                missing.discard(word)
    if missing:
        log.warning("stop words without a pronunciation: %s", ", ".join(sorted(missing)))


def _trim(samples: np.ndarray, margin_s: float = MARGIN_S) -> np.ndarray:
    """``samples`` without the silence (10 ms frames below RMS 300) before and after the
    speech, ``margin_s`` of it kept at each end: the decode time grows with the audio."""
    n = len(samples) - len(samples) % 160
    rms = np.sqrt(np.mean(samples[:n].astype(np.float64).reshape(-1, 160) ** 2, axis=1))
    loud = np.flatnonzero(rms > 300.0)
    if not loud.size:
        return samples
    margin = round(margin_s * 100)
    return samples[max(0, loud[0] - margin) * 160 : (loud[-1] + 1 + margin) * 160]


class StopRecognizer:
    """Decodes a short utterance with the stop phrases' grammar on ``engine``'s decoder.

    Args:
        engine: a :class:`hub.asr.pocketsphinx_engine.PocketSphinxEngine` (restricted).
    """

    def __init__(self, engine):
        self.engine = engine
        decoder = engine.passes.decoder
        every = STOP_PHRASES + REPLY_PHRASES + SNOOZE_PHRASES
        with engine.lock:
            _add_words(decoder, {w for p in every for w in p.split()})
            decoder.add_jsgf_string(SEARCH, _jsgf(STOP_PHRASES))
            decoder.add_jsgf_string(REPLY_SEARCH, _jsgf(every))
            decoder.activate_search(engine.passes.main)

    def __call__(self, samples: np.ndarray, replies: bool = False) -> str | None:
        """The stop phrase said in ``samples`` (int16 16 kHz), or None; with ``replies``, also
        a reply (:data:`REPLY_PHRASES`) or a snooze phrase (:data:`SNOOZE_PHRASES`)."""
        audio = np.ascontiguousarray(_trim(samples), dtype="<i2").tobytes()
        passes = self.engine.passes
        with self.engine.lock:
            mean = passes.mean(audio)
            try:
                text = self._search(SEARCH, audio, mean)
                if text is None and replies:  # the stop phrases first: alone they fit best
                    text = self._search(REPLY_SEARCH, audio, mean)
            finally:
                passes.decoder.activate_search(passes.main)
        return text

    def _search(self, search: str, audio: bytes, mean) -> str | None:
        """The phrase of ``search`` read in ``audio``, unless the phone loop fits it better
        (:data:`REJECT_LLR`); the caller holds the engine's lock."""
        passes = self.engine.passes
        heard = passes.run(search, audio, mean)
        if not heard.text:
            return None
        llr = phone_loop_llr(heard.words, passes.run(PHONE_LOOP, audio, mean).words)
        log.info("stop listener heard %r (llr %s)", heard.text, llr)
        return heard.text if llr is None or llr >= REJECT_LLR else None


_CHECK_FAILURES: set[str] = set()
"""The kinds of failure of the ringing check logged so far (each once: it runs per block)."""


def stop_rings(events) -> dict:
    """A stop word was heard: stop what rings (:meth:`hub.act.notifier.TimerEvents.stop_word`),
    silently. As Home Assistant's stop word on its voice satellites and common alarm clocks
    ("Alexa, stop", "Hey Google, stop") do, the silence is the answer: nothing is said after
    a stop word (the same word said as a command after the wake word, or typed, is answered:
    "Alarm stopped.", "Timer cancelled.").

    Args:
        events: the hub's :class:`hub.act.notifier.TimerEvents`.
    Returns:
        The ``stopped`` event's fields about the ringing: ``timer`` and ``alarm``, True when a
        ringing timer, an alarm, stopped.
    """
    stopped = events.stop_word("stop")
    return {
        "timer": bool(stopped and stopped.timers),
        "alarm": bool(stopped and stopped.alarms),
    }


def stop_armed(hub, speaker) -> bool:
    """True while the stop listener listens: the hub plays, or a timer or alarm rings (also
    between two of its rings, when nothing plays: a stop word without the wake word must
    still silence it). A failing timer check counts as not ringing (the microphone goes on),
    with one WARNING per kind of failure: stop words between rings are then not heard."""
    if speaker.playing:
        return True
    try:
        return bool(hub.events.stop_armed)  # a property of hub.act.notifier.TimerEvents
    except Exception as exc:
        if type(exc).__name__ not in _CHECK_FAILURES:
            _CHECK_FAILURES.add(type(exc).__name__)
            log.warning("ringing check failed, stop words between rings go unheard: %r", exc)
        return False


class StopListener:
    """Hears stop words while the hub plays; ``on_stop(text, audio)`` runs on its own thread.

    Args:
        make_endpointer: ``make(trailing_ms, max_s)`` -> an Endpointer without start timeout.
        recognize: ``recognize(samples, replies) -> str | None`` (a :class:`StopRecognizer`).
        on_stop: called with the phrase heard and the utterance's audio (int16, 16 kHz).
        is_echo: ``is_echo(span_s) -> bool``: True when the last ``span_s`` seconds the
            microphone heard (the utterance's own span) are the hub's own output.
        hold, release: pause playback while an utterance is decoded (it may be a stop word:
            the speaker is silent at once) and go on when it was not one.
        replies: ``replies() -> bool``: True while a reply or a snooze phrase is listened for
            too (a question plays, an alarm rings), asked when an utterance ends.
        detail: the echo check's numbers for the log lines (``EchoGate.detail``).
    """

    def __init__(
        self,
        make_endpointer: Callable,
        recognize: Callable,
        on_stop: Callable,
        is_echo: Callable[[float], bool] = lambda span_s: False,
        hold: Callable[[], None] = lambda: None,
        release: Callable[[], None] = lambda: None,
        replies: Callable[[], bool] = lambda: False,
        detail: Callable[[], str] = lambda: "",
    ):
        self._make, self._recognize, self._on_stop = make_endpointer, recognize, on_stop
        self._is_echo, self._hold, self._release = is_echo, hold, release
        self._replies, self._detail = replies, detail
        self._endpointer: Endpointer | None = None
        self._recent: deque[np.ndarray] = deque()
        self._recent_n = 0
        self.heard = 0
        """Stop words heard so far."""

    @property
    def in_speech(self) -> bool:
        """True while an utterance has begun and not ended (it is still being fed)."""
        endpointer = self._endpointer
        return endpointer is not None and endpointer.speech and not endpointer.ended

    def hear(self, block: np.ndarray, armed: bool) -> None:
        """Every microphone block heard while no capture is open: the last :data:`RECENT_S`
        are kept (:meth:`take`), and it is decoded (:meth:`push`) while ``armed`` (the hub
        plays, something rings) or while an utterance begun then goes on. Otherwise the
        endpointer is forgotten: its pre-roll would be joined to the next playback's start,
        as one utterance of audio heard seconds apart (issue 18)."""
        self._recent.append(block)
        self._recent_n += len(block)
        while self._recent_n - len(self._recent[0]) >= RECENT_S * 16000:
            self._recent_n -= len(self._recent.popleft())
        if armed or self.in_speech:
            self.push(block)
        else:
            self.reset()

    def push(self, block: np.ndarray) -> None:
        """Feed one microphone block heard while the hub plays."""
        endpointer = self._endpointer
        if endpointer is None:
            endpointer = self._endpointer = self._make(TRAILING_MS, MAX_S)
        if not endpointer.push(block):
            return
        self._endpointer = None
        audio = endpointer.audio()
        if not audio.size or endpointer.reason == "cap":
            return
        span_s = audio.size / 16000
        if self._is_echo(span_s):
            log.info(
                "stop listener: %.2f s of the hub's own voice ignored (%s)", span_s, self._detail()
            )
            return
        log.info("stop listener: %.2f s held for a decode (%s)", span_s, self._detail())
        self._hold()
        threading.Thread(
            target=self._decode, args=(audio, self._replies()), name="hub-stopword", daemon=True
        ).start()

    def take(self) -> np.ndarray | None:
        """What a capture opening now begins with (int16; the follow-up window after a
        question): the utterance in progress (its pre-roll and the speech so far: a reply
        begun over the question's end), else the last :data:`RECENT_S` heard (a reply begun
        as the question's playback was closing); None when nothing was heard. The listener
        starts afresh."""
        endpointer, self._endpointer = self._endpointer, None
        recent, self._recent, self._recent_n = list(self._recent), deque(), 0
        if endpointer is not None and endpointer.speech and not endpointer.ended:
            return endpointer.audio_so_far()
        return np.concatenate(recent).astype(np.int16, copy=False) if recent else None

    def _decode(self, audio: np.ndarray, replies: bool) -> None:
        started = time.monotonic()
        try:
            text = self._recognize(audio, replies)
        except Exception as exc:
            log.warning("stop listener: decode failed: %s: %s", type(exc).__name__, exc)
            text = None
        log.info(
            "stop listener: %.2f s decoded in %d ms: %s",
            audio.size / 16000,
            1000 * (time.monotonic() - started),
            repr(text) if text else "not a stop word" + (" or reply" if replies else ""),
        )
        if text:
            self.heard += 1
            self._on_stop(text, audio)
        else:
            self._release()

    def reset(self) -> None:
        """Playback ended (or a capture opened): forget the utterance in progress."""
        self._endpointer = None
