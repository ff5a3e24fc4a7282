"""The breaker's finding 1: a path that is not a regular file (``/dev/zero``, a FIFO) was read
without limit or hung, in ``load_wav`` and in every other reader of a file a user names. Each
is refused before a byte is read, and what is read is capped."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

from hub.audio import load_wav, read_pcm
from hub.audio.load import MAX_AUDIO_S
from hub.config.toml import read_toml
from hub.devices.ha.client import read_token
from hub.errors import BadInputError, ConfigError
from hub.intents.faq import Faq
from hub.intents.score import read_expect
from hub.intents.sentences import load_sentences
from hub.models.download import download_part
from hub.models.manifest import load_manifest
from hub.paths import NotRegularFileError, read_user_text
from hub.settings import HomeAssistantSettings

from audio_helpers import chunk, fmt_chunk, riff, write


@pytest.fixture()
def fifo(tmp_path) -> Path:
    """A named pipe nobody writes to: opening it for reading the usual way blocks forever."""
    path = tmp_path / "pipe.wav"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("which", ["fifo", "/dev/zero", "/dev/null"])
def test_finding1_load_wav_refuses_what_is_not_a_regular_file(fifo, which):
    path = fifo if which == "fifo" else Path(which)
    for load in (load_wav, lambda p: read_pcm(p, rate=16000)):
        with pytest.raises(BadInputError) as err:
            load(path)
        assert err.value.message == f"not a regular file: {path}"
        assert err.value.kind == "bad_input"


def test_finding1_a_symlink_to_a_device_is_refused_too(tmp_path):
    link = tmp_path / "zero.wav"
    link.symlink_to("/dev/zero")
    with pytest.raises(BadInputError, match="^not a regular file: "):
        load_wav(link)


def _header_only(path: Path, rate: int, data_bytes: int) -> Path:
    """A mono 8-bit WAV at ``rate`` whose data chunk holds ``data_bytes`` zero bytes, the file
    extended sparsely (nothing written for the samples)."""
    head = riff(fmt_chunk(rate=rate, bits=8), b"data" + struct.pack("<I", data_bytes))
    write(path, head)
    os.truncate(path, len(head) + data_bytes)
    return path


def test_finding1_audio_longer_than_the_limit_is_refused(tmp_path):
    rate = 1000  # 1000 bytes a second: the limit is reached by a small file
    long = _header_only(tmp_path / "long.wav", rate, int(MAX_AUDIO_S + 1) * rate)
    with pytest.raises(BadInputError) as err:
        load_wav(long)
    assert err.value.message == f"too long: {long} (601 s of audio; at most 600 s)"
    ok = _header_only(tmp_path / "ok.wav", rate, int(MAX_AUDIO_S) * rate)
    assert load_wav(ok).duration_s == pytest.approx(MAX_AUDIO_S, abs=0.01)


def test_finding1_a_large_file_is_mapped_and_refused_before_it_is_converted(tmp_path):
    """Over ``STREAM_BYTES`` the file is mapped, never read whole; its length is checked
    before a block is converted (a sparse 64 MB file: 35 minutes at 16 kHz 16-bit)."""
    head = riff(fmt_chunk(), b"data" + struct.pack("<I", 64 << 20))
    big = write(tmp_path / "big.wav", head)
    os.truncate(big, len(head) + (64 << 20))
    with pytest.raises(BadInputError, match=r"^too long: .*big\.wav \(2097 s of audio"):
        load_wav(big)


def test_finding1_raw_pcm_is_read_up_to_the_limit_only(tmp_path):
    raw = tmp_path / "long.pcm"
    raw.write_bytes(b"")
    os.truncate(raw, int(MAX_AUDIO_S + 5) * 1000)
    with pytest.raises(BadInputError, match=r"^too long: .*\(600 s of audio; at most 600 s\)"):
        read_pcm(raw, rate=1000, width=1)


def test_finding1_header_is_read_first_a_non_wav_is_refused_from_its_head(tmp_path):
    fake = write(tmp_path / "x.wav", b"not a wave file" + b"\0" * 100)
    with pytest.raises(BadInputError, match="^not a RIFF/WAVE file: "):
        load_wav(fake)
    good = write(tmp_path / "y.wav", riff(fmt_chunk(), chunk(b"data", b"\0\0" * 1600)))
    assert load_wav(good).duration_s == pytest.approx(0.1)


def _readers(tmp_path: Path):
    """Every reader of a text file a user names, as ``(name, call(path))``."""
    return [
        ("config", lambda p: read_toml(p)),
        ("faq", lambda p: Faq(p)),
        ("sentences", lambda p: load_sentences(_home(), [str(p)])),
        ("expect", lambda p: read_expect(p)),
        ("token", lambda p: read_token(HomeAssistantSettings(token_file=str(p)))),
        ("manifest", lambda p: load_manifest(p)),
        ("model source", lambda p: download_part(p, tmp_path / "m.part")),
    ]


def _home():
    from hub.home import Home

    return Home([])


@pytest.mark.parametrize("which", ["fifo", "/dev/zero"])
def test_finding1_every_user_file_reader_refuses_a_fifo_or_device(tmp_path, fifo, which):
    path = fifo if which == "fifo" else Path(which)
    for name, read in _readers(tmp_path):
        with pytest.raises((ConfigError, BadInputError, OSError)) as err:
            read(path)
        text = getattr(err.value, "message", None) or str(err.value)
        assert "not a regular file" in text, (name, text)


def test_finding1_user_text_is_capped_and_a_bom_dropped(tmp_path):
    path = tmp_path / "a.toml"
    path.write_bytes(b"\xef\xbb\xbfx = 1\n")
    assert read_user_text(path) == "x = 1\n"
    path.write_bytes(b"x" * 101)
    with pytest.raises(OSError, match="larger than"):
        read_user_text(path, limit=100)
    with pytest.raises(NotRegularFileError):
        read_user_text("/dev/zero")
