"""The LLM resident only while used (``[llm] keep_loaded_s``, :mod:`hub.llm.resident`).

Behaviour, not timings: after ``keep_loaded_s`` without a call the model is freed; the next
call loads it again and answers; it is never freed during a generation; ``close`` during a
lazy load is safe; long-lived commands release it after building the prompt cache.
"""

from __future__ import annotations

import json
import logging
import threading
import time

import pytest

from hub.errors import ConfigError, TransientError
from hub.llm import make_llm
from hub.llm.prompts import DEFAULT_INTENTS
from hub.llm.resident import Resident
from hub.resilience.deadline import ManualClock
from hub.settings import LlmSettings, load_settings

from fakes import unhurried, wait_for

HOME = load_settings(None).home


class Obj:
    """A stand-in for a loaded model that records when it is freed."""

    def __init__(self):
        self.freed = False


def make_resident(keep_s: float, loaded: bool = False, name: str = "llm", clock=time.monotonic):
    made, freed = [], []

    def load():
        made.append(Obj())
        return made[-1]

    def free(obj):
        obj.freed = True
        freed.append(obj)

    obj = load() if loaded else None
    return Resident(load, free, keep_s, obj=obj, name=name, clock=clock), made, freed


def test_released_after_start_up_is_not_logged_as_idle(caplog):
    """``hub run`` warms the LLM, then frees it at once: the log never claims it sat idle
    ``keep_loaded_s`` (it logged "llm released (idle 120 s)" right after start)."""
    clock = ManualClock()
    res, _made, freed = make_resident(120.0, clock=clock)
    with res.use(1.0):  # the warm-up
        pass
    with caplog.at_level(logging.INFO, logger="hub.llm.resident"):
        assert res.release() and freed
    assert [r.getMessage() for r in caplog.records] == ["llm released until its next use"]


def test_an_idle_release_says_how_long_it_was_idle_by_the_clock(caplog):
    clock = ManualClock()
    res, _made, freed = make_resident(120.0, clock=clock)
    with res.use(1.0):
        pass
    res._timer.cancel()  # the clock, not a real timer, says how long it was idle
    clock.advance(125.0)
    with caplog.at_level(logging.INFO, logger="hub.llm.resident"):
        res._expire(res._uses)
    assert freed and [r.getMessage() for r in caplog.records] == ["llm released (idle 125 s)"]


def test_resident_is_freed_after_keep_s_and_loaded_again_by_the_next_use():
    res, made, freed = make_resident(0.05)
    with res.use(1.0) as obj:
        assert res.loaded and not obj.freed
    assert wait_for(lambda: not res.loaded)
    assert freed == [made[0]]
    with res.use(1.0) as again:
        assert again is made[1] and not again.freed
    assert res.loads == 2


def test_resident_with_negative_keep_s_is_never_freed_before_close():
    res, made, freed = make_resident(-1, loaded=True)
    with res.use(1.0):
        pass
    assert res.release() is False
    time.sleep(0.1)
    assert res.loaded and not freed
    assert res.close(1.0) and freed == made and not res.loaded


def test_resident_is_never_freed_while_in_use_even_with_keep_s_zero():
    res, made, freed = make_resident(0.0)
    with res.use(1.0):  # a first use arms a timer that fires at once ...
        pass
    with res.use(1.0) as obj:  # ... it must not free the object the next use holds
        for _ in range(20):
            time.sleep(0.01)
            assert not obj.freed and res.release() is False
    assert wait_for(lambda: not res.loaded) and freed == made


def test_a_timer_armed_before_a_later_use_does_not_free_the_object():
    res, made, freed = make_resident(600.0)  # no timer fires by itself: the test fires them
    with res.use(1.0):
        pass
    first = res._timer
    with res.use(1.0):  # cancels it and re-arms: the model stays until keep_s after this use
        pass
    assert res._timer is not first
    first.function(*first.args)  # ... but it had fired already: it runs after the later use
    assert res.loaded and not freed
    second = res._timer
    second.function(*second.args)  # the later use's own timer frees it
    assert not res.loaded and freed == made
    res.close(1.0)


def test_close_waits_for_a_lazy_load_and_the_use_then_frees_it_once():
    gate, loading = threading.Event(), threading.Event()
    freed = []

    def slow_load():
        loading.set()
        gate.wait(60)
        return Obj()

    res = Resident(slow_load, freed.append, 0.0)
    got = []

    def user():
        with res.use(1.0) as obj:
            got.append(obj)

    worker = threading.Thread(target=user)
    worker.start()
    assert loading.wait(60)
    closer = threading.Thread(target=lambda: got.append(res.close(60.0)))
    closer.start()
    time.sleep(0.05)
    assert not freed  # close waits for the load and the use
    gate.set()
    worker.join(60)
    closer.join(60)
    assert got[1] is True and freed == [got[0]] and not res.loaded
    with pytest.raises(TransientError), res.use(1.0):
        pass


def test_prefetch_loads_in_the_background_and_a_use_waits_for_it_past_its_own_wait():
    gate, freed = threading.Event(), []

    def slow_load():
        gate.wait(60)
        return Obj()

    res = Resident(slow_load, freed.append, 10.0)
    assert res.prefetch() is True and res.prefetch() is False  # one at a time
    got = []

    def user():
        with res.use(0.05) as obj:
            got.append(obj)

    worker = threading.Thread(target=user)
    worker.start()
    time.sleep(0.2)  # longer than the use's own wait: it waits for the load instead
    assert not got
    gate.set()
    worker.join(60)
    assert got and got[0] is res.obj and res.loads == 1
    assert res.prefetch() is False  # loaded: nothing to do
    assert res.close(1.0) and len(freed) == 1


def test_unload_timer_threads_are_daemons_and_at_most_one_is_alive():
    res, _, _ = make_resident(30.0, name="timer-test")

    def alive():
        return [
            t for t in threading.enumerate() if t.name == "hub-timer-test-unload" and t.is_alive()
        ]

    for _ in range(5):
        with res.use(1.0):
            pass
    assert all(t.daemon for t in alive())
    assert wait_for(lambda: len(alive()) == 1)  # the cancelled ones have ended
    res.close(1.0)
    assert wait_for(lambda: not alive())


# -- the real model -----------------------------------------------------------------------


def test_llm_is_released_after_keep_loaded_s_and_answers_after_it_is_loaded_again():
    eng = make_llm(LlmSettings(keep_loaded_s=0.3), HOME, DEFAULT_INTENTS)
    try:
        before = eng.classify("turn on the kitchen light")
        assert wait_for(lambda: not eng.loaded)
        assert eng._llm is None and not eng._prefixes  # the Llama object and its states gone
        loads = eng._res.loads
        assert eng.classify("turn on the kitchen light") == before  # state restored from disk
        assert eng._res.loads == loads + 1
        assert list(eng.answer("Why is the sky blue?"))
    finally:
        eng.close()


def test_long_lived_engine_is_released_after_the_prompt_cache_is_on_disk():
    eng = make_llm(LlmSettings(), HOME, DEFAULT_INTENTS, release=True)
    try:
        assert not eng.loaded and eng._llm is None
        assert eng.cache_ready()  # loads it to tokenize; the cache was written at start
        assert json.loads(eng.classify("turn off the kitchen light"))["intent"]
    finally:
        eng.close()


def test_prefetch_of_a_released_engine_loads_it_for_the_next_call():
    eng = make_llm(LlmSettings(), HOME, DEFAULT_INTENTS, release=True)
    try:
        assert not eng.loaded and eng.prefetch()
        assert wait_for(lambda: eng.loaded, 120)
        loads = eng._res.loads
        assert json.loads(eng.classify("turn on the kitchen light"))["intent"]
        assert eng._res.loads == loads  # the call found it loaded
    finally:
        eng.close()


def test_always_resident_engine_is_not_released_at_start():
    eng = make_llm(LlmSettings(keep_loaded_s=-1), HOME, DEFAULT_INTENTS, release=True)
    try:
        assert eng.loaded and eng.release() is False and eng.loaded
    finally:
        eng.close()


def test_llm_is_never_released_during_a_long_generation_with_keep_zero():
    eng = make_llm(LlmSettings(keep_loaded_s=0, max_tokens=400), HOME, DEFAULT_INTENTS)
    seen = []
    try:
        assert wait_for(lambda: not eng.loaded)  # 0: freed right after warm-up
        for _piece in eng.answer("Tell me a long story about a dragon and a ship."):
            seen.append(eng.loaded and eng._llm is not None)
            time.sleep(0.05)  # the unload timer would have fired many times by now
        assert seen and all(seen)
        assert wait_for(lambda: not eng.loaded)
    finally:
        eng.close()


def test_close_during_a_lazy_load_of_the_real_model_is_safe():
    eng = make_llm(LlmSettings(keep_loaded_s=0), HOME, DEFAULT_INTENTS, release=True)
    real_load, loading, outcome = eng._res._load, threading.Event(), []

    def load():
        loading.set()
        time.sleep(0.2)
        return real_load()

    eng._res._load = load

    def ask():
        try:
            outcome.append(eng.classify("turn on the kitchen light"))
        except Exception as exc:
            outcome.append(exc)

    worker = threading.Thread(target=ask)
    worker.start()
    assert loading.wait(10)
    assert eng.close(wait_s=30) is True
    worker.join(10)
    assert not worker.is_alive() and eng._llm is None and not eng.loaded
    assert len(outcome) == 1  # an answer, or a clean error (cancelled by the close)
    with pytest.raises(TransientError):
        eng.classify("turn on the kitchen light")


def test_run_entry_releases_the_llm_after_warm_up_and_its_first_question_loads_it():
    from hub.core.hub import Hub

    settings = unhurried(load_settings(None))  # the answer is checked, not its speed
    run, ask = Hub(settings, entry="run", speak=False), Hub(settings, entry="ask", speak=False)
    try:
        run.engines.warm(["rules", "llm"])
        engine = run.engines.llm()
        assert not engine.loaded and engine.cache_ready()
        engine.release()
        trace = run.turn_text("what is the capital of France")
        assert trace["source"] == "llm" and trace["response"], trace
        assert not trace["errors"] and engine._res.loads == 2  # cache_ready, then the turn
        assert ask.engines.llm().loaded  # short-lived commands keep it after warm-up
    finally:
        run.engines.llm().close()
        ask.engines.llm().close()


def test_a_voice_turn_of_hub_run_prefetches_the_released_llm_only_for_open_vocabulary():
    import numpy as np

    from hub.core.hub import Hub

    hub = Hub(unhurried(load_settings(None)), entry="run", speak=False)
    try:
        hub.engines.warm(["rules", "llm", "asr"])
        engine = hub.engines.llm()
        assert not engine.loaded
        assert hub.engines.asr().open_vocabulary is False  # PocketSphinx: grammar-bound
        hub.answer_audio(np.zeros(16000, dtype=np.int16))
        assert not engine.loaded  # only grammar sentences can be heard: rules answer them
        hub.engines.asr().open_vocabulary = True  # as Vosk without a grammar
        hub.answer_audio(np.zeros(16000, dtype=np.int16))  # no speech: the LLM is not asked
        assert wait_for(lambda: engine.loaded, 120)  # ... but was loaded while ASR ran
    finally:
        hub.engines.llm().close()


@pytest.mark.parametrize(
    "value, message",
    [
        ('"always"', "expected a number"),
        ("inf", "finite"),
        ("nan", "finite"),
        ("1e12", "at most"),
        ("true", "expected a number"),
    ],
)
def test_keep_loaded_s_is_validated(tmp_path, value, message):
    path = tmp_path / "hub.toml"
    path.write_text(f"[llm]\nkeep_loaded_s = {value}\n")
    with pytest.raises(ConfigError, match=rf"llm\.keep_loaded_s: .*{message}"):
        load_settings(str(path))


@pytest.mark.parametrize("value, expected", [("-1", -1.0), ("0", 0.0), ("45", 45.0), ("2.5", 2.5)])
def test_keep_loaded_s_accepts_numbers(tmp_path, value, expected):
    path = tmp_path / "hub.toml"
    path.write_text(f"[llm]\nkeep_loaded_s = {value}\n")
    assert load_settings(str(path)).llm.keep_loaded_s == expected
