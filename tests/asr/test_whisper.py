"""The Whisper engine (hub.asr.whisper_engine) with a stub faster-whisper model: pinned
decoding options, input format (case BC-45, unit part), and the generator, memory and
thread rules of case BC-39."""

from __future__ import annotations

import dataclasses
import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest

from hub.asr import whisper_engine
from hub.asr.whisper_engine import WhisperEngine, as_float_audio, check_input, cpu_threads
from hub.config.asr import AsrSettings
from hub.errors import BadInputError, TimeoutError_, TransientError

AUDIO = np.zeros(16000, dtype=np.float32)


def segment(text="Turn on the bed light."):
    return SimpleNamespace(text=text, no_speech_prob=0.01, avg_logprob=-0.1, compression_ratio=1.0)


class StubModel:
    """``transcribe`` returns at once; its generator runs ``step(i)`` before segment i."""

    def __init__(self, n=1, step=lambda i: None):
        self.n, self.step, self.kwargs, self.active, self.most = n, step, [], 0, 0
        self.closed = 0

    def transcribe(self, audio, **kwargs):
        self.kwargs.append(kwargs)

        def segments():
            self.active += 1
            self.most = max(self.most, self.active)
            try:
                for i in range(self.n):
                    self.step(i)
                    yield segment() if i == 0 else segment(f"And part {i}.")  # not a loop
            finally:
                self.active -= 1
                self.closed += 1

        return segments(), SimpleNamespace(language="en")


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def engine_with(model, keep_s=60.0, clock=None, **kw):
    settings = dataclasses.replace(AsrSettings(), whisper_keep_loaded_s=keep_s, **kw)
    return WhisperEngine(
        settings, "Kitchen, Office.", load=lambda: model, **({"clock": clock} if clock else {})
    )


def test_bc37_decoding_options_are_pinned():
    model = StubModel()
    engine_with(model).hear(AUDIO)
    sent = model.kwargs[0]
    assert sent["vad_filter"] is False  # the hub's own VAD gate runs first (hub.asr.evidence)
    assert sent["condition_on_previous_text"] is False
    assert len(sent["temperature"]) <= 2 and sent["max_new_tokens"] <= 64
    assert sent["without_timestamps"] is True and sent["language"] == "en"
    assert sent["initial_prompt"] == "Kitchen, Office."


def test_bc45_second_pass_input_must_be_float32_not_raw_int16():
    with pytest.raises(BadInputError):
        check_input(np.zeros(1600, dtype=np.int16))
    with pytest.raises(BadInputError):
        engine_with(StubModel()).hear(np.zeros(1600, dtype=np.int16))
    with pytest.raises(BadInputError):
        check_input(np.full(10, 2.0, dtype=np.float32))


def tone(rate, seconds=1.0, channels=1, dtype=np.int16):
    t = np.arange(int(rate * seconds)) / rate
    wave = 0.5 * np.sin(2 * np.pi * 1000 * t)
    scale = np.iinfo(dtype).max if np.dtype(dtype).kind == "i" else 1.0
    samples = (wave * scale).astype(dtype)
    return np.stack([samples] * channels, axis=1) if channels > 1 else samples


@pytest.mark.parametrize(
    "rate,channels,dtype",
    [
        (16000, 1, np.int16),
        (48000, 2, np.int16),
        (22050, 1, np.int16),
        (16000, 1, np.int32),
        (44100, 1, np.float32),
    ],
)
def test_bc45_every_format_becomes_16k_mono_float32_keeping_time_and_pitch(rate, channels, dtype):
    audio = as_float_audio(tone(rate, channels=channels, dtype=dtype), rate)
    check_input(audio)
    assert audio.ndim == 1 and audio.dtype == np.float32
    assert abs(len(audio) / 16000 - 1.0) <= 0.001  # duration within 1 ms
    peak = np.argmax(np.abs(np.fft.rfft(audio))) * 16000 / len(audio)
    assert abs(peak - 1000) <= 5  # a 1 kHz tone stays 1 kHz (no fixed-length resampling)
    assert 0.4 < np.abs(audio).max() <= 1.0  # scaled to [-1, 1], not raw integers


def test_bc39_deadline_stops_consuming_the_lazy_generator():
    clock = FakeClock()
    model = StubModel(n=20, step=lambda i: setattr(clock, "now", clock.now + 1.0))
    engine = engine_with(model, clock=clock)
    with pytest.raises(TimeoutError_) as caught:
        engine.hear(AUDIO, deadline=clock.now + 8.0)
    assert caught.value.node == "asr2" and caught.value.kind == "timeout"
    assert clock.now <= 100.0 + 9.0  # stopped at the first segment past the deadline
    assert model.closed == 1  # the generator was closed, not left half-consumed
    assert engine.hear(AUDIO).text  # the next job is served at once


def test_bc39_an_error_inside_the_generator_is_classified():
    def boom(i):
        if i == 3:
            raise ValueError("bad segment")

    engine = engine_with(StubModel(n=5, step=boom))
    with pytest.raises(TransientError) as caught:
        engine.hear(AUDIO)
    assert caught.value.node == "asr2"


def test_bc39_idle_unload_waits_for_the_running_iteration():
    events, freed = [], []
    started, release = threading.Event(), threading.Event()

    def step(i):
        if i == 0:
            started.set()
            release.wait(10)
        events.append(f"segment {i}")

    model = StubModel(n=2, step=step)
    engine = engine_with(model, keep_s=3600.0)
    engine._res._free = lambda m: (freed.append(m), events.append("freed"))
    worker = threading.Thread(target=engine.hear, args=(AUDIO,))
    worker.start()
    assert started.wait(10)
    uses = engine._res._uses
    expiry = threading.Thread(target=engine._res._expire, args=(uses,))
    expiry.start()  # the idle timer fires while the generator is being iterated
    assert engine.release() is False  # cannot free while in use
    release.set()
    worker.join(10)
    expiry.join(10)
    assert events == ["segment 0", "segment 1", "freed"]  # freed after the iteration
    assert engine.loads == 1  # no second load raced the first


def test_bc39_calls_from_several_satellites_run_one_at_a_time():
    model = StubModel(n=3)
    engine = engine_with(model)
    errors = []

    def satellite():
        for _ in range(30):
            try:
                engine.hear(AUDIO)
            except TransientError as exc:
                errors.append(exc)

    threads = [threading.Thread(target=satellite) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert model.most == 1 and engine.loads == 1
    assert len(model.kwargs) + len(errors) == 90


def test_bc39_cpu_threads_are_explicit_from_the_affinity(monkeypatch):
    monkeypatch.setattr(whisper_engine.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    assert cpu_threads(0) == 3 and cpu_threads(2) == 2
    monkeypatch.setattr(whisper_engine.os, "sched_getaffinity", lambda pid: {0})
    assert cpu_threads(0) == 1
    seen = {}

    class Recorder:
        def __init__(self, path, **kwargs):
            seen.update(kwargs)

    import faster_whisper

    monkeypatch.setattr(faster_whisper, "WhisperModel", Recorder)
    engine = WhisperEngine(AsrSettings(), "")
    engine._load()
    assert seen["cpu_threads"] == 1 and seen["num_workers"] == 1
    assert seen["compute_type"] == "int8"


def test_preload_loads_once_and_the_next_call_expects_no_load():
    """``hub replay`` loads the model before its first file, so the first rejected turn's
    expected time holds no load."""
    clock = FakeClock()
    loads = []

    def load():
        loads.append(1)
        clock.now += 3.0  # a slow load
        return StubModel()

    engine = WhisperEngine(AsrSettings(), "Kitchen.", load=load, clock=clock)
    engine.preload()
    assert engine.loaded and loads == [1] and engine.load_s == pytest.approx(3.0)
    assert engine.expected_s() == pytest.approx(engine.decode_s)
    engine.hear(AUDIO)
    assert loads == [1]


def test_bc39_a_timed_out_decode_makes_the_next_turn_skip_the_second_pass_not_wait(monkeypatch):
    """A segment cannot be stopped inside (one CTranslate2 call): while the timed-out decode
    still holds the model, the next turn's second pass is skipped as busy, the model is not
    entered again, and once the segment ends the model serves again."""
    from hub.asr import evidence
    from hub.asr.base import Transcript
    from hub.asr.second_pass import second_pass

    spoken = evidence.Evidence(speech_ms=1200, dbfs=-22.0)
    monkeypatch.setattr(evidence, "measure", lambda s: spoken)
    inside, release = threading.Event(), threading.Event()

    def step(i):
        inside.set()
        release.wait(30)  # the segment's decode, never stopped by the hub

    model = StubModel(n=1, step=step)
    engine = engine_with(model)
    pcm = np.full(16000, 1000, dtype=np.int16)
    rejected = Transcript("", (), rejected=True)
    try:
        first = second_pass(rejected, pcm, engine, deadline=time.monotonic() + 0.3)
        assert inside.is_set() and first.trace["outcome"] == "failed"
        assert first.error.kind == "timeout" and engine.stopping
        later = second_pass(rejected, pcm, engine, deadline=time.monotonic() + 30.0)
        assert later.trace["outcome"] == "skipped" and later.trace["rejected_reason"] == "busy"
        assert later.transcript is rejected and later.error is None
        with pytest.raises(TransientError, match="still stopping"):
            engine.hear(AUDIO, deadline=time.monotonic() + 30.0)
        assert len(model.kwargs) == 1  # neither call entered the model
    finally:
        release.set()
    for _ in range(300):  # the stopped decode ends with its segment
        if not engine.stopping and model.active == 0:
            break
        time.sleep(0.01)
    assert not engine.stopping and model.active == 0
    assert engine.hear(AUDIO).text == "Turn on the bed light."


def test_a_live_decode_of_another_turn_is_not_stopping():
    """Only a cancelled or late call counts as stopping: one still in time is waited for."""
    inside, release = threading.Event(), threading.Event()
    model = StubModel(n=1, step=lambda i: (inside.set(), release.wait(30)))
    engine = engine_with(model)
    worker = threading.Thread(target=engine.hear, args=(AUDIO, threading.Event(), None))
    worker.start()
    try:
        assert inside.wait(10) and not engine.stopping
    finally:
        release.set()
        worker.join(10)


class WindowModel:
    """Reads ``texts[window]`` (else ``text``) and records each window (s) it was given."""

    def __init__(self, text="Turn on the bed light.", texts=None, step=lambda window: None):
        self.text, self.texts, self.step, self.windows = text, texts or {}, step, []

    window_frames = None

    def transcribe(self, audio, **kwargs):
        window = self.window_frames // 100
        self.windows.append(window)
        self.kwargs = kwargs

        def segments():
            self.step(window)
            yield segment(self.texts.get(window, self.text))

        return segments(), SimpleNamespace(language="en")


def test_the_encoder_window_fits_the_audio_within_its_floor_and_30_s():
    assert whisper_engine.window_s(16000, 5) == 5  # 1 s + 1 s margin, under the floor
    assert whisper_engine.window_s(16000 * 6 + 1, 5) == 8  # 6.0001 s + 1 s, rounded up
    assert whisper_engine.window_s(16000 * 40, 5) == 30  # never more than Whisper's own
    assert whisper_engine.window_s(16000, 30) == 30  # a floor of 30: the full window always
    assert whisper_engine.window_s(1, 1) == 2


def test_issue18_a_short_utterance_is_read_with_a_short_window_and_the_trace_says_so():
    model = WindowModel()
    heard = engine_with(model, whisper_window_s=3).hear(np.zeros(16000 * 2, np.float32))
    assert model.windows == [3] and heard.window_s == 3 and heard.reread is None
    assert heard.text == "Turn on the bed light."
    full = WindowModel()
    engine_with(full, whisper_window_s=30).hear(AUDIO)
    assert full.windows == [30]  # always set: the model keeps the last window it was given


@pytest.mark.parametrize(
    "short,why",
    [
        ("", "empty"),
        ("Turn on the light light light", "repetition"),
        ("Thank you.", "invented"),
    ],
)
def test_issue18_a_short_window_reading_that_looks_wrong_is_read_again_at_30_s(short, why):
    model = WindowModel(texts={10: short})
    heard = engine_with(model).hear(AUDIO)
    assert model.windows == [10, 30]
    assert heard.text == "Turn on the bed light." and heard.window_s == 30
    assert heard.reread == why


def test_issue18_a_low_confidence_short_reading_is_read_again():
    class Unsure(WindowModel):
        def transcribe(self, audio, **kwargs):
            segments, info = super().transcribe(audio, **kwargs)
            if self.window_frames < 3000:
                return (SimpleNamespace(**{**vars(s), "avg_logprob": -1.5}) for s in segments), info
            return segments, info

    model = Unsure()
    heard = engine_with(model).hear(AUDIO)
    assert model.windows == [10, 30] and heard.reread == "low_confidence"


def test_issue18_no_re_read_once_late_and_a_late_re_read_keeps_the_model_busy():
    """The re-read runs inside the same call: past the deadline it is not started; when the
    re-read itself runs late, the engine is ``stopping`` until it ends (the next turn skips
    the second pass as busy), as for any decode."""
    clock = FakeClock()

    def late(window):
        clock.now += 5.0  # the short read ends past the deadline

    model = WindowModel(texts={10: ""}, step=late)
    with pytest.raises(TimeoutError_):
        engine_with(model, clock=clock).hear(AUDIO, deadline=clock.now + 2.0)
    assert model.windows == [10]  # no re-read started

    inside, release = threading.Event(), threading.Event()

    def blocks_at_30(window):
        if window == 30:
            inside.set()
            release.wait(30)

    model = WindowModel(texts={10: ""}, step=blocks_at_30)
    engine = engine_with(model)
    cancel, raised = threading.Event(), []

    def hear():
        try:
            engine.hear(AUDIO, cancel)
        except TimeoutError_ as exc:
            raised.append(exc)

    worker = threading.Thread(target=hear)
    worker.start()
    try:
        assert inside.wait(10) and not engine.stopping
        cancel.set()  # the turn gave up on it while the 30 s re-read runs
        assert engine.stopping
        with pytest.raises(TransientError, match="still stopping"):
            engine.hear(AUDIO)
    finally:
        release.set()
        worker.join(10)
    assert raised and not engine.stopping and model.windows == [10, 30]


def test_issue18_a_short_window_that_says_it_again_and_again_is_cut_to_the_first_time():
    """From a short window Whisper writes the command, then again until its token budget
    (measured on the shared recordings): the text is cut to the first time, not re-read, and
    that decode is bounded (no 64 tokens, no temperature fallback for the loop)."""
    model = WindowModel(texts={10: "Next track. Next track. Next track. Next tr"})
    heard = engine_with(model).hear(np.zeros(16000 * 2, np.float32))
    assert model.windows == [10] and heard.text == "Next track." and heard.unlooped
    assert heard.reread is None and heard.compression_ratio < 2.4
    assert model.kwargs["max_new_tokens"] == whisper_engine.token_budget(32000) == 20
    assert model.kwargs["compression_ratio_threshold"] is None
    engine_with(model, whisper_window_s=30).hear(AUDIO)
    assert model.kwargs["max_new_tokens"] == 64 and model.kwargs["compression_ratio_threshold"]


@pytest.mark.parametrize(
    "text,cut",
    [
        (
            "Close the kitchen windows. Close the kitchen windows. Close the k",
            "Close the kitchen windows.",
        ),
        ("Set a timer for 1 hour. Set a timer for 1 hour.", "Set a timer for 1 hour."),
        ("set 100% set 100% set", "set 100%"),
        ("no no no", "no"),
        ("no no", "no no"),  # one word said twice may be meant
        ("Turn on the light.", "Turn on the light."),
        ("Turn on the light and turn off the fan.", "Turn on the light and turn off the fan."),
    ],
)
def test_unloop_keeps_the_first_time_of_a_repeated_phrase(text, cut):
    assert whisper_engine.unloop(text) == cut
