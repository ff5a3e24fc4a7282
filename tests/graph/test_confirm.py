"""Sensitive entities are asked back on every path; only a yes in the next turn does it."""

from __future__ import annotations

import dataclasses
import uuid

import pytest

from hub.core.hub import Hub
from hub.graph.answers import CANCELLED
from hub.graph.confirmation import confirmation_answer
from hub.resilience.load import FixedProbe

from fakes import Clock, FakeAsr, FakeDevices, FakeLlm, FakeTts, settings, speech


def hub_with(
    *,
    llm=None,
    clock=None,
    home_changes=None,
    devices=None,
    mqtt=None,
    text="unlock the front door",
):
    cfg = settings(llm=llm is not None)
    if home_changes:
        ents = tuple({**e, **home_changes.get(e["name"], {})} for e in cfg.home.entities)
        cfg = dataclasses.replace(cfg, home=dataclasses.replace(cfg.home, entities=ents))
    if mqtt is not None:
        cfg = dataclasses.replace(cfg, mqtt=dataclasses.replace(cfg.mqtt, **mqtt))
    devices = devices if devices is not None else FakeDevices()
    asr = FakeAsr(text)
    factories = {"asr": lambda h: asr, "tts": lambda h: FakeTts()}
    if mqtt is None:
        factories["devices"] = lambda h: devices
    if llm is not None:
        factories["llm"] = lambda h: llm
    hub = Hub(
        cfg,
        entry="ask",
        factories=factories,
        probe=FixedProbe(),
        speak=False,
        clock=clock or Clock(),
    )
    hub.fake_devices, hub.fake_asr = devices, asr
    return hub


@pytest.mark.parametrize(
    "text, question, entity, state",
    [
        (
            "unlock the front door",
            "Do you want me to unlock the Front Door?",
            "Front Door",
            "locked",
        ),
        (
            "open the garage door",
            "Do you want me to open the Garage Door?",
            "Garage Door",
            "closed",
        ),
    ],
)
def test_sensitive_rules_action_is_asked_back_and_done_on_yes(text, question, entity, state):
    hub = hub_with()
    asked = hub.turn_text(text)
    assert asked["response"] == question
    assert hub.fake_devices.published == [] and hub.home.state(entity) == state
    done = hub.turn_text("yes")
    assert len(hub.fake_devices.published) == 1 and hub.fake_devices.published[0][0] == entity
    assert hub.home.state(entity) != state and done["intent"] == asked["intent"]
    hub.turn_text("yes")  # a second yes has nothing to confirm
    assert len(hub.fake_devices.published) == 1


@pytest.mark.parametrize("reply", ["no", "No thanks.", "cancel", "never mind", "don't"])
def test_no_sends_nothing(reply):
    hub = hub_with()
    hub.turn_text("unlock the front door")
    trace = hub.turn_text(reply)
    assert trace["response"] == CANCELLED and hub.fake_devices.published == []
    assert hub.home.state("Front Door") == "locked"


def test_anything_else_cancels_and_is_a_new_request():
    hub = hub_with()
    hub.turn_text("unlock the front door")
    other = hub.turn_text("turn on the kitchen light")
    assert other["intent"] == "HassTurnOn"
    assert hub.fake_devices.published == [("Kitchen Light", "turn_on")]
    hub.turn_text("yes")  # too late: the question was answered by the light request
    assert hub.home.state("Front Door") == "locked"


def test_silence_cancels_by_voice():
    hub = hub_with(text="unlock the front door")
    asked = hub.turn_audio(speech())
    assert asked["response"].startswith("Do you want me to unlock")
    assert hub.turn_audio(speech(), silent=True)["status"] == "no_speech"
    hub.fake_asr.text = "yes"
    hub.turn_audio(speech())
    assert hub.fake_devices.published == [] and hub.home.state("Front Door") == "locked"


def test_voice_yes_confirms():
    hub = hub_with(text="unlock the front door")
    hub.turn_audio(speech())
    hub.fake_asr.text = "yes please"
    hub.turn_audio(speech())
    assert hub.fake_devices.published == [("Front Door", "unlock")]


def test_yes_after_the_window_does_nothing():
    clock = Clock()
    hub = hub_with(clock=clock)
    hub.turn_text("unlock the front door")
    clock.now += hub.conversation().confirm_window_s + 1
    hub.turn_text("yes")
    assert hub.fake_devices.published == [] and hub.home.state("Front Door") == "locked"


def test_yes_within_the_window_counts():
    clock = Clock()
    hub = hub_with(clock=clock)
    hub.turn_text("unlock the front door")
    clock.now += hub.conversation().confirm_window_s - 1
    hub.turn_text("yes")
    assert hub.fake_devices.published == [("Front Door", "unlock")]


def test_yes_in_another_conversation_does_not_confirm():
    hub = hub_with()
    kitchen, office = hub.conversation("kitchen"), hub.conversation("office")
    asked = hub.turn_text("unlock the front door", conversation=kitchen)
    assert asked["response"].startswith("Do you want me to")
    office_yes = hub.turn_text("yes", conversation=office)  # interleaved: another room
    assert hub.fake_devices.published == [] and office_yes["intent"] is None
    hub.turn_text("yes", conversation=kitchen)  # the kitchen's own yes still counts
    assert hub.fake_devices.published == [("Front Door", "unlock")]


def test_confirm_false_opts_out():
    hub = hub_with(home_changes={"Front Door": {"confirm": False}})
    trace = hub.turn_text("unlock the front door")
    assert hub.fake_devices.published == [("Front Door", "unlock")]
    assert not trace["response"].startswith("Do you want")


def test_reading_a_sensitive_entity_is_not_asked_back():
    hub = hub_with()
    trace = hub.turn_text("is the front door locked")
    assert trace["intent"] == "HassGetState" and not trace["response"].startswith("Do you")


def test_llm_path_is_asked_back_too():
    llm = FakeLlm(
        ('{"intent": "HassTurnOff", "slots": {"name": "Front Door"}, "confidence": 0.95}',)
    )
    hub = hub_with(llm=llm)
    asked = hub.turn_text("could you let me in through the front door")
    assert asked["response"] == "Do you want me to unlock the Front Door?"
    assert asked["asked_back"] and not asked["acted"]
    assert hub.fake_devices.published == []
    done = hub.turn_text("sure")
    assert hub.fake_devices.published == [("Front Door", "unlock")]
    assert done["acted"] and not done["asked_back"]


@pytest.mark.parametrize(
    "text, want",
    [
        ("yes", True),
        ("Yes.", True),
        ("yeah sure", True),
        ("do it", True),
        ("go ahead", True),
        ("okay", True),
        ("no", False),
        ("nope", False),
        ("cancel that", False),
        ("never mind", False),
        ("don't do it", False),
        ("no yes", None),
        ("please", None),
        ("yes turn on the kitchen light", None),
        ("unlock the front door", None),
        ("", None),
    ],
)
def test_confirmation_answer(text, want):
    assert confirmation_answer(text) is want


def test_real_mosquitto_counts_one_publish_on_yes_none_on_no():
    from mqtt_helpers import Subscriber

    prefix = f"hubconfirm-{uuid.uuid4().hex[:8]}"
    with Subscriber(f"{prefix}/+/+/set") as sub:
        hub = hub_with(mqtt={"host": "127.0.0.1", "topic_prefix": prefix, "discovery": ()})
        hub.turn_text("unlock the front door")
        hub.turn_text("no")
        assert sub.wait_for(1, timeout_s=0.5) == []
        hub.turn_text("unlock the front door")
        hub.turn_text("yes")
        assert sub.wait_for(1)  # however long the broker takes; then 1 s for a double
        got = sub.wait_for(2, timeout_s=1.0)
    assert [t for t, _ in got] == [f"{prefix}/lock/front_door/set"]
    assert got[0][1]["service"] == "unlock"


def test_fuzzy_rules_path_is_asked_back_too():
    from hub.errors import TransientError

    hub = hub_with(llm=FakeLlm((TransientError("llm down"),)))
    asked = hub.turn_text("unlock the front door now")  # strict rules miss; relaxed (L2) match
    assert asked["response"] == "Do you want me to unlock the Front Door?"
    assert hub.fake_devices.published == []
    hub.turn_text("yes")
    assert hub.fake_devices.published == [("Front Door", "unlock")]


@pytest.mark.parametrize(
    "said, question",
    [
        ("unlock the front door", "Do you want me to unlock the Front Door?"),
        ("open the garage door", "Do you want me to open the Garage Door?"),
    ],
)
def test_synthesized_voice_is_asked_back_and_sends_nothing(tmp_path, said, question):
    """Piper speech through the real recognizer: asked back; nothing reaches the devices."""
    from hub.audio.load import load_wav
    from hub.cli.main import main

    wav = tmp_path / "said.wav"
    assert main(["say", said, "--out", str(wav)]) == 0
    devices = FakeDevices()
    cfg = settings()  # the real recognizer gets a real timeout (the fakes' 1 s is for fakes)
    cfg = dataclasses.replace(
        cfg,
        resilience=dataclasses.replace(
            cfg.resilience, timeouts_s={**cfg.resilience.timeouts_s, "asr": 20.0}
        ),
    )
    hub = Hub(
        cfg,
        entry="replay",
        factories={"devices": lambda h: devices},
        probe=FixedProbe(),
        speak=False,
    )
    hub.engines.warm(["asr", "rules"])  # loaded before the turn, as hub replay does
    trace = hub.turn_audio(load_wav(wav).samples)
    assert trace["transcript"] == said and trace["response"] == question
    assert devices.published == []
