"""``hub doctor`` names the wake word model and the second recognizer (the breaker's finding:
it said nothing of either, so a user could not tell why "okay nabu" or a rejected command
behaved as it did)."""

from __future__ import annotations

import dataclasses

import pytest

from hub.cli.doctor import _second_pass_line, _wake_line
from hub.errors import ConfigError
from hub.settings import load_settings


def test_doctor_says_which_wake_word_loads_and_when_none_is_used():
    settings = load_settings(None)
    assert _wake_line(settings) == "okay_nabu (microWakeWord, built-in; loads)"
    off = dataclasses.replace(settings, wake=dataclasses.replace(settings.wake, enabled=False))
    assert _wake_line(off).startswith("off ([wake] enabled = false")
    bad = dataclasses.replace(settings, wake=dataclasses.replace(settings.wake, model="nope"))
    with pytest.raises(ConfigError, match="wake.model"):  # doctor's line: "unavailable: ..."
        _wake_line(bad)


def test_doctor_says_whether_the_second_pass_runs_and_with_which_model(tmp_path):
    settings = load_settings(None)
    line = _second_pass_line(settings)
    assert line.startswith("Whisper ") and "freed 60 s after use" in line
    asr = dataclasses.replace(settings.asr, second_pass=False)
    assert _second_pass_line(dataclasses.replace(settings, asr=asr)).startswith("off (")
    asr = dataclasses.replace(settings.asr, whisper_model=str(tmp_path))
    assert _second_pass_line(dataclasses.replace(settings, asr=asr)) == (
        f"missing: no model.bin in {tmp_path}"
    )
