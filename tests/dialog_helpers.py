"""A hub for dialog tests (slot answers, references): the sample home, fake ASR/TTS/devices,
and a monotonic clock the test moves by hand (no sleeps)."""

from __future__ import annotations

import dataclasses

from hub.core.hub import Hub
from hub.resilience.load import FixedProbe

from fakes import ROOMY_TIMEOUTS, FakeAsr, FakeDevices, FakeTts, settings


class Clock:
    """Monotonic seconds that tests advance by hand."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def dialog_hub(*, text: str = "", drop_domains=(), store=None) -> Hub:
    """The sample home's hub with a fake clock (``hub.test_clock``), fake devices
    (``hub.fake_devices``) and an ASR that hears ``hub.fake_asr.text``; entities of
    ``drop_domains`` are left out of the home."""
    cfg = settings(timeouts_s=ROOMY_TIMEOUTS)
    if drop_domains:
        ents = tuple(e for e in cfg.home.entities if e["domain"] not in drop_domains)
        cfg = dataclasses.replace(cfg, home=dataclasses.replace(cfg.home, entities=ents))
    clock, devices, asr = Clock(), FakeDevices(), FakeAsr(text)
    factories = {"asr": lambda h: asr, "tts": lambda h: FakeTts(), "devices": lambda h: devices}
    hub = Hub(
        cfg,
        entry="ask",
        factories=factories,
        probe=FixedProbe(),
        speak=False,
        clock=clock,
        store=store,
    )
    hub.test_clock, hub.fake_devices, hub.fake_asr = clock, devices, asr
    return hub


def said(hub: Hub, text: str, **kwargs) -> dict:
    """The trace of a spoken turn: ``text`` heard by the fake ASR (the voice path)."""
    from fakes import speech

    hub.fake_asr.text = text
    return hub.turn_audio(speech(), **kwargs)
