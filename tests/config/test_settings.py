"""Config: one TOML file turned into frozen settings; bad keys and values name their path."""

from __future__ import annotations

import pytest

from hub.errors import ConfigError
from hub.settings import ResilienceSettings, load_settings, settings_from_dict


@pytest.mark.parametrize(
    "data,message",
    [
        ({"asr": {"engin": "vosk"}}, "asr.engin: unknown key"),
        ({"asr": {"nbest": "x"}}, "asr.nbest: expected an integer, got 'x'"),
        ({"asr": {"engine": "whisper"}}, "asr.engine: must be one of auto, vosk, pocketsphinx"),
        ({"home": {"language": "de"}}, "home.language: must be one of en"),
        ({"tts": {"chunk_chars": 0}}, "tts.chunk_chars: must be between 10 and 10000, got 0"),
        ({"llm": {"min_confidence": 5}}, "llm.min_confidence: must be between 0 and 1"),
        ({"resilience": {"deadline_s": 0}}, "resilience.deadline_s: must be between 0.5 and 600"),
        (
            {"resilience": {"deadline_s": 1e308}},
            "resilience.deadline_s: must be between 0.5 and 600, got 1e+308",
        ),
        (
            {"resilience": {"timeouts_s": {"asr": float("inf")}}},
            "resilience.timeouts_s.asr: must be a positive number of seconds, at most 600",
        ),
        ({"resilience": {"breaker_failures": 0}}, "resilience.breaker_failures: must be between"),
        (
            {"resilience": {"timeouts_s": {"rulez": 1.0}}},
            "resilience.timeouts_s.rulez: unknown node",
        ),
        (
            {"resilience": {"timeouts_s": {"asr": 0}}},
            "resilience.timeouts_s.asr: must be a positive",
        ),
        ({"mqtt": {"qos": 7}}, "mqtt.qos: must be between 1 and 2"),
        (
            {"home": {"entities": [{"name": "X", "domain": "light", "area": "Attic"}]}},
            "home.entities[0].area: no area named 'Attic'",
        ),
        (
            {"home": {"entities": [{"name": "X", "domain": "light", "colour": "red"}]}},
            "home.entities[0].colour: unknown key",
        ),
    ],
)
def test_bad_config_names_the_key(data, message):
    with pytest.raises(ConfigError) as err:
        settings_from_dict(data)
    assert err.value.message.startswith(message)


def test_partial_timeouts_override_only_the_nodes_named():
    settings = settings_from_dict({"resilience": {"timeouts_s": {"rules": 2.5}}})
    expected = {**ResilienceSettings().timeouts_s, "rules": 2.5}
    assert settings.resilience.timeouts_s == expected


def test_config_file_errors_name_the_file(tmp_path):
    path = tmp_path / "hub.toml"
    path.write_text("[asr]\nnbest = 0\n")
    with pytest.raises(ConfigError) as err:
        load_settings(str(path))
    assert err.value.message == f"{path}: asr.nbest: must be between 1 and 100, got 0"


def test_defaults_carry_the_sample_home(monkeypatch):
    monkeypatch.delenv("HUB_CONFIG", raising=False)
    monkeypatch.setattr("hub.settings.DEFAULT_CONFIG_PATH", __import__("pathlib").Path("/nope"))
    settings = load_settings(None)
    assert {e["name"] for e in settings.home.entities} >= {"Kitchen Light", "Front Door"}


def test_every_number_setting_has_an_upper_bound():
    """The breaker's finding (``deadline_s = 1e308`` accepted) as a kind: no number in any
    section is unbounded (nor infinite, nor NaN)."""
    import dataclasses
    import typing

    import annotated_types

    from hub.config.satellites import SatelliteSettings
    from hub.settings import SECTIONS

    unbounded = []
    for name, cls in [*SECTIONS.items(), ("satellites", SatelliteSettings)]:
        hints = typing.get_type_hints(cls, include_extras=True)
        for field in dataclasses.fields(cls):
            hint = hints[field.name]
            base, *meta = typing.get_args(hint) or (hint,)
            if base not in (int, float):
                continue
            limits = [m for info in meta for m in getattr(info, "metadata", [info])]
            if not any(isinstance(m, (annotated_types.Le, annotated_types.Lt)) for m in limits):
                unbounded.append(f"{name}.{field.name}")
    assert unbounded == []
