"""Conversion: rate, channels, raw PCM, frames, speech check (cases BC-01, BC-02, BC-07d).

Every derived input is built in tmp_path from two shared 16 kHz mono 16-bit references.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import numpy as np
import pytest

from hub.audio import Audio, downmix, frames, load_wav, read_pcm, speech_present, to_mono_16k
from hub.errors import BadInputError

from audio_helpers import best_correlation, ref, ref_gen, rms, sox  # noqa: F401  (fixtures)

# ---------------------------------------------------------------- BC-01, BC-02: rate, channels


RESAMPLED = [
    # (id, sox options (plus effects), source rate, channels, expected warning)
    (
        "bc01_8k",
        ["-r", "8000", "-c", "1", "-b", "16"],
        8000,
        1,
        "resampled 8000->16000 Hz, 1ch->1ch",
    ),
    (
        "bc02a_44k_stereo",
        ["-r", "44100", "-c", "2"],
        44100,
        2,
        "resampled 44100->16000 Hz, 2ch->1ch",
    ),
    (
        "bc02b_left_only",
        ["-r", "44100", "-c", "2", "remix", "1", "0"],
        44100,
        2,
        "resampled 44100->16000 Hz, 2ch->1ch",
    ),
    (
        "right_only_48k_float",
        ["-r", "48000", "-e", "floating-point", "-b", "32", "-c", "2", "remix", "0", "1"],
        48000,
        2,
        "resampled 48000->16000 Hz, 2ch->1ch",
    ),
    (
        "anti_phase_22k",
        ["-r", "22050", "-c", "2", "remix", "1", "1v-1"],
        22050,
        2,
        "resampled 22050->16000 Hz, 2ch->1ch",
    ),
    (
        "11k_8bit_4ch",
        ["-r", "11025", "-b", "8", "-c", "4"],
        11025,
        4,
        "resampled 11025->16000 Hz, 4ch->1ch",
    ),
    ("16k_stereo", ["-c", "2"], 16000, 2, "downmixed 16000->16000 Hz, 2ch->1ch"),
]


@pytest.mark.parametrize(
    "opts,rate,channels,note", [r[1:] for r in RESAMPLED], ids=[r[0] for r in RESAMPLED]
)
def test_resampled_and_downmixed_match_reference(ref, tmp_path, caplog, opts, rate, channels, note):
    path, samples = ref
    out = tmp_path / "derived.wav"
    cut = opts.index("remix") if "remix" in opts else len(opts)
    sox(path, *opts[:cut], out, *opts[cut:])
    with caplog.at_level(logging.INFO, logger="hub.audio"):
        audio = load_wav(out)
    assert (audio.rate, audio.source_rate, audio.source_channels) == (16000, rate, channels)
    assert note in audio.warnings
    assert f"{rate} Hz/{channels}ch -> 16000 Hz/1ch" in caplog.text
    assert abs(len(audio.samples) - len(samples)) <= 0.01 * len(samples)
    assert best_correlation(audio.samples, samples) > 0.9
    # one live channel keeps the reference level: not halved by the downmix
    assert 0.8 < rms(audio.samples) / rms(samples) < 1.25


def test_left_only_downmix_is_reported(ref_gen, tmp_path):
    out = tmp_path / "bc02b_left_only.wav"
    sox(ref_gen[0], "-r", "44100", "-c", "2", out, "remix", "1", "0")
    assert "downmix: used channel 1 of 2 (others near-silent)" in load_wav(out).warnings


def test_16k_identical_channels_average_exactly(ref_gen, tmp_path):
    out = tmp_path / "dual.wav"
    sox(ref_gen[0], "-c", "2", out)
    np.testing.assert_array_equal(load_wav(out).samples, ref_gen[1])


def test_downmix_rules():
    t = np.linspace(0, 1, 16000, dtype=np.float32)
    s = 0.5 * np.sin(2 * np.pi * 440 * t)
    hiss = np.float32(1e-4) * np.cos(2 * np.pi * 50 * t)  # 74 dB below s
    cases = [
        (np.stack([s, s], axis=1), s, None),
        (np.stack([hiss, s], axis=1), s, "downmix: used channel 2 of 2 (others near-silent)"),
        (
            np.stack([s, -s], axis=1),
            s,
            "downmix: channels cancel (anti-phase); used channel 1 of 2",
        ),
        (np.stack([s, 0.5 * s], axis=1), 0.75 * s, None),  # 6 dB apart: a plain average
        (np.stack([s, s, hiss], axis=1), s, "downmix: used channel 1, 2 of 3 (others near-silent)"),
        (np.zeros((100, 2), np.float32), np.zeros(100, np.float32), None),
        (np.zeros((0, 2), np.float32), np.zeros(0, np.float32), None),
    ]
    for frames_in, expected, expected_note in cases:
        mono, note = downmix(frames_in)
        np.testing.assert_allclose(mono, expected, atol=1e-7)
        assert note == expected_note


def _tone(freq: float, rate: int, seconds: float = 1.0, channels: int = 1) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    x = (0.5 * np.sin(2 * np.pi * freq * t)).astype(np.float32)
    return np.repeat(x[:, None], channels, axis=1)


def test_to_mono_16k_is_a_real_filter():
    """7 kHz passes; 10 kHz (above the new 8 kHz Nyquist) is removed, not aliased to 6 kHz."""
    passed = to_mono_16k(_tone(7000, 44100, channels=2), 44100)
    stopped = to_mono_16k(_tone(10000, 44100, channels=2), 44100)
    assert passed.dtype == np.int16 and passed.shape == (16000,)
    assert rms(passed[1000:-1000]) == pytest.approx(0.5 / np.sqrt(2) * 32768, rel=0.02)
    assert rms(stopped[1000:-1000]) < 0.5 / np.sqrt(2) * 32768 * 10 ** (-80 / 20)


def test_to_mono_16k_upsamples_8k_tone():
    out = to_mono_16k(_tone(1000, 8000)[:, 0], 8000)
    spectrum = np.abs(np.fft.rfft(out.astype(np.float64)))
    assert out.shape == (16000,) and np.argmax(spectrum) == 1000


def test_to_mono_16k_accepts_int16_frames():
    x = (_tone(440, 16000, channels=2) * 32767).astype(np.int16)
    np.testing.assert_array_equal(to_mono_16k(x, 16000), x[:, 0])


@pytest.mark.parametrize(
    "opts,rate,channels,width,encoding,name",
    [
        (["-r", "8000", "-e", "signed", "-b", "16"], 8000, 1, 2, None, "pcm16"),
        (["-r", "44100", "-c", "2", "-e", "signed", "-b", "24"], 44100, 2, 3, None, "pcm24"),
        (["-r", "48000", "-e", "floating-point", "-b", "32"], 48000, 1, 4, "float", "float32"),
        (["-e", "unsigned", "-b", "8", "-D"], 16000, 1, 1, None, "u8"),
        (["-e", "signed", "-b", "8", "-D"], 16000, 1, 1, "signed", "s8"),
    ],
)
def test_read_pcm_formats(ref_gen, tmp_path, opts, rate, channels, width, encoding, name):
    path, samples = ref_gen
    raw = tmp_path / "x.raw"
    sox(path, "-t", "raw", *opts, raw)
    audio = read_pcm(raw, rate=rate, channels=channels, width=width, encoding=encoding)
    assert audio.source_format == name and audio.source_rate == rate
    assert abs(len(audio.samples) - len(samples)) <= 0.01 * len(samples)
    assert best_correlation(audio.samples, samples) > 0.9


@pytest.mark.parametrize(
    "kwargs,detail",
    [
        ({"rate": 0}, "0 Hz"),
        ({"rate": 16000, "channels": 0}, "0 channels"),
        ({"rate": 16000, "width": 5}, "signed samples of width 5"),
        ({"rate": 16000, "width": 2, "encoding": "float"}, "float samples of width 2"),
    ],
)
def test_read_pcm_bad_parameters(ref_gen, kwargs, detail):
    with pytest.raises(BadInputError) as err:
        read_pcm(ref_gen[0], **kwargs)
    assert str(err.value) == f"unsupported PCM format: {ref_gen[0]} ({detail})"


def test_read_pcm_warns_about_partial_frame_and_riff_header(ref_gen):
    audio = read_pcm(ref_gen[0], rate=16000, channels=5)  # 87084 bytes: 4 past whole frames
    assert audio.warnings[:2] == (
        "file has a RIFF header; decoded as raw PCM anyway",
        "dropped 4 bytes of a partial frame at the end",
    )


# ---------------------------------------------------------------- frames, speech_present


def test_frames_cut_30ms_chunks(ref_gen):
    audio = load_wav(ref_gen[0])
    chunks = list(frames(audio))
    assert {len(c) for c in chunks[:-1]} == {960}
    assert 0 < len(chunks[-1]) <= 960
    assert b"".join(chunks) == ref_gen[1].astype("<i2").tobytes()
    assert len(list(frames(audio, frame_ms=20))[0]) == 640
    with pytest.raises(ValueError):
        list(frames(audio, frame_ms=0))


def _sox_audio(tmp_path: Path, name: str, *args) -> Audio:
    out = tmp_path / name
    sox(*args[:-1], out, *args[-1])
    return load_wav(out)


def test_speech_present_on_speech(ref, tmp_path):
    path, _ = ref
    assert speech_present(load_wav(path)) is True
    assert speech_present(_sox_audio(tmp_path, "pad.wav", path, ["pad", "20", "8"])) is True
    clean = load_wav(path)
    hiss = np.random.default_rng(7).normal(0, 100, len(clean.samples))  # -50 dBFS white noise
    noisy = (clean.samples + hiss).clip(-32768, 32767).astype(np.int16)
    assert speech_present(dataclasses.replace(clean, samples=noisy)) is True


@pytest.mark.parametrize(
    "name,effects",
    [
        ("bc07d_silence60", ["trim", "0", "60"]),
        ("hiss", ["synth", "5", "whitenoise", "vol", "0.0005"]),
        ("loud_steady_noise", ["synth", "5", "pinknoise", "vol", "0.2"]),
        ("hum_dither", ["synth", "5", "sine", "50", "vol", "0.0002", "dither"]),
    ],
)
def test_speech_present_false_without_speech(tmp_path, name, effects):
    out = tmp_path / f"{name}.wav"
    sox("-n", "-r", "16000", "-c", "1", "-b", "16", out, *effects)
    assert speech_present(load_wav(out)) is False


# ---------------------------------------------------------------- recognition-level check


def _pocketsphinx_transcript(audio: Audio) -> str:
    """PocketSphinx (en-us model from the wheel) transcript, from a fresh decoder each time:
    the decoder adapts its cepstral mean across utterances, so a shared one would make the
    result depend on what it heard before."""
    from pocketsphinx import Decoder

    decoder = Decoder(loglevel="FATAL")
    decoder.start_utt()
    for chunk_bytes in frames(audio):
        decoder.process_raw(chunk_bytes)
    decoder.end_utt()
    hyp = decoder.hyp()
    return hyp.hypstr if hyp else ""


def test_bc02_stereo_and_left_only_give_the_reference_transcript(ref_gen, tmp_path):
    path, _ = ref_gen
    stereo, left = tmp_path / "bc02a_44k_stereo.wav", tmp_path / "bc02b_left_only.wav"
    sox(path, "-r", "44100", "-c", "2", stereo)
    sox(path, "-r", "44100", "-c", "2", left, "remix", "1", "0")
    expected = _pocketsphinx_transcript(load_wav(path))
    assert expected.startswith("set a timer for one hour")
    assert _pocketsphinx_transcript(load_wav(stereo)) == expected
    assert _pocketsphinx_transcript(load_wav(left)) == expected
