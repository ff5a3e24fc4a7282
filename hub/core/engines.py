"""Engine factories and the lazy, once-only :class:`Engines` container of a hub.

Every engine (recognizer, rules, handlers, device backend, TTS, LLM, FAQ) is built by one
factory function of the hub that tests can replace (``Hub(factories={...})``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from hub.errors import FatalError, HubError
from hub.resilience.memory import release_free_memory

log = logging.getLogger("hub.core.engines")


def _asr(hub):
    # lazy: an engine's module (and its library) loads only when the engine is built
    from hub.asr import make_asr_engine

    return make_asr_engine(hub.settings.asr, hub.settings.home, cache_dir=hub.cache_dir)


def _asr2(hub):
    # lazy: an engine's module (and its library) loads only when the engine is built
    from hub.asr import make_second_engine

    return make_second_engine(hub.settings.asr, hub.settings.home)


def _rules(hub):
    # lazy: an engine's module (and its library) loads only when the engine is built
    from hub.intents.rules import Rules

    return Rules(hub.home, hub.settings.intents)


def _actor(hub):
    # lazy: an engine's module (and its library) loads only when the engine is built
    from hub.act import Actor
    from hub.act.liststore import ListStore
    from hub.store.losses import Losses

    return Actor(
        hub.home,
        hub.timers,
        clock=hub.wall,
        tz=hub.alarms.zone,  # one wall clock
        lists=ListStore(hub.store, remote=lambda name: _ha_items(hub, name)),
        alerts=hub.alarms,
        losses=Losses(hub.store),
    )


def _ha_items(hub, name: str) -> list | None:
    """The open items of list ``name`` in Home Assistant when it is linked there, else None."""
    ha = getattr(hub.engines.devices(), "ha", None)
    return ha.todo_items(name) if ha is not None and ha.handles(name) else None


class _NoDevices:
    """The device backend when ``[mqtt]`` is off: actions stay in the in-process home."""

    def publish(self, action: dict, cancel=None, wait_s=None) -> str:
        """Nothing to send: the action is done in the in-process home."""
        return "local"

    def on_turn(self, trace: dict) -> None:
        """No hub entities to update."""


def _devices(hub):
    # lazy: an engine's module (and its library) loads only when the engine is built
    from hub.devices.backends import make_devices

    return (
        make_devices(
            hub.settings,
            hub.store,
            home=hub.home,  # one identity: the service
            breaker=hub.breakers.get("mqtt"),
            service=hub.entry == "run",
        )
        or _NoDevices()
    )


def _tts(hub):
    # lazy: an engine's module (and its library) loads only when the engine is built
    from hub.tts.piper import make_tts

    return make_tts(hub.settings.tts)


def _llm(hub):
    # lazy: an engine's module (and its library) loads only when the engine is built
    from hub.llm import make_llm

    return make_llm(
        hub.settings.llm,
        hub.settings.home,
        hub.engines.rules().intent_names(),
        release=hub.entry in ("run", "replay"),
    )  # long-lived, or many files of which few need it: resident only while used


def _faq(hub):
    # lazy: an engine's module (and its library) loads only when the engine is built
    from hub.intents.faq import Faq

    path = hub.settings.resilience.faq
    return Faq(Path(path) if path else None)


DEFAULT_FACTORIES: dict[str, Callable] = {
    "asr": _asr,
    "asr2": _asr2,
    "rules": _rules,
    "actor": _actor,
    "tts": _tts,
    "llm": _llm,
    "faq": _faq,
    "devices": _devices,
}
"""Engine factories by name; each takes the Hub and returns the engine."""


class Engines:
    """Engines built on first use, once; a failed build is remembered for ``retry_after_s``
    seconds of ``clock`` (the hub's monotonic clock).

    Each engine has its own lock, so one engine's factory may use another engine (the LLM's
    whitelist comes from the rules) and a slow build blocks only the callers of that engine.
    """

    def __init__(
        self,
        hub,
        factories: dict[str, Callable],
        retry_after_s: float,
        *,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._hub, self._factories, self._retry_after = hub, factories, retry_after_s
        self._clock = clock
        self._built: dict[str, object] = {}
        self._failed: dict[str, tuple[float, HubError]] = {}
        self._locks = {name: threading.Lock() for name in factories}

    def get(self, name: str):
        """The engine ``name``, building it if needed.

        Raises:
            HubError: the engine could not be built (a FatalError unless the factory said more).
        """
        engine = self._built.get(name)
        if engine is not None:
            return engine
        with self._locks[name]:
            if name in self._built:
                return self._built[name]
            failed = self._failed.get(name)
            if failed and self._clock() - failed[0] < self._retry_after:
                raise failed[1]
            try:
                engine = self._factories[name](self._hub)
            except HubError as exc:
                self._failed[name] = (self._clock(), exc)
                raise
            except Exception as exc:
                err = FatalError(f"cannot load {name}: {exc}", node=name)
                self._failed[name] = (self._clock(), err)
                raise err from None
            self._built[name] = engine
            self._failed.pop(name, None)
            return engine

    def warm(self, names) -> None:
        """Build ``names`` now (before the first turn); failures are logged, not raised.

        The engines are built side by side, one thread each (model loading is mostly native
        code that releases the GIL: Piper's ONNX session, the recognizer's decoder), and all
        are built when this returns. With ``tts`` among them, the canned answers are rendered
        and stored too.
        """

        def build(name: str) -> None:
            start = time.monotonic()
            try:
                self.get(name)
                log.info("%s ready in %.1f s", name, time.monotonic() - start)
            except HubError as exc:
                log.warning("%s unavailable: %s", name, exc.message)

        threads = [
            threading.Thread(target=build, args=(n,), name=f"hub-warm-{n}")
            for n in dict.fromkeys(names)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if "tts" in names:
            self._hub.prerender()
        release_free_memory()

    def share(self, other: Engines, names) -> list[str]:
        """Take over the engines ``names`` that ``other`` has built (a reload keeps its models).

        Returns the names taken over; ones ``other`` never built are built here on first use.
        """
        taken = [n for n in names if n in other._built and n in self._locks]
        for name in taken:
            self._built[name] = other._built[name]
        return taken

    def loaded(self, name: str) -> bool:
        """True when ``name`` has been built."""
        return name in self._built

    # one accessor per engine, so the nodes' calls are plain methods
    def asr(self):
        """The speech recognizer (:mod:`hub.asr`)."""
        return self.get("asr")

    def asr2(self):
        """The open-vocabulary second recognizer (:mod:`hub.asr.whisper_engine`), not loaded
        until its first use."""
        return self.get("asr2")

    def rules(self):
        """The hassil rules (:class:`hub.intents.rules.Rules`)."""
        return self.get("rules")

    def actor(self):
        """The intent handlers (:class:`hub.act.Actor`)."""
        return self.get("actor")

    def devices(self):
        """The device backend (MQTT, or none)."""
        return self.get("devices")

    def tts(self):
        """The speech synthesizer (:mod:`hub.tts.piper`)."""
        return self.get("tts")

    def llm(self):
        """The local language model (:mod:`hub.llm`)."""
        return self.get("llm")

    def faq(self):
        """The canned answers (:class:`hub.intents.faq.Faq`)."""
        return self.get("faq")
