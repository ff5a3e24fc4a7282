"""The acoustic fingerprint's lookup paths: several candidates, the exact replay, the
schema-2 migration, and the rules memo a command said again uses."""

from __future__ import annotations

import sqlite3

import numpy as np

from hub.settings import StoreSettings
from hub.store import fingerprint as fpm
from hub.store import schema
from hub.store.db import Store

from fakes import make_hub
from shared_data import EDGE_VARIANTS, SHARED, spoken

LOOSE = StoreSettings().fingerprint_loose
COMMANDS = ("open the Sliding Door", "close the Sliding Door", "turn on the TV")


def _wav(text: str) -> np.ndarray:
    from hub.bench.fingerprint import load_wav

    return load_wav(spoken(text))


def test_among_several_stored_commands_each_variant_finds_its_own(tmp_path):
    from hub.bench.fingerprint import variants

    store = Store(tmp_path / "hub.db")
    for text in COMMANDS:
        assert store.put_fingerprint("ctx", fpm.compute(_wav(text), query=False), text)
    for text in COMMANDS:
        for name, v in variants(_wav(text), np.random.default_rng(5)).items():
            found = store.find_fingerprint("ctx", fpm.compute(v), LOOSE)
            if found is None and name in EDGE_VARIANTS and SHARED is None:
                continue  # a miss costs a recognizer run, never a wrong command
            assert found is not None and found[0] == text, (text, name)
            assert LOOSE <= found[2] <= 1.0
        assert store.find_fingerprint("other context", fpm.compute(_wav(text)), 0.0) is None


def test_a_replay_of_the_same_samples_needs_no_features(tmp_path, monkeypatch):
    store = Store(tmp_path / "hub.db")
    x = _wav("open the Sliding Door").astype(np.int16)
    first = make_hub(store=store, text="open the Sliding Door").turn_audio(x)
    assert first["intent"] == "HassTurnOn"

    computed = []
    real = fpm.compute
    monkeypatch.setattr(fpm, "compute", lambda *a, **k: computed.append(1) or real(*a, **k))
    again = make_hub(store=store, text="unused")
    trace = again.turn_audio(x.copy())
    assert trace["transcript"] == "open the Sliding Door" and trace["source"] == "cache"
    assert trace["intent"] == first["intent"] and again.fake_asr.calls == 0
    assert computed == []
    changed = x.copy()
    changed[100] ^= 1  # one sample differs: not the same file, so the features run
    assert again.turn_audio(changed)["transcript"] == "open the Sliding Door"
    assert computed == [1]


def test_a_schema_2_file_drops_its_old_fingerprints_and_finds_new_ones(tmp_path):
    path = tmp_path / "v2.db"
    conn = sqlite3.connect(path)
    for step in schema.MIGRATIONS[:2]:
        step(conn)
    conn.execute(
        "INSERT INTO fingerprints (context, frames, vector, transcript, alternatives,"
        " at, used_at, size) VALUES ('ctx', ?, ?, 'old', '[]', 1, 1, 10)",
        [np.zeros((20, 12), np.float16).tobytes(), np.ones(72, np.float32).tobytes()],
    )
    conn.execute("PRAGMA user_version=2")
    conn.commit()
    conn.close()
    store = Store(path)
    assert store.pragma("user_version") == schema.VERSION == 4
    fp = fpm.compute(_wav("turn on the TV"))
    assert store.find_fingerprint("ctx", fp, 0.0) is None
    assert store.put_fingerprint("ctx", fp, "turn on the TV")
    assert store.find_exact("ctx", fp.digest) == ("turn on the TV", ())
    assert store.degraded is None


def test_the_rules_memo_gives_each_caller_its_own_match():
    hub = make_hub()
    rules = hub.engines.rules()
    first = rules.recognize("turn on the kitchen light")
    first.slots["name"] = "changed by a caller"
    second = rules.recognize("turn on the kitchen light")
    assert second is not first and second.intent == first.intent == "HassTurnOn"
    assert second.slots.get("name") != "changed by a caller"
    assert rules.recognize("turn on the kitchen light", "Office") is not None
    assert rules.recognize("xyzzy plugh") is None and rules.recognize("xyzzy plugh") is None


def test_numbers_finding_a_similar_utterance_never_gives_its_number(tmp_path):
    """A "90" said like an earlier "19" matched it strictly and was acted on as 19: a
    transcript with a number is a strict hit only for the same audio; a similar utterance
    runs the recognizer, and when the recognizer fails its number is asked back (L1)."""
    store = Store(tmp_path / "hub.db")
    x = _wav("create a timer for 5 minutes").astype(np.int16)
    first = make_hub(store=store, text="set a timer for 19 minutes").turn_audio(x)
    assert first["slots"]["minutes"] == 19 and first["acted"]
    said_again = x.copy()
    said_again[100] ^= 1  # not the same file: only the fingerprint could match it
    other = make_hub(store=store, text="set a timer for 90 minutes")
    trace = other.turn_audio(said_again)
    assert other.fake_asr.calls == 1 and trace["source"] == "rules"
    assert trace["slots"]["minutes"] == 90
    replay = make_hub(store=store, text="unused")
    assert replay.turn_audio(x.copy())["source"] == "cache"  # the same audio: its own number
    third = x.copy()
    third[200] ^= 1
    trace = make_hub(store=store, inject=["asr=crash"]).turn_audio(third)
    assert trace["fallback_level"] == 1 and trace["source"] == "cache"
    assert trace["transcript"] in ("set a timer for 19 minutes", "set a timer for 90 minutes")
    assert trace["response"] == f"Do you want me to {trace['transcript']}?"
    assert not trace["acted"]
