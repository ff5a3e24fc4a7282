"""``hub config example`` and the config checks for meaning: one line with the key's path,
exit 2.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from hub.cli.config import example
from hub.cli.main import main
from hub.settings import SAMPLE_HOME, SECTIONS, Settings, settings_from_dict

REPO = Path(__file__).resolve().parents[2]
HOME = """
[[home.areas]]
name = "Kitchen"
[[home.entities]]
name = "Kitchen Light"
domain = "light"
area = "Kitchen"
"""

BROKEN = [
    ("[asr]\nnbest = 'x'\n", "asr.nbest: expected an integer, got 'x'"),
    ("[mqtt]\nhots = 'broker'\n", "mqtt.hots: unknown key"),
    ("[speaker]\nvolume = 3\n", "speaker: unknown section"),
    (
        "[[home.entities]]\nname = 'Fan'\ndomain = 'fna'\n",
        "home.entities[0].domain: unknown domain 'fna' (did you mean 'fan'?)",
    ),
    (
        "[[home.entities]]\nname = 'Front Door'\ndomain = 'lock'\nstate = 'lockd'\n",
        "home.entities[0].state: 'lockd' is not a state of a lock",
    ),
    (
        "[[home.entities]]\nname = 'Lamp'\ndomain = 'light'\nfeatures = ['open']\n",
        "home.entities[0].features[0]: 'open' is not a feature of a light",
    ),
    (
        HOME + "[[home.entities]]\nname = 'kitchen  light'\ndomain = 'switch'\n",
        "home.entities[1].name: 'kitchen  light' is already the name of home.entities[0]",
    ),
    (
        "[[home.entities]]\nname = 'Lamp'\ndomain = 'light'\narea = 'Attic'\n",
        "home.entities[0].area: no area named 'Attic'",
    ),
    (
        "[[home.areas]]\nname = 'Attic'\nfloor = 'Top Floor'\n",
        "home.areas[0].floor: no floor named 'Top Floor'",
    ),
    ("[wake]\nmodel = 'hey_bob'\n", "wake.model: no wake word 'hey_bob'"),
    (
        "[tts]\nvoice = '/nonexistent/en_US-bob.onnx'\n",
        "tts.voice: no Piper voice file '/nonexistent/en_US-bob.onnx'",
    ),
    ("[asr\nengine = 'vosk'\n", "not valid TOML"),
    ("[resilience]\ninject = ['asr=explode']\n", "resilience.inject[0]: "),
    (
        "[store]\nfingerprint_strict = 0.7\nfingerprint_loose = 0.8\n",
        "store.fingerprint_strict: must be at least fingerprint_loose (0.8), got 0.7",
    ),
    (
        "[[home.entities]]\nname = 'Heater'\ndomain = 'climate'\n"
        "attributes = { current_temperature = 'warm' }\n",
        "home.entities[0].attributes.current_temperature: expected a number, got 'warm'",
    ),
]


@pytest.mark.parametrize("text, message", BROKEN, ids=[m.split(":")[0] for _, m in BROKEN])
def test_broken_config_gives_one_line_and_exit_2(tmp_path, capsys, text, message):
    path = tmp_path / "hub.toml"
    path.write_text(text, encoding="utf-8")
    code = main(["config", "check", "--config", str(path)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"hub: config: {path}: ") and message in err


def test_example_has_every_section_and_field_and_reads_back_as_the_defaults():
    text = example()
    for name, cls in SECTIONS.items():
        assert f"\n[{name}]\n" in text
        for f in dataclasses.fields(cls):
            description = cls.__pydantic_fields__[f.name].description
            assert description, f"{name}.{f.name} has no docstring"
            assert f"{f.name} = " in text or f"[[{name}.{f.name}]]" in text
    sample = settings_from_dict(tomllib.loads(SAMPLE_HOME.read_text(encoding="utf-8")))
    assert settings_from_dict(tomllib.loads(text)) == dataclasses.replace(
        Settings(), home=sample.home
    )


def test_example_then_doctor_passes(tmp_path):
    # The example's [audio] section wants a microphone: the test sound server of
    # scripts/start-test-audio.sh (started here when it is not running) provides one.
    audio = subprocess.run(
        ["bash", str(REPO / "scripts" / "start-test-audio.sh")],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    audio_env = dict(
        shlex.split(line.removeprefix("export "))[0].split("=", 1)
        for line in audio.stdout.splitlines()
        if line.startswith("export ")
    )
    env = {
        **os.environ,
        **audio_env,
        "PYTHONPATH": str(REPO),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    made = subprocess.run(
        [sys.executable, "-m", "hub", "config", "example"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    (tmp_path / "hub.toml").write_text(made.stdout, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "hub", "doctor", "--config", "hub.toml", "--store", ":memory:"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert "hub.toml" in run.stdout and "Traceback" not in run.stderr


def test_config_without_home_says_the_hub_knows_no_devices(tmp_path, caplog):
    from hub.settings import load_settings

    path = tmp_path / "hub.toml"
    path.write_text("[audio]\ninput_device = 'USB'\n", encoding="utf-8")
    settings = load_settings(str(path))
    assert settings.home.entities == () and settings.audio.input_device == "USB"
    assert "no [home] section: the hub knows no devices" in caplog.text
