"""load_wav: any WAV container -> 16 kHz mono int16 (cases BC-04, BC-05, format kinds).

Every derived input is built in tmp_path from two shared 16 kHz mono 16-bit references,
with sox or with hand-written RIFF chunks (``struct``).
"""

from __future__ import annotations

import dataclasses
import logging
import struct
import wave
from pathlib import Path

import numpy as np
import pytest

from hub.audio import frames, load_wav, read_pcm, speech_present
from hub.errors import BadInputError

from audio_helpers import (  # noqa: F401  (ref, ref_gen are fixtures)
    chunk,
    fmt_chunk,
    fmt_extensible,
    pcm16_bytes,
    ref,
    ref_gen,
    riff,
    sox,
    write,
)

# ---------------------------------------------------------------- the reference itself


def test_reference_loads_unchanged(ref):
    path, samples = ref
    audio = load_wav(path)
    assert audio.samples.dtype == np.int16 and audio.samples.shape == samples.shape
    np.testing.assert_array_equal(audio.samples, samples)
    assert (audio.rate, audio.source_rate, audio.source_channels) == (16000, 16000, 1)
    assert audio.source_format == "pcm16" and audio.warnings == ()
    assert audio.duration_s == len(samples) / 16000


def test_audio_is_frozen_and_read_only(ref_gen):
    audio = load_wav(ref_gen[0])
    with pytest.raises(dataclasses.FrozenInstanceError):
        audio.rate = 8000
    with pytest.raises(ValueError):
        audio.samples[0] = 1


# ---------------------------------------------------------------- pure format changes


SOX_FORMATS = [
    # (sox output options, expected source_format, tolerance in 16-bit LSB)
    (["-b", "24"], "pcm24", 0),  # sox writes WAVE_FORMAT_EXTENSIBLE + fact chunk
    (["-b", "32"], "pcm32", 0),  # extensible too
    (["-e", "floating-point", "-b", "32"], "float32", 0),
    (["-e", "floating-point", "-b", "64"], "float64", 0),
    (["-e", "unsigned", "-b", "8", "-D"], "pcm8", 256),  # one 8-bit step
    (["-b", "8"], "pcm8", 256 + 128),  # with sox's default dither
    (["-B", "-b", "16"], "pcm16", 0),  # RIFX, big-endian
    (["-B", "-b", "24"], "pcm24", 0),
]


@pytest.mark.parametrize(
    "opts,name,tol",
    SOX_FORMATS,
    ids=lambda v: "".join(map(str, v)) if isinstance(v, list) else None,
)
def test_sample_format_changes_give_reference_samples(ref, tmp_path, opts, name, tol):
    path, samples = ref
    out = tmp_path / "derived.wav"
    sox(path, *opts, out)
    audio = load_wav(out)
    assert audio.source_format == name and audio.warnings == ()
    assert audio.samples.shape == samples.shape
    diff = np.abs(audio.samples.astype(np.int32) - samples)
    assert diff.max() <= tol


def test_extensible_pcm16_hand_built(ref_gen, tmp_path):
    _, samples = ref_gen
    data = riff(fmt_extensible(), chunk(b"data", pcm16_bytes(samples)))
    path = write(tmp_path / "ext16.wav", data)
    audio = load_wav(path)
    np.testing.assert_array_equal(audio.samples, samples)
    assert audio.source_format == "pcm16" and audio.warnings == ()


def test_extensible_float_and_24_in_32(ref_gen, tmp_path):
    _, samples = ref_gen
    f32 = (samples.astype(np.float32) / 32768).astype("<f4").tobytes()
    in32 = (samples.astype("<i4") << 16).tobytes()  # 24 valid bits, left-justified in 32
    for name, fmt, data in [
        ("float32", fmt_extensible(3, bits=32), f32),
        ("pcm24in32", fmt_extensible(1, bits=32, valid=24), in32),
    ]:
        path = write(tmp_path / f"{name}.wav", riff(fmt, chunk(b"data", data)))
        audio = load_wav(path)
        np.testing.assert_array_equal(audio.samples, samples)
        assert audio.source_format == name


def test_extra_chunks_before_and_after_data(ref_gen, tmp_path):
    _, samples = ref_gen
    info = chunk(b"LIST", b"INFOINAM" + struct.pack("<I", 5) + b"kitc\0")  # odd: padded
    assert len(info) % 2 == 0
    fact = chunk(b"fact", struct.pack("<I", len(samples)))
    cue = chunk(b"cue ", struct.pack("<I", 1) + struct.pack("<II4sIII", 1, 0, b"data", 0, 0, 9))
    junk = chunk(b"JUNK", b"\0" * 27)
    data = riff(info, fmt_chunk(), fact, junk, chunk(b"data", pcm16_bytes(samples)), cue, info)
    audio = load_wav(write(tmp_path / "chunks.wav", data))
    np.testing.assert_array_equal(audio.samples, samples)
    assert audio.warnings == ()


def test_data_chunk_before_fmt(ref_gen, tmp_path):
    _, samples = ref_gen
    data = riff(chunk(b"data", pcm16_bytes(samples)), fmt_chunk())
    np.testing.assert_array_equal(load_wav(write(tmp_path / "x.wav", data)).samples, samples)


def test_odd_chunk_without_pad_byte(ref_gen, tmp_path):
    """Some writers forget the pad byte after an odd-length chunk."""
    _, samples = ref_gen
    odd = b"LIST" + struct.pack("<I", 5) + b"INFOx"  # no pad byte
    data = riff(fmt_chunk(), odd, chunk(b"data", pcm16_bytes(samples)))
    audio = load_wav(write(tmp_path / "nopad.wav", data))
    np.testing.assert_array_equal(audio.samples, samples)


def test_odd_length_8bit_data_is_padded(tmp_path):
    u8 = bytes([128, 255, 0, 128, 192])  # 5 samples: odd data chunk, then pad, then LIST
    data = riff(fmt_chunk(bits=8), chunk(b"data", u8), chunk(b"LIST", b"INFO"))
    audio = load_wav(write(tmp_path / "odd8.wav", data))
    assert audio.samples.tolist() == [0, 127 * 256, -32768, 0, 64 * 256]
    assert audio.warnings == ()


def test_wrong_block_align_is_repaired(ref_gen, tmp_path):
    _, samples = ref_gen
    data = riff(fmt_chunk(align=0), chunk(b"data", pcm16_bytes(samples)))
    audio = load_wav(write(tmp_path / "align.wav", data))
    np.testing.assert_array_equal(audio.samples, samples)
    assert audio.warnings == ("header block align 0 disagrees with 1ch x 16-bit; using 2",)


def test_partial_last_frame_is_dropped(ref_gen, tmp_path):
    _, samples = ref_gen
    raw = pcm16_bytes(samples) + b"\x01"
    data = riff(fmt_chunk(), b"data" + struct.pack("<I", len(raw)) + raw + b"\0")
    audio = load_wav(write(tmp_path / "partial.wav", data))
    np.testing.assert_array_equal(audio.samples, samples)
    assert audio.warnings == ("dropped 1 bytes of a partial frame at the end",)


# ---------------------------------------------------------------- BC-05: header lengths


def _patch(data: bytes, offset: int, value: int) -> bytes:
    return data[:offset] + struct.pack("<I", value) + data[offset + 4 :]


def _data_size_offset(data: bytes) -> int:
    return data.index(b"data") + 4


def test_bc05c_data_size_zero_uses_bytes_present(ref, tmp_path, caplog):
    path, samples = ref
    data = _patch(path.read_bytes(), 40, 0)
    with caplog.at_level(logging.WARNING, logger="hub.audio"):
        audio = load_wav(write(tmp_path / "bc05c_data0.wav", data))
    np.testing.assert_array_equal(audio.samples, samples)
    note = f"header data size 0 disagrees with file; using {2 * len(samples)} bytes present"
    assert audio.warnings == (note,)
    assert note in caplog.text


def test_bc05d_sizes_ffffffff_use_bytes_present(ref, tmp_path, caplog):
    path, samples = ref
    data = _patch(_patch(path.read_bytes(), 4, 0xFFFFFFFF), 40, 0xFFFFFFFF)
    with caplog.at_level(logging.DEBUG, logger="hub.audio"):
        audio = load_wav(write(tmp_path / "bc05d_ff.wav", data))
    np.testing.assert_array_equal(audio.samples, samples)
    assert audio.duration_s == len(samples) / 16000
    assert audio.warnings == (
        f"header RIFF size 4294967295 disagrees with file size {len(data)}",
        f"header data size 4294967295 disagrees with file; using {2 * len(samples)} bytes present",
    )
    assert "2147483647" not in caplog.text
    assert f"{audio.duration_s:.2f} s of pcm16" in caplog.text


@pytest.mark.parametrize("size", [0, 0xFFFFFFFF, 1000, 12345])
def test_wrong_data_size_in_sox_extensible_stereo(ref_gen, tmp_path, size):
    """The same repair in a 24-bit extensible stereo 44.1 kHz file with a fact chunk."""
    path, samples = ref_gen
    good = tmp_path / "good.wav"
    sox(path, "-r", "44100", "-c", "2", "-b", "24", good)
    data = good.read_bytes()
    bad = write(tmp_path / "bad.wav", _patch(data, _data_size_offset(data), size))
    expected, repaired = load_wav(good), load_wav(bad)
    np.testing.assert_array_equal(repaired.samples, expected.samples)
    present = len(data) - _data_size_offset(data) - 4
    assert (
        f"header data size {size} disagrees with file; using {present} bytes present"
        in repaired.warnings
    )


def test_ffff_data_with_riff_size_also_wrong_and_no_fmt_after(ref_gen, tmp_path):
    """0xFFFFFFFF in an RF64-style streaming header: the data runs to the end of the file."""
    path, samples = ref_gen
    raw = pcm16_bytes(samples)
    data = riff(fmt_chunk(), b"data" + struct.pack("<I", 0xFFFFFFFF) + raw, riff_size=0xFFFFFFFF)
    audio = load_wav(write(tmp_path / "stream.wav", data))
    np.testing.assert_array_equal(audio.samples, samples)


def test_bc05a_empty_wav_gives_zero_samples(tmp_path):
    path = tmp_path / "bc05a_empty.wav"
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
    assert path.stat().st_size == 44
    audio = load_wav(path)
    assert audio.samples.shape == (0,) and audio.samples.dtype == np.int16
    assert audio.duration_s == 0.0 and audio.warnings == ()
    assert list(frames(audio)) == [] and speech_present(audio) is False


def test_empty_44k_stereo_float_gives_zero_samples(tmp_path):
    path = tmp_path / "empty.wav"
    sox("-n", "-r", "44100", "-c", "2", "-e", "floating-point", "-b", "32", path, "trim", "0", "0")
    audio = load_wav(path)
    assert audio.samples.shape == (0,) and audio.source_format == "float32"


@pytest.mark.parametrize("cut", [4, 8, 11, 12, 20, 30, 35, 36, 40, 43])
def test_bc05b_truncated_header(ref, tmp_path, cut):
    path, _ = ref
    bad = write(tmp_path / f"bc05b_trunc{cut}.wav", path.read_bytes()[:cut])
    with pytest.raises(BadInputError) as err:
        load_wav(bad)
    assert err.value.message == f"truncated/corrupt WAV header: {bad}"
    assert err.value.kind == "bad_input" and err.value.file == str(bad)


def test_bc05b_truncated_extensible_fmt(ref_gen, tmp_path):
    good = tmp_path / "good.wav"
    sox(ref_gen[0], "-b", "24", good)
    bad = write(tmp_path / "cut.wav", good.read_bytes()[:50])  # inside the 40-byte fmt chunk
    with pytest.raises(BadInputError, match="^truncated/corrupt WAV header: "):
        load_wav(bad)


def test_cut_right_after_header_gives_zero_samples_with_warning(ref_gen, tmp_path):
    data = ref_gen[0].read_bytes()[:44]
    audio = load_wav(write(tmp_path / "cut44.wav", data))
    assert len(audio.samples) == 0
    assert audio.warnings == (
        f"header RIFF size {len(ref_gen[0].read_bytes()) - 8} disagrees with file size 44",
        f"header data size {len(ref_gen[1]) * 2} disagrees with file; using 0 bytes present",
    )


def test_data_size_too_small_with_audio_after(ref_gen, tmp_path):
    """A header finalised early (recorder crashed later): the bytes after it are audio too."""
    path, samples = ref_gen
    data = _patch(path.read_bytes(), 40, 2 * 1000)
    audio = load_wav(write(tmp_path / "early.wav", data))
    np.testing.assert_array_equal(audio.samples, samples)
    assert (
        audio.warnings[-1]
        == f"header data size 2000 disagrees with file; using {2 * len(samples)} bytes present"
    )


def test_garbage_after_last_chunk_is_ignored(ref_gen, tmp_path):
    path, samples = ref_gen
    data = riff(fmt_chunk(), chunk(b"data", pcm16_bytes(samples)), chunk(b"LIST", b"INFO"))
    data += b"\x00\x01\x02\x03garbage!"
    audio = load_wav(write(tmp_path / "tail.wav", data))
    np.testing.assert_array_equal(audio.samples, samples)
    assert audio.warnings[-1] == "ignored 12 bytes after the last chunk"


def test_float_samples_are_cleaned(tmp_path):
    values = np.array([0.5, 2.0, -3.0, np.nan, np.inf, -np.inf, -1.0], "<f4")
    data = riff(fmt_chunk(tag=3, bits=32), chunk(b"data", values.tobytes()))
    path = write(tmp_path / "f.wav", data)
    assert load_wav(path).samples.tolist() == [16384, 32767, -32768, 0, 32767, -32768, -32768]


def test_rf64_container(ref_gen, tmp_path):
    """RF64 (EBU Tech 3306): sizes are 0xFFFFFFFF and the real ones sit in a ds64 chunk."""
    path, samples = ref_gen
    raw = pcm16_bytes(samples)
    ds64 = chunk(b"ds64", struct.pack("<QQQI", len(raw) + 36 + 36, len(raw), len(samples), 0))
    data = riff(
        ds64, fmt_chunk(), b"data" + struct.pack("<I", 0xFFFFFFFF) + raw, riff_size=0xFFFFFFFF
    )
    audio = load_wav(write(tmp_path / "rf64.wav", b"RF64" + data[4:]))
    np.testing.assert_array_equal(audio.samples, samples)


# ---------------------------------------------------------------- BC-04: not a WAV


def _not_wav(tmp_path: Path, ref_path: Path, kind: str) -> Path:
    dest = tmp_path / f"bc04_{kind}.wav"
    if kind == "noheader":
        sox(ref_path, "-t", "raw", "-e", "signed", "-b", "16", "-c", "1", tmp_path / "bc04.pcm")
        dest.write_bytes((tmp_path / "bc04.pcm").read_bytes())
    elif kind == "ogg":
        sox(ref_path, tmp_path / "bc04.ogg")
        dest.write_bytes((tmp_path / "bc04.ogg").read_bytes())
    elif kind == "data_only":
        dest.write_bytes(ref_path.read_bytes()[44:])
    elif kind == "text":
        dest.write_text("turn on the kitchen light\n")
    elif kind == "empty":
        dest.write_bytes(b"")
    elif kind == "avi":
        dest.write_bytes(b"RIFF" + struct.pack("<I", 4) + b"AVI ")
    elif kind == "r":
        dest.write_bytes(b"RI")
    return dest


@pytest.mark.parametrize("kind", ["noheader", "ogg", "data_only", "text", "empty", "avi", "r"])
def test_bc04_not_a_wav(ref_gen, tmp_path, kind):
    bad = _not_wav(tmp_path, ref_gen[0], kind)
    with pytest.raises(BadInputError) as err:
        load_wav(bad)
    assert str(err.value) == f"not a RIFF/WAVE file: {bad}"
    assert err.value.kind == "bad_input" and "\n" not in str(err.value)


def test_bc04_raw_pcm_through_read_pcm(ref, tmp_path):
    path, samples = ref
    bad = _not_wav(tmp_path, path, "noheader")
    audio = read_pcm(bad, rate=16000, channels=1, width=2)
    np.testing.assert_array_equal(audio.samples, samples)
    assert audio.source_format == "pcm16" and audio.warnings == ()


# ---------------------------------------------------------------- unsupported formats


@pytest.mark.parametrize(
    "opts,detail",
    [
        (["-e", "mu-law"], "format tag 0x0007, mu-law"),
        (["-e", "a-law"], "format tag 0x0006, A-law"),
        (["-e", "ima-adpcm"], "format tag 0x0011, IMA ADPCM"),
        (["-e", "ms-adpcm"], "format tag 0x0002, MS ADPCM"),
        (["-e", "gsm-full-rate", "-r", "8000"], "format tag 0x0031, GSM 6.10"),
    ],
)
def test_unsupported_codecs(ref_gen, tmp_path, opts, detail):
    out = tmp_path / "codec.wav"
    sox(ref_gen[0], *opts, out)
    with pytest.raises(BadInputError) as err:
        load_wav(out)
    assert str(err.value) == f"unsupported WAV format: {out} ({detail})"


@pytest.mark.parametrize(
    "fmt,detail",
    [
        (fmt_chunk(bits=12, align=2), "12-bit PCM"),
        (fmt_chunk(channels=0, align=2), "0 channels"),
        (fmt_chunk(rate=0), "0 Hz"),
        (fmt_chunk(tag=3, bits=16), "16-bit float"),
        (fmt_chunk(tag=0x55), "format tag 0x0055, MP3"),
        (fmt_extensible(sub_tag=1, bits=32, valid=40), "40-bit PCM"),
    ],
)
def test_unsupported_headers(tmp_path, fmt, detail):
    bad = write(tmp_path / "bad.wav", riff(fmt, chunk(b"data", b"\0" * 64)))
    with pytest.raises(BadInputError) as err:
        load_wav(bad)
    assert str(err.value) == f"unsupported WAV format: {bad} ({detail})"


def test_unknown_extensible_subformat(tmp_path):
    fmt = bytearray(fmt_extensible())
    fmt[8 + 24 + 8 :] = b"\x12" * 8  # not the KSDATAFORMAT GUID tail
    bad = write(tmp_path / "guid.wav", riff(bytes(fmt), chunk(b"data", b"\0" * 4)))
    with pytest.raises(BadInputError, match=r"^unsupported WAV format: .*extensible sub-format"):
        load_wav(bad)


# ---------------------------------------------------------------- cannot read


def test_cannot_read_missing_file_or_directory(tmp_path):
    missing = tmp_path / "nope.wav"
    for path, reason in [(missing, "No such file or directory"), (tmp_path, "Is a directory")]:
        with pytest.raises(BadInputError) as err:
            load_wav(path)
        assert str(err.value) == f"cannot read {path}: {reason}"
        assert err.value.kind == "bad_input"
    with pytest.raises(BadInputError, match="^cannot read "):
        read_pcm(missing, rate=16000)
