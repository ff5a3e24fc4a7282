"""Playback at the voice's rate, or resampled to one the device accepts (BC-08, BC-12)."""

from __future__ import annotations

import json
import logging
import re
import threading
from pathlib import Path

import numpy as np
import pytest
import sounddevice

from hub.audio.player import make_player
from hub.errors import DeviceUnavailableError, TimeoutError_
from hub.settings import AudioSettings, TtsSettings
from hub.tts.piper import AudioChunk, PiperTts, default_voice_paths, make_tts

BC12_TEXT = "testing one two three"
UNSPEAKABLE = ["", "   ", "\n\t", "...", "?!", "—", "🙂👍"]


class FakeStream:
    """Collects what a RawOutputStream would play."""

    def __init__(self, samplerate, channels, device, fail_after=None):
        self.samplerate, self.channels, self.device = samplerate, channels, device
        self.data = bytearray()
        self.events: list[str] = []
        self.fail_after = fail_after

    def start(self):
        self.events.append("start")

    def write(self, data):
        if self.fail_after is not None and len(self.data) >= self.fail_after:
            raise sounddevice.PortAudioError("Device unavailable", -9985)
        self.data.extend(bytes(data))
        return False

    def stop(self):
        self.events.append("stop")

    def abort(self):
        self.events.append("abort")

    def close(self):
        self.events.append("close")

    @property
    def frames(self) -> int:
        return len(self.data) // (2 * self.channels)


class FakeSd:
    """A sounddevice stand-in: which rates and channel counts the device takes, and a log."""

    PortAudioError = sounddevice.PortAudioError

    def __init__(
        self,
        rates=None,
        default_rate=48000,
        channels=(1, 2),
        name="Fake DAC",
        query_error=False,
        fail_after=None,
    ):
        self.rates, self.channels = rates, channels
        self.devices = [
            {
                "index": 0,
                "name": "Fake Mic",
                "max_input_channels": 2,
                "max_output_channels": 0,
                "default_samplerate": 16000.0,
            },
            {
                "index": 1,
                "name": name,
                "max_input_channels": 0,
                "max_output_channels": max(channels),
                "default_samplerate": float(default_rate),
            },
        ]
        self.query_error, self.fail_after = query_error, fail_after
        self.calls: list[str] = []
        self.streams: list[FakeStream] = []

    def query_devices(self, device=None, kind=None):
        self.calls.append(f"query_devices({kind})")
        if self.query_error:
            raise self.PortAudioError("Error querying device -1", -9996)
        return self.devices[1] if kind == "output" else list(self.devices)

    def check_output_settings(
        self, device=None, channels=None, dtype=None, extra_settings=None, samplerate=None
    ):
        self.calls.append(f"check({samplerate}, {channels})")
        if self.rates is not None and samplerate not in self.rates:
            raise self.PortAudioError("Invalid sample rate", -9997)
        if channels not in self.channels:
            raise self.PortAudioError("Invalid number of channels", -9998)

    def RawOutputStream(self, samplerate=None, device=None, channels=None, dtype=None, **kw):
        self.calls.append(f"open({samplerate}, {channels})")
        assert dtype == "int16"
        stream = FakeStream(samplerate, channels, device, self.fail_after)
        self.streams.append(stream)
        return stream


@pytest.fixture(scope="session")
def joe():
    return make_tts(TtsSettings())


@pytest.fixture(scope="session")
def joe_16k(tmp_path_factory):
    """The joe voice with ``audio.sample_rate`` set to 16000, as a low/x_low voice has."""
    model, config = default_voice_paths()
    folder = tmp_path_factory.mktemp("voice16k")
    onnx = folder / "joe-16k.onnx"
    onnx.symlink_to(model)
    cfg = json.loads(config.read_text())
    cfg["audio"]["sample_rate"] = 16000
    Path(f"{onnx}.json").write_text(json.dumps(cfg))
    return make_tts(TtsSettings(voice=str(onnx)))


def _tone(rate: int, seconds: float, text: str = "x") -> AudioChunk:
    t = np.arange(int(rate * seconds)) / rate
    return AudioChunk((np.sin(2 * np.pi * 440 * t) * 8000).astype(np.int16).tobytes(), rate, text)


# --- BC-12: the voice's rate, or resampled to one the device accepts ---------------------------


@pytest.mark.parametrize("voice", ["joe", "joe_16k"])
@pytest.mark.parametrize(
    "device_rates, default_rate, expect_rate",
    [
        ((48000,), 48000, 48000),  # only 48 kHz: resample
        ((44100,), 44100, 44100),  # only its default rate: resample to it
        ((44100,), 32000, 44100),  # default refused too: the fallback list
        (None, 48000, None),  # anything: open at the voice's own rate
    ],
)
def test_played_duration_matches_the_voice(
    request, caplog, voice, device_rates, default_rate, expect_rate
):
    tts = request.getfixturevalue(voice)
    chunks = list(tts.synthesize(BC12_TEXT))
    assert {c.rate for c in chunks} == {tts.rate}
    assert tts.rate == (16000 if voice == "joe_16k" else 22050)
    sd = FakeSd(rates=device_rates, default_rate=default_rate)
    with caplog.at_level(logging.INFO, logger="hub.audio.player"):
        seconds = make_player(AudioSettings(), sd=sd).play(chunks)
    (stream,) = sd.streams
    assert stream.samplerate == (expect_rate or tts.rate)
    expected = sum(c.frames for c in chunks) / tts.rate
    assert stream.frames / stream.samplerate == pytest.approx(expected, rel=0.05)
    assert seconds == pytest.approx(expected, rel=0.05)
    if expect_rate:
        assert f"resampling {tts.rate} -> {expect_rate} Hz" in caplog.text
    else:
        assert stream.data == b"".join(c.pcm for c in chunks)  # untouched


def test_device_that_refuses_mono_gets_the_same_audio_on_two_channels():
    chunk = _tone(22050, 0.5)
    sd = FakeSd(rates=(48000,), channels=(2,))
    seconds = make_player(AudioSettings(), sd=sd).play([chunk])
    (stream,) = sd.streams
    assert (stream.samplerate, stream.channels) == (48000, 2)
    both = np.frombuffer(bytes(stream.data), dtype=np.int16).reshape(-1, 2)
    assert np.array_equal(both[:, 0], both[:, 1])
    assert seconds == pytest.approx(0.5, rel=0.05)


def test_playback_path_has_no_hard_coded_voice_rate():
    import hub.audio.player

    source = Path(hub.audio.player.__file__).read_text()
    assert not re.search(r"16000|22050|16_000|22_050", source)


# --- BC-08 and device errors -------------------------------------------------------------------


@pytest.mark.parametrize("text", UNSPEAKABLE)
def test_nothing_to_say_never_opens_the_device(joe, text):
    sd = FakeSd()
    assert make_player(AudioSettings(), sd=sd).play(joe.synthesize(text)) == 0.0
    assert sd.calls == [] and sd.streams == []


def test_no_device_names_the_device_and_the_rates_tried():
    sd = FakeSd(rates=(), default_rate=44100, name="USB DAC")
    with pytest.raises(DeviceUnavailableError) as err:
        make_player(AudioSettings(output_device="usb"), sd=sd).play([_tone(22050, 0.1)])
    message = err.value.message
    assert "\n" not in message and "USB DAC" in message
    assert "22050, 44100, 48000 Hz" in message
    assert sd.streams == []


def test_portaudio_failing_to_list_devices_is_device_unavailable():
    sd = FakeSd(query_error=True)
    with pytest.raises(DeviceUnavailableError, match="default output"):
        make_player(AudioSettings(), sd=sd).play([_tone(22050, 0.1)])


def test_missing_named_device_is_device_unavailable():
    with pytest.raises(DeviceUnavailableError, match="'HDMI'"):
        make_player(AudioSettings(output_device="HDMI"), sd=FakeSd()).play([_tone(22050, 0.1)])


def test_named_device_is_opened_by_its_index():
    sd = FakeSd(name="USB Audio Device")
    make_player(AudioSettings(output_device="usb audio"), sd=sd).play([_tone(22050, 0.1)])
    assert sd.streams[0].device == 1


def test_device_lost_while_playing_is_device_unavailable_and_the_stream_is_closed():
    sd = FakeSd(fail_after=4000)
    with pytest.raises(DeviceUnavailableError, match="failed while playing"):
        make_player(AudioSettings(), sd=sd).play([_tone(22050, 1.0)])
    assert sd.streams[0].events[-1] == "close"


# --- streaming and cancel ----------------------------------------------------------------------


def test_every_chunk_is_played_in_order():
    chunks = [_tone(22050, 0.2, "a"), _tone(22050, 0.3, "b"), _tone(22050, 0.1, "c")]
    sd = FakeSd()
    seconds = make_player(AudioSettings(), sd=sd).play(iter(chunks))
    assert sd.streams[0].data == b"".join(c.pcm for c in chunks)
    assert seconds == pytest.approx(0.6, abs=1e-3)
    assert sd.streams[0].events == ["start", "stop", "close"]


def test_cancel_stops_playback_between_blocks():
    cancel = threading.Event()
    sd = FakeSd()

    def chunks():
        yield _tone(22050, 1.0)
        cancel.set()
        yield _tone(22050, 1.0)

    seconds = make_player(AudioSettings(), sd=sd).play(chunks(), cancel)
    assert seconds <= 1.0
    assert sd.streams[0].events[-2:] == ["abort", "close"]


def test_an_error_from_the_synthesizer_reaches_the_caller_and_closes_the_stream():
    def chunks():
        yield _tone(22050, 0.2)
        raise TimeoutError_("tts cancelled", node="tts")

    sd = FakeSd()
    with pytest.raises(TimeoutError_):
        make_player(AudioSettings(), sd=sd).play(chunks())
    assert sd.streams[0].events[-1] == "close"


def test_synthesis_runs_ahead_of_playback(joe):
    """The second sentence is synthesized while the first is being written."""
    seen: list[int] = []

    class Voice:
        config = joe.voice.config

        def synthesize(self, text):
            seen.append(len(seen))
            return joe.voice.synthesize(text)

    class SlowStream(FakeStream):
        first_write_saw = None

        def write(self, data):
            if self.first_write_saw is None:  # hold the first write until sentence two exists
                for _ in range(200):
                    if len(seen) >= 2:
                        break
                    threading.Event().wait(0.05)
                self.first_write_saw = len(seen)
            return super().write(data)

    sd = FakeSd()

    def open_stream(samplerate=None, device=None, channels=None, dtype=None):
        sd.streams.append(SlowStream(samplerate, channels, device))
        return sd.streams[-1]

    sd.RawOutputStream = open_stream
    tts = PiperTts(Voice(), TtsSettings())
    make_player(AudioSettings(), sd=sd).play(tts.synthesize("One. Two."))
    assert sd.streams[0].first_write_saw == 2
