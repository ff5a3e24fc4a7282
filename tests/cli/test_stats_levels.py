"""``hub stats`` reads right (issue 22 item 6): a curated answer (FAQ, joke) is an answer at
level 0, also in traces journaled before the graph said so; it is a fallback (L3) only when
it stood in for a failed rules or LLM node."""

from __future__ import annotations

from dialog_helpers import dialog_hub

from hub.cli.stats import fallback_level, summarize


def _trace(source, level, errors=()):
    return {
        "source": source,
        "fallback_level": level,
        "status": "ok",
        "errors": list(errors),
        "timings_ms": {},
    }


def test_a_curated_answer_counts_as_an_answer():
    traces = [
        _trace("faq", 3),
        _trace("faq", 0),
        _trace("rules", 0),
        _trace("faq", 3, [{"node": "llm_intent", "kind": "timeout", "message": "x"}]),
        _trace("fallback", 4),
    ]
    assert [fallback_level(t) for t in traces] == [0, 0, 0, 3, 4]
    summary = summarize(traces)
    assert summary["fallback_level"] == {"0": 3, "3": 1, "4": 1}
    assert summary["source"]["faq"] == 3, "the trace contract keeps source faq"


def test_a_joke_is_journaled_as_an_answer(tmp_path):
    from hub.store.db import Store

    store = Store(tmp_path / "hub.db")
    hub = dialog_hub(store=store)
    trace = hub.turn_text("tell me a joke")
    assert trace["source"] == "faq" and trace["fallback_level"] == 0
    assert summarize(store.recent_turns(10))["fallback_level"] == {"0": 1}
