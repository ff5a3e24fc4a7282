"""Answers synthesized ahead of time (issue 18, latency): the response cache keyed by voice and
text, the idle-time pre-render of the rules path's likely answers, and its limits."""

from __future__ import annotations

import dataclasses
import logging

from hub.graph.ahead import likely_answers
from hub.graph.answers import response_key
from hub.home import Home
from hub.settings import load_settings
from hub.store.db import Store
from hub.tts.prerender import Prerenderer

from fakes import FakeTts, make_hub
from homes import fixture_home


class DictCache:
    """The two response-cache calls the pre-render uses, over a dict."""

    def __init__(self, stored=()):
        self.rows = {k: (b"\0\0", 16000) for k in stored}

    def has_response_audio(self, key):
        return key in self.rows

    def put_response_audio(self, key, pcm, rate):
        self.rows[key] = (pcm, rate)
        return True


def _job(texts, cache, tts, busy=lambda: False, max_bytes=10**9):
    return Prerenderer(lambda: texts, lambda: tts, cache, response_key, busy, max_bytes)


def test_prerender_stores_each_missing_text_once_and_skips_stored_ones():
    tts, cache = FakeTts(), DictCache([response_key("Okay.")])
    job = _job(["Turned on the light.", "Okay.", "Turned off the light."], cache, tts)
    job.run()
    assert tts.sentences == ["Turned on the light", "Turned off the light"]
    assert (job.rendered, job.stored) == (2, 1)
    assert set(cache.rows) == {
        response_key(t) for t in ("Okay.", "Turned on the light.", "Turned off the light.")
    }


def test_prerender_renders_nothing_while_a_turn_runs_and_stops_when_told():
    tts, cache = FakeTts(), DictCache()
    calls = []

    def busy():  # idle for the first text; then a turn starts and the daemon stops
        calls.append(1)
        if len(calls) >= 3:
            job.stop()
        return len(calls) > 1

    job = _job(["Turned on the light.", "Turned off the light."], cache, tts, busy)
    job.run()
    assert tts.sentences == ["Turned on the light"]
    assert list(cache.rows) == [response_key("Turned on the light.")]


def test_prerender_stops_at_its_byte_budget():
    tts, cache = FakeTts(), DictCache()
    job = _job(["One.", "Two.", "Three."], cache, tts, max_bytes=3200)  # one FakeTts sentence
    job.run()
    assert job.rendered == 1 and len(cache.rows) == 1


def test_likely_answers_are_the_handlers_own_and_leave_the_home_untouched():
    home = Home.from_settings(load_settings(None).home)
    before = home.snapshot()
    texts = likely_answers(home)
    assert "Turned on the light." in texts and "Turned off the light." in texts
    assert "Do you want me to open the Garage Door?" in texts  # sensitive: asked, never done
    assert "Opening." not in [t for t in texts if "Garage" in t]
    assert len(texts) == len(set(texts))
    assert home.snapshot() == before


def _every_answer(home: Home) -> list[str]:
    """The prerendered answers of ``home``, every handler's answer for every entity by name,
    and every intent's ``default`` response rendered for every entity."""
    from hub.act import HANDLERS
    from hub.act.common import Context
    from hub.act.responses import _templates, render
    from hub.act.timers import Timers
    from hub.graph.ahead import _scratch
    from hub.intents.match import IntentMatch

    texts = list(likely_answers(home))
    for entity in home.entities:
        for intent, handler in HANDLERS.items():
            ctx = Context(home=_scratch(home), timers=Timers(), clock=lambda: 1.8e9)
            match = IntentMatch(intent, {"name": entity.name}, "", entities=(entity.name,))
            try:
                texts.append(handler(ctx, match).response)
            except Exception:  # a probe the entity cannot take (no such feature, ...)
                continue
        for intent in _templates()["intents"]:
            view = Context(home=home, timers=Timers(), clock=lambda: 1.8e9).view(entity.name)
            texts.append(render(intent, "default", {"name": entity.name}, state=view))
    return texts


def test_no_prerendered_or_default_answer_says_none_or_a_template():
    """ "Turned off None." for a script: Home Assistant's HassTurnOff has no ``script`` key and
    its ``default`` has no word for the domain. Every answer names the entity instead."""
    for home in (Home.from_settings(load_settings(None).home), fixture_home()):
        texts = _every_answer(home)
        assert len(texts) > 10 * len(home.entities)
        bad = [t for t in texts if "None" in t or "{{" in t or "{%" in t or "\x00" in t]
        assert bad == []
        assert "Turned off Party Time." in likely_answers(home)  # the script, by its name


def test_a_template_value_that_is_none_is_never_said():
    from hub.act.responses import render, render_text

    assert render_text("Turned off {{ x }} now", x=None) == "Turned off now"
    state = {"entity_id": "script.party_time", "name": "Party Time", "domain": "script"}
    state |= {"state": "off", "attributes": {}}
    assert render("HassTurnOff", "default", {"name": "Party Time"}, state=state) == (
        "Turned off Party Time"
    )
    light = {**state, "entity_id": "light.desk", "name": "Desk", "domain": "light"}
    assert render("HassTurnOff", "default", {"name": "Desk"}, state=light) == (
        "Turned off the light"
    )  # Home Assistant's own word where it has one


def test_cached_answer_is_used_for_the_same_voice_and_text_only(tmp_path):
    store = Store(tmp_path / "hub.db")
    hub = make_hub(store=store, entry="ask")
    hub.turn_text("turn on the kitchen light")
    said = len(hub.fake_tts.sentences)
    hub.turn_text("turn on the kitchen light")
    assert len(hub.fake_tts.sentences) == said  # the same text and voice: from the cache
    other = make_hub(store=store, entry="ask")
    other.settings = dataclasses.replace(
        other.settings, tts=dataclasses.replace(other.settings.tts, voice="/voices/other.onnx")
    )
    other.turn_text("turn on the kitchen light")
    assert other.fake_tts.sentences  # another voice's entry is not used


def test_response_cache_survives_a_restart(tmp_path):
    key = response_key("Turned on the light.", "")
    store = Store(tmp_path / "hub.db")
    store.put_response_audio(key, b"\1\2" * 100, 22050)
    store.close()
    again = Store(tmp_path / "hub.db")
    assert again.has_response_audio(key)
    assert again.get_response_audio(key) == (b"\1\2" * 100, 22050)


def test_a_corrupt_cache_file_is_ignored_with_one_log_line(tmp_path, caplog):
    path = tmp_path / "hub.db"
    path.write_bytes(b"this is no sqlite file" * 200)
    with caplog.at_level(logging.WARNING):
        store = Store(path)
        hub = make_hub(store=store, entry="ask")
        for _ in range(3):
            trace = hub.turn_text("turn on the kitchen light")
            assert trace["status"] == "ok" and trace["response"] == "Turned on the light."
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1, lines


def test_prerender_of_the_sample_home_fills_the_cache_the_tts_node_reads(tmp_path):
    store = Store(tmp_path / "hub.db")
    tts = FakeTts()
    hub = make_hub(store=store, entry="ask", tts=tts)
    hub.speak = True
    job = hub.prerender_answers(lambda: False)
    assert job is not None
    job.done.wait(30)
    assert job.rendered >= 10
    before = len(tts.sentences)
    trace = hub.turn_text("turn off the kitchen light")
    assert trace["response"] == "Turned off the light." and len(tts.sentences) == before
