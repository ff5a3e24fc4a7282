"""The ``[asr]`` second-pass keys: defaults, ``hub config example``, bad values, checks."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hub.errors import ConfigError
from hub.settings import load_settings, settings_from_dict


def test_defaults_and_example():
    asr = settings_from_dict({}).asr
    assert asr.second_pass and asr.whisper_compute_type == "int8" and asr.whisper_beam_size == 1
    out = subprocess.run(
        [sys.executable, "-m", "hub", "config", "example"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for key in (
        "second_pass",
        "whisper_model",
        "whisper_compute_type",
        "whisper_threads",
        "whisper_beam_size",
        "whisper_keep_loaded_s",
        "min_speech_ms",
    ):
        assert f"\n{key} = " in out


def test_bad_values_name_the_key(tmp_path):
    with pytest.raises(ConfigError, match="asr.whisper_compute_type"):
        settings_from_dict({"asr": {"whisper_compute_type": "float16x"}})
    config = tmp_path / "hub.toml"
    config.write_text(f'[asr]\nwhisper_model = "{tmp_path / "none"}"\n')
    with pytest.raises(ConfigError, match="asr.whisper_model"):
        load_settings(str(config), warn_no_home=False)
