"""An LLM answer spoken sentence by sentence, outside the LLM node's budget (cases BC-08, BC-10).

The ``llm_answer`` node hands each finished sentence to the turn's :class:`AnswerSpeech`;
its own thread synthesizes and plays it while the model writes the next one, so synthesis on
a busy CPU never eats the LLM's time (``[llm] budget_s``). The object lives in the turn's
context (:attr:`hub.graph.state.TurnContext.speech`), so it outlives a timed-out or retried
LLM call, which gives two guarantees:

- a sentence is said at most once: a retry that writes the same sentence again is skipped;
- what was already said stands when the LLM times out later (the answer is then those
  sentences, not a fallback line spoken after them).

The ``tts`` node waits for the speech to finish (:meth:`AnswerSpeech.finish`, under the tts
node's own timeout) and synthesizes only the sentences that streaming could not say; the
orchestrator stops it when the turn ends (:meth:`AnswerSpeech.close`).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

from hub.errors import HubError, TimeoutError_
from hub.names import TTS

log = logging.getLogger("hub.graph")

CLOSE_JOIN_S = 5.0
"""When the turn ends, how long to wait for answer speech still synthesizing to stop."""

_POLL_S = 0.05
"""How often a waiting :meth:`AnswerSpeech.finish` looks at its cancel event."""


def _key(sentence: str) -> str:
    """What makes two sentences "the same" (case, spacing and end punctuation ignored)."""
    return " ".join(sentence.lower().split()).rstrip(".!?")


class AnswerSpeech:
    """The sentences of one turn's LLM answer and their audio, made on a background thread.

    Args:
        tts: returns the TTS engine (built on first use; raises HubError when it cannot).
        play: hands a synthesized chunk to the conversation's player.
        started: monotonic time of the end of input (TTFA is measured from it).
        clock: the turn's monotonic clock.
        speak: synthesize and play; False only collects the text.
    """

    def __init__(
        self,
        tts: Callable[[], Any],
        play: Callable[[Any], None],
        started: float,
        clock: Callable[[], float],
        speak: bool,
    ):
        self._tts, self._play, self._started, self._clock = tts, play, started, clock
        self._speak = speak
        self.sentences: list[str] = []
        self._seen: set[str] = set()
        self._queue: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.pcm, self.rate = bytearray(), None
        self.ttfa_ms: float | None = None
        self.said: list[str] = []  # sentences fully synthesized, in order
        self.pieces: list[str] = []  # the text of each chunk played, as spoken
        self.played: list[Any] = []  # each chunk handed to the player (AudioChunk)
        self.failed = False
        self._thread: threading.Thread | None = None

    @property
    def text(self) -> str:
        """The answer so far (every sentence added, once each)."""
        with self._lock:
            return " ".join(self.sentences)

    def add(self, sentence: str) -> bool:
        """Add a finished sentence; False (and nothing done) when it was added before."""
        with self._lock:
            key = _key(sentence)
            if not key or key in self._seen:
                return False
            self._seen.add(key)
            self.sentences.append(sentence)
        if self._speak:
            self._start()
            self._queue.put(sentence)
        return True

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="hub-answer-speech", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        """Synthesize queued sentences in order until the end marker (None) or a stop."""
        while not self._stop.is_set():
            sentence = self._queue.get()
            if sentence is None:
                return
            if self.failed:
                continue
            try:
                self._synthesize(sentence)
            except HubError as exc:
                log.warning(
                    "streaming the answer stopped (%s); the tts node takes over", exc.message
                )
                self.failed = True

    def _synthesize(self, sentence: str) -> None:
        """Synthesize and play one sentence; once any of it is played, it counts as said."""
        engine = self._tts()
        self.rate = self.rate or engine.rate
        for chunk in engine.synthesize(sentence, self._stop):
            if self._stop.is_set():
                return
            if self.ttfa_ms is None:
                self.ttfa_ms = (self._clock() - self._started) * 1000
            self.pcm += chunk.pcm
            self.rate = chunk.rate
            self.pieces.append(chunk.text)
            self.played.append(chunk)
            self._play(chunk)
            if not self.said or self.said[-1] is not sentence:
                self.said.append(sentence)
                log.info("answer sentence spoken: %r", sentence)

    def finish(self, cancel: threading.Event) -> list[str]:
        """Wait until every added sentence is said; the sentences left unsaid (a TTS failure).

        Raises:
            TimeoutError_: ``cancel`` was set first (the speech is stopped at its next chunk).
        """
        thread = self._thread
        if thread is not None:
            self._queue.put(None)
            while thread.is_alive():
                if cancel.is_set():
                    self._stop.set()
                    raise TimeoutError_("answer speech did not finish in time", node=TTS)
                thread.join(_POLL_S)
        return self.unsaid()

    def unsaid(self) -> list[str]:
        """The sentences added but not (yet) said, now (no waiting)."""
        with self._lock:
            said = {_key(s) for s in self.said}
            return [s for s in self.sentences if _key(s) not in said]

    def stop(self) -> None:
        """Stop synthesizing at the next chunk (the turn is over)."""
        self._stop.set()
        self._queue.put(None)

    def join(self, timeout_s: float) -> None:
        """Wait up to ``timeout_s`` for the speech thread to end."""
        if self._thread is not None:
            self._thread.join(timeout_s)

    def close(self, timeout_s: float = CLOSE_JOIN_S) -> None:
        """The turn is over: stop, and wait up to ``timeout_s`` for a synthesis in progress
        (onnxruntime aborts the process when it ends under a running synthesis)."""
        self.stop()
        self.join(timeout_s)
