"""The on-disk artefact cache of start-up (hassil templates, fuzzy vocabulary)."""

from __future__ import annotations

from hub.home import Home
from hub.intents.artefacts import cached, key_of
from hub.intents.rules import Rules
from hub.settings import Settings


def test_built_once_then_loaded_and_a_damaged_file_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    calls = []

    def build():
        calls.append(1)
        return {"parsed": [1, 2, 3]}

    key = key_of("demo", {"a": 1})
    assert cached("demo", key, build) == {"parsed": [1, 2, 3]}
    assert cached("demo", key, build) == {"parsed": [1, 2, 3]} and len(calls) == 1
    (stored,) = (tmp_path / "hub" / "artefacts").glob("demo-*.pickle")
    stored.write_bytes(b"not a pickle")
    assert cached("demo", key, build) == {"parsed": [1, 2, 3]} and len(calls) == 2


def test_the_key_follows_every_input_and_the_library_version():
    assert key_of("hassil", {"a": 1}) == key_of("hassil", {"a": 1})
    assert key_of("hassil", {"a": 1}) != key_of("hassil", {"a": 2})
    assert key_of("hassil", {"a": 1}) != key_of("hassil", {"a": 1}, ("hassil",))


def test_rules_from_the_cache_match_as_freshly_parsed_ones(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    settings = Settings()
    home = Home.from_settings(settings.home)
    fresh = Rules(home, settings.intents)
    assert list((tmp_path / "hub" / "artefacts").glob("hassil-*.pickle"))
    again = Rules(home, settings.intents)
    for text in ["what's the time", "set a timer for 1 hour", "what time is it please"]:
        a, b = fresh.recognize(text), again.recognize(text)
        assert (a and (a.intent, a.slots)) == (b and (b.intent, b.slots))
    assert again.recognize("set a timer for 1 hour").intent == "HassStartTimer"
