"""A new hub (``hub run`` after a restart, ``hub doctor``) starts from the latency its store's
journal measured: the p90 of each node's recent completed runs, not "not measured"."""

from __future__ import annotations

from hub.store.db import Store

from fakes import Clock, make_hub, speech


def test_a_hub_on_a_journaled_store_reports_the_p90_of_its_turns(tmp_path):
    clock = Clock()
    store = Store(tmp_path / "hub.db")
    first = make_hub(store=store, clock=clock)
    assert first.policy.factors()["nodes"]["asr"]["p90_s"] is None  # nothing journaled yet
    trace = first.answer_audio(speech(), file=None).trace
    assert trace["timings_ms"]["asr"] is not None and store.recent_turns(1)
    again = make_hub(store=Store(tmp_path / "hub.db"), clock=clock)
    nodes = again.policy.factors()["nodes"]
    assert nodes["asr"]["p90_s"] is not None
    assert nodes["asr"]["p90_s"] == trace["timings_ms"]["asr"] / 1000
