"""Microphone capture (hub/mic.py) against a fake sounddevice: BC-19 and BC-20 (a, b).

The fake models what the bug reports show: devices that refuse 16 kHz or mono (-9997,
-9998), a device list that PortAudio only re-reads when re-initialised (python-sounddevice
#493), "Error querying device" with no devices, indices that change across a re-plug
(#570), and a read error mid-stream after an unplug (#627). Time is the sum of the
recorded sleeps, so nothing here waits or depends on the clock.
"""

from __future__ import annotations

import logging
import threading

import numpy as np
import pytest
from sounddevice import PortAudioError

from hub.audio.mic import Mic, MicConfig, open_mic
from hub.errors import DeviceUnavailableError
from hub.settings import AudioSettings

TONE_HZ = 1000
AMPLITUDE = 8000


def device(
    name, *, rate=48000, channels=2, rates=None, chans=None, appears_at=0.0, gone=(), inputs=True
):
    """A device of the fake world: reported default rate / max channels, what it accepts,
    when it is plugged in, and (start, end) windows in which it is unplugged."""
    return {
        "name": name,
        "default_samplerate": float(rate),
        "max_input_channels": channels if inputs else 0,
        "max_output_channels": 2,
        "rates": set(rates or {rate}),
        "chans": set(chans or {channels}),
        "appears_at": appears_at,
        "gone": list(gone),
    }


class FakeStream:
    """A blocking input stream: a 1 kHz tone on the first channel, silence on the others."""

    def __init__(self, sd, dev, rate, channels, blocksize):
        self.sd, self.dev, self.rate, self.channels = sd, dev, rate, channels
        self.blocksize, self.position, self.closed, self.started = blocksize, 0, False, False

    def start(self):
        self.started = True

    def stop(self):
        self.started = False

    def close(self):
        self.closed = True

    @property
    def read_available(self):
        return self.blocksize  # a block is always waiting

    def read(self, frames):
        self.sd.reads += 1
        if self.sd.reads in self.sd.fail_reads:
            self.dev["gone"].append((self.sd.now, self.sd.now + self.sd.unplugged_s))  # unplug
            raise PortAudioError("Unanticipated host error", -9999)
        t = (self.position + np.arange(frames)) / self.rate
        out = np.zeros((frames, self.channels), np.int16)
        out[:, 0] = np.rint(AMPLITUDE * np.sin(2 * np.pi * TONE_HZ * t))
        self.position += frames
        return out, self.sd.reads in self.sd.overflow_reads


class FakeSd:
    """The sounddevice calls hub.mic uses, over a world of devices that changes with time."""

    PortAudioError = PortAudioError

    def __init__(
        self, devices, *, raise_when_empty=True, overflow_reads=(), fail_reads=(), unplugged_s=0.0
    ):
        self.world, self.now = devices, 0.0
        self.raise_when_empty = raise_when_empty
        self.overflow_reads, self.fail_reads = set(overflow_reads), set(fail_reads)
        self.unplugged_s, self.reads = unplugged_s, 0
        self.initialisations, self.opens, self.streams, self.sleeps = 0, [], [], []
        self._snapshot()

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds

    def _present(self, dev):
        return dev["appears_at"] <= self.now and not any(a <= self.now < b for a, b in dev["gone"])

    def _snapshot(self):
        """PortAudio reads the device list only when it initialises."""
        present = [d for d in self.world if self._present(d)]
        self.devices = [dict(d, index=i) for i, d in enumerate(present)]

    def _terminate(self):
        self.devices = None

    def _initialize(self):
        self.initialisations += 1
        self._snapshot()

    def query_devices(self, kind=None):
        inputs = [d for d in self.devices if d["max_input_channels"] > 0]
        if kind == "input":
            if not inputs:
                raise PortAudioError("Error querying device -1")
            return inputs[0]
        if not inputs and self.raise_when_empty:
            raise PortAudioError("Error querying device -1")
        return self.devices

    def check_input_settings(self, *, device, samplerate, channels, dtype):
        world = next(d for d in self.world if d["name"] == self.devices[device]["name"])
        if samplerate not in world["rates"]:
            raise PortAudioError("Invalid sample rate", -9997)
        if channels not in world["chans"]:
            raise PortAudioError("Invalid number of channels", -9998)

    def InputStream(self, *, device, samplerate, channels, dtype, blocksize):
        assert dtype == "int16"
        dev = self.devices[device]
        world = next(d for d in self.world if d["name"] == dev["name"])
        self.opens.append((dev["name"], device, samplerate, channels))
        if not self._present(world):
            raise PortAudioError("Device unavailable", -9985)
        if samplerate not in world["rates"]:
            raise PortAudioError("Invalid sample rate", -9997)
        if channels not in world["chans"]:
            raise PortAudioError("Invalid number of channels", -9998)
        stream = FakeStream(self, world, samplerate, channels, blocksize)
        self.streams.append(stream)
        return stream


def collect(mic, count):
    out = []
    for block in mic.blocks():
        out.append(block)
        if len(out) == count:
            break
    return out


def assert_tone(blocks, channels):
    """Blocks are int16 16 kHz mono and carry the 1 kHz tone at amplitude / channels."""
    assert all(b.dtype == np.int16 and b.ndim == 1 for b in blocks)
    audio = np.concatenate(blocks)[1600:17600].astype(np.float64)  # 1 s after 0.1 s
    assert len(audio) == 16000
    assert int(np.argmax(np.abs(np.fft.rfft(audio)))) == TONE_HZ  # 1 Hz bins
    expected_rms = AMPLITUDE / channels / np.sqrt(2)
    assert abs(np.sqrt(np.mean(audio**2)) - expected_rms) < 0.02 * expected_rms


USB = "USB PnP Sound Device: Audio (hw:1,0)"

# BC-19: devices that refuse the ASR rate or mono, each with the settings the hub must pick.
PROFILES = {
    "48k-stereo-only": (device(USB, rate=48000, channels=2), (48000, 2)),
    "44k1-mono-only": (device(USB, rate=44100, channels=1), (44100, 1)),
    "16k-but-stereo-only": (device(USB, rate=16000, channels=2), (16000, 2)),
    "default-rate-refused-48k-mono-ok": (
        device(USB, rate=32000, channels=2, rates={48000}, chans={1, 2}),
        (48000, 1),
    ),
    "44k1-default-but-stereo-at-48k": (
        device(USB, rate=44100, channels=2, rates={48000}, chans={2}),
        (48000, 2),
    ),
    "16k-mono-fine": (
        device(USB, rate=44100, channels=2, rates={16000, 44100}, chans={1, 2}),
        (16000, 1),
    ),
}


@pytest.mark.parametrize("profile", PROFILES)
def test_bc19_falls_back_to_what_the_device_accepts_and_yields_16k_mono(profile, caplog):
    dev, (rate, channels) = PROFILES[profile]
    sd = FakeSd([dev])
    caplog.set_level(logging.INFO, logger="hub.audio.mic")
    with open_mic(AudioSettings(input_device="USB PnP"), sd=sd, sleep=sd.sleep) as mic:
        assert mic.config == MicConfig(USB, rate, channels)
        blocks = collect(mic, 30)
    assert_tone(blocks, channels)
    assert 30 * 800 - 800 <= sum(map(len, blocks)) <= 30 * 800  # soxr delay < 50 ms
    assert sd.sleeps == []
    assert sd.opens[-1] == (USB, 0, rate, channels)
    assert f"open at {rate} Hz, {channels} ch" in caplog.text
    if (rate, channels) != (16000, 1):
        assert "downmixed/resampled to 16000 Hz mono" in caplog.text
    assert sd.streams[-1].closed


def test_bc19_tries_16k_mono_first_then_the_device_default():
    sd = FakeSd([device(USB, rate=48000, channels=2)])
    open_mic(AudioSettings(input_device="usb pnp"), sd=sd, sleep=sd.sleep).close()
    assert [(r, c) for _, _, r, c in sd.opens] == [(16000, 1), (48000, 2)]


def test_bc19_nothing_opens_one_line_error_naming_device_and_rates_and_backs_off(caplog):
    sd = FakeSd([device(USB, rate=48000, channels=2, rates={96000})])
    with pytest.raises(DeviceUnavailableError) as err:
        open_mic(AudioSettings(input_device="USB PnP", device_wait_s=30), sd=sd, sleep=sd.sleep)
    message = err.value.message
    assert message.startswith("no audio input device 'USB PnP': tried 16000, 48000, 44100 Hz")
    assert "Invalid sample rate [PaErrorCode -9997]" in message
    assert "\n" not in message and err.value.kind == "transient"
    assert sd.sleeps == [0.5, 1, 2, 4, 5, 5, 5, 5, 2.5]  # back-off, 30 s in all
    assert "waiting for audio device 'USB PnP'" in caplog.text


def test_bc19_no_wait_means_one_attempt():
    sd = FakeSd([device(USB, rates={96000})])
    with pytest.raises(DeviceUnavailableError):
        open_mic(AudioSettings(input_device="USB"), sd=sd, wait_s=0, sleep=sd.sleep)
    assert sd.sleeps == [] and sd.initialisations == 0


# BC-20 (a): the service starts before the device exists; it appears 5 s later.
START_RACES = {
    "no-devices-query-raises": ([device(USB, appears_at=5)], "USB PnP"),
    "other-devices-named-absent": (
        [device("HDMI", rate=44100), device(USB, appears_at=5)],
        "USB PnP",
    ),
    "default-device-absent": ([device("HDMI", inputs=False), device(USB, appears_at=5)], ""),
}


@pytest.mark.parametrize("race", START_RACES)
def test_bc20a_waits_for_the_device_reinitialising_portaudio(race, caplog):
    world, name = START_RACES[race]
    sd = FakeSd(world)
    with open_mic(AudioSettings(input_device=name), sd=sd, sleep=sd.sleep) as mic:
        assert mic.config.device == USB
        assert len(collect(mic, 5)) == 5
    assert sd.sleeps == [0.5, 1, 2, 4]  # appears at 5 s, seen after 7.5 s of back-off
    assert sd.initialisations == 4
    assert "waiting for audio device" in caplog.text


def test_bc20a_device_never_appears_gives_device_unavailable_after_the_wait(caplog):
    sd = FakeSd([device(USB, appears_at=1000)])
    with pytest.raises(DeviceUnavailableError) as err:
        open_mic(AudioSettings(input_device="USB PnP", device_wait_s=10), sd=sd, sleep=sd.sleep)
    # it was never found, so no rate was tried and none is named
    assert err.value.message == (
        "no audio input device 'USB PnP' (not found after 10 s; `hub doctor` lists the devices)"
    )
    assert sum(sd.sleeps) == 10 and len(sd.sleeps) == 5
    assert caplog.text.count("waiting for audio device") == 1


def test_bc20b_overflows_counted_and_read_error_reopens_by_name(caplog):
    # Unplugged at read 51 for 3 s; re-plugged behind a new device, so its index changes.
    usb = device(USB, rate=48000, channels=2)
    webcam = device("Webcam Mic", rate=16000, channels=1, appears_at=2)
    sd = FakeSd([webcam, usb], overflow_reads={10, 20, 30}, fail_reads={51}, unplugged_s=3)
    caplog.set_level(logging.INFO, logger="hub.audio.mic")
    with open_mic(AudioSettings(input_device="USB PnP"), sd=sd, sleep=sd.sleep) as mic:
        blocks = collect(mic, 80)
        assert mic.overflows == 3
        assert mic.config == MicConfig(USB, 48000, 2)
    assert caplog.text.count("input overflow") == 3
    assert "audio read failed" in caplog.text and "reopening" in caplog.text
    assert len(sd.streams) == 2 and all(s.closed for s in sd.streams)
    assert sd.opens[1][:2] == (USB, 0)
    assert sd.opens[-1] == (USB, 1, 48000, 2)  # the same name at its new index
    assert sd.sleeps == [0.5, 1, 2]
    assert_tone(blocks[:50], 2)
    assert all(b.dtype == np.int16 and b.ndim == 1 for b in blocks)


def test_bc20b_reopened_device_may_come_back_at_another_rate():
    usb = device(USB, rate=48000, channels=2, rates={48000, 44100})
    sd = FakeSd([usb], fail_reads={5}, unplugged_s=1)

    def replug_as_44k1(seconds):
        sd.sleep(seconds)
        usb.update(default_samplerate=44100.0, rates={44100}, max_input_channels=1, chans={1})

    with open_mic(AudioSettings(input_device=USB), sd=sd, sleep=replug_as_44k1) as mic:
        blocks = collect(mic, 40)
        assert mic.config == MicConfig(USB, 44100, 1)
    assert_tone(blocks[4:], 1)


def test_bc20b_device_gone_for_good_raises_device_unavailable_from_blocks():
    sd = FakeSd([device(USB)], fail_reads={3}, unplugged_s=1e9)
    with (
        open_mic(
            AudioSettings(input_device="USB", device_wait_s=7.5), sd=sd, sleep=sd.sleep
        ) as mic,
        pytest.raises(DeviceUnavailableError) as err,
    ):
        collect(mic, 10)
    assert "not found after 7.5 s" in err.value.message
    assert sd.sleeps == [0.5, 1, 2, 4]


def test_close_ends_blocks_and_closes_the_stream():
    sd = FakeSd([device(USB, rate=16000, channels=1)])
    mic = open_mic(AudioSettings(), sd=sd, sleep=sd.sleep)
    source = mic.blocks()
    assert len(next(source)) == 800
    mic.close()
    assert list(source) == []
    assert sd.streams[0].closed


@pytest.mark.parametrize(
    "wanted, chosen",
    [("usb pnp", USB), ("Webcam", "Webcam Mic"), ("Mic", "Mic"), ("", "Webcam Mic")],
)
def test_device_name_is_a_case_insensitive_substring_exact_name_first(wanted, chosen):
    world = [
        device("Speaker Mic Out", inputs=False),
        device("Webcam Mic", rate=16000),
        device(USB),
        device("Mic", rate=16000),
    ]
    sd = FakeSd(world)
    with open_mic(AudioSettings(input_device=wanted), sd=sd, sleep=sd.sleep) as mic:
        assert mic.config.device == chosen


# ---- hub doctor: the device hub run would open (probe_input) ----


def test_bc19_doctor_names_the_device_and_the_settings_it_accepts():
    from hub.audio.probe import probe_input

    sd = FakeSd([device("HDMI", inputs=False), device(USB, rate=48000, channels=2)])
    report = probe_input(AudioSettings(input_device="usb"), sd=sd)
    assert report.chosen == USB and report.problem is None
    assert report.accepted == ["48000 Hz/2 ch"]  # what BC-19's stub accepts, nothing else
    assert report.devices == [f"1: {USB} (2 ch, 48000 Hz default)"]


@pytest.mark.parametrize(
    "world, name, problem",
    [
        ([device("HDMI", inputs=False)], "", "no audio input devices found"),
        ([device(USB)], "Blue Yeti", "no input device 'Blue Yeti'"),
        ([device(USB, rates={96000})], "USB", f"'{USB}' accepts none of"),
    ],
)
def test_doctor_says_what_is_wrong_and_how_to_fix_it(world, name, problem):
    from hub.audio.probe import probe_input

    report = probe_input(AudioSettings(input_device=name), sd=FakeSd(world, raise_when_empty=False))
    assert report.problem.startswith(problem) and report.fix
    assert report.chosen is None or report.accepted == []


class SilentStream:
    """A source that delivers nothing (a suspended sound server, a stalled USB device): a
    read blocks until the test lets it go; nothing is ever available."""

    def __init__(self):
        self.reads, self.closed, self.release = 0, False, threading.Event()
        self.read_available = 0

    def read(self, frames):
        self.reads += 1
        self.release.wait(30)
        return np.zeros((frames, 1), np.int16), False

    def close(self):
        self.closed = True


def test_a_stop_ends_blocks_of_a_source_that_delivers_nothing():
    """SIGTERM left the capture thread in a read that never returned ("a thread did not
    stop in time"): with ``stop`` the mic reads only a block the device holds."""
    sd, stream, stop = FakeSd([device("USB")]), SilentStream(), threading.Event()
    mic = Mic(sd, "USB", stream, MicConfig("USB", 16000, 1), wait_s=0, sleep=sd.sleep)
    got, ended = [], threading.Event()

    def read_all():
        got.extend(mic.blocks(stop))
        ended.set()

    reader = threading.Thread(target=read_all, daemon=True)
    reader.start()
    stop.set()
    assert ended.wait(5)  # without ``stop`` this read would never return
    stream.release.set()
    assert got == [] and stream.reads == 0
