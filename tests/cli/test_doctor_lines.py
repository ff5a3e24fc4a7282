"""``hub doctor`` names the wake word model and the second recognizer (the breaker's finding:
it said nothing of either, so a user could not tell why "okay nabu" or a rejected command
behaved as it did)."""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

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


def test_breaker_a_wake_word_file_that_is_not_a_tflite_model_is_named_not_a_crash(tmp_path):
    """The breaker's finding: random bytes (or an empty file) as the wake word's .tflite, with
    a valid .json beside it, passed ``hub config check`` and crashed ``hub doctor`` and ``hub
    wyoming`` with SIGSEGV inside TensorFlow Lite; now config check and the detector name it."""
    import json
    import shutil

    from hub.config.files import wake_model_problem
    from hub.wake.detector import BUILTINS, WakeWord

    models = Path(importlib.util.find_spec("pymicro_wakeword").origin).parent / "models"
    config = json.loads((models / f"{BUILTINS[0]}.json").read_text(encoding="utf-8"))
    good = tmp_path / "good.json"
    shutil.copy(models / config["model"], tmp_path / "good.tflite")
    good.write_text(json.dumps({**config, "model": "good.tflite"}), encoding="utf-8")
    assert wake_model_problem(good) is None
    assert WakeWord(str(good)).model == str(good)  # a real model still loads
    for name, data in (("noise", bytes(range(256)) * 20), ("empty", b"")):
        (tmp_path / f"{name}.tflite").write_bytes(data)
        (tmp_path / f"{name}.json").write_text(
            json.dumps({**config, "model": f"{name}.tflite"}), encoding="utf-8"
        )
        with pytest.raises(ConfigError, match="is not a TensorFlow Lite model"):
            WakeWord(str(tmp_path / f"{name}.tflite"))
    (tmp_path / "list.json").write_text("[1, 2]", encoding="utf-8")
    assert "names no" in wake_model_problem(tmp_path / "list.json")
    toml = tmp_path / "hub.toml"
    toml.write_text(f'[wake]\nmodel = "{tmp_path / "noise.tflite"}"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="wake.model: .* is not a TensorFlow Lite model"):
        load_settings(str(toml))


def test_breaker_doctor_loads_the_whisper_model_so_a_broken_one_is_named(tmp_path):
    """The breaker's finding: ``hub doctor`` only looked for ``model.bin``; a file that does not
    load (random bytes, cut short) passed and every second pass then failed. Doctor loads it."""
    import shutil

    from hub.asr.whisper_engine import packaged_model_path

    settings = load_settings(None)
    assert "(loads; " in _second_pass_line(settings)  # the packaged model loads
    for name in sorted(p.name for p in packaged_model_path().iterdir() if p.is_file()):
        shutil.copy(packaged_model_path() / name, tmp_path / name)
    (tmp_path / "model.bin").write_bytes(bytes(range(256)) * 64)
    asr = dataclasses.replace(settings.asr, whisper_model=str(tmp_path))
    line = _second_pass_line(dataclasses.replace(settings, asr=asr))
    assert line.startswith("BROKEN: cannot load Whisper model ") and str(tmp_path) in line
