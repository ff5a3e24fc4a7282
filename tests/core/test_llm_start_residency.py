"""Which commands free the LLM right after building its prompt cache (issue 19: ``hub replay``
of files that need no LLM must not hold the model: peak RSS ≤ 400 MB)."""

from __future__ import annotations

import pytest

from fakes import make_hub


@pytest.mark.models
@pytest.mark.parametrize(("entry", "resident"), [("replay", False), ("run", False), ("ask", True)])
def test_llm_is_resident_after_start_only_for_a_single_question(entry, resident):
    hub = make_hub(entry=entry)
    engine = hub.engines.llm()
    try:
        assert engine.loaded is resident
        if not resident:  # a turn that needs it loads it again
            assert "intent" in engine.classify("what is the capital of france")
            assert engine.loaded
    finally:
        engine.close()


@pytest.mark.models
def test_a_prompt_cache_on_disk_means_no_weights_loaded_at_start():
    from hub.llm.llama import make_llama_engine
    from hub.settings import load_settings

    settings = load_settings(None)
    intents = ("HassTurnOn", "HassTurnOff")
    make_llama_engine(settings.llm, settings.home, intents).close()  # the cache is on disk
    engine = make_llama_engine(settings.llm, settings.home, intents, release=True)
    try:
        assert not engine.loaded and engine._res.loads == 0  # checked without the weights
        assert "intent" in engine.classify("turn on the kitchen light")
        assert engine._res.loads == 1 and engine.cache_ready()
    finally:
        engine.close()
