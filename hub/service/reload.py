"""SIGHUP: read the config again and build a new Hub that keeps the loaded models.

What a reload applies: ``[home]`` (areas, entities: the rules and the recognizer's grammar
are rebuilt from it), ``[intents]``, ``[llm]`` gating and prompts, ``[resilience]``
thresholds, the ``[wake]`` thresholds (follow-up window, echo correlation, speech timeout)
and ``[asr]`` endpointing. Engines whose inputs did not change are shared with the new Hub,
not loaded again (Piper's voice, the LLM, the recognizer, the MQTT client). What needs a
restart is logged in one line: ``[audio]`` devices, ``[wake]`` models, ``[store]``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from hub.core.hub import Hub
from hub.errors import HubError
from hub.settings import Settings

log = logging.getLogger("hub.service.reload")

RESTART_ONLY = (("audio", None), ("store", None), ("wake", "model"), ("wake", "stop_model"))
"""Settings a running daemon cannot change: (section, key or None for the whole section)."""


def _same(old, new, *parts: str) -> bool:
    return all(getattr(old, p) == getattr(new, p) for p in parts)


def shareable(old, new) -> list[str]:
    """Engines of a hub with settings ``old`` that one with settings ``new`` can reuse."""
    names = []
    if _same(old, new, "tts"):
        names.append("tts")
    if _same(old, new, "llm", "home", "intents"):
        names.append("llm")
    if _same(old, new, "asr", "home", "intents"):
        names.append("asr")
    if _same(old, new, "home", "intents"):
        names += ["rules", "actor"]
    if old.resilience.faq == new.resilience.faq:
        names.append("faq")
    names.append("devices")  # one MQTT client per process; [mqtt] changes need a restart
    return names


def needs_restart(old, new) -> list[str]:
    """The changed settings that only a restart applies, as ``section`` or ``section.key``."""
    out = []
    for section, key in RESTART_ONLY + (("mqtt", None),):
        a, b = getattr(old, section), getattr(new, section)
        if key is None and a != b:
            out.append(section)
        elif key is not None and getattr(a, key) != getattr(b, key):
            out.append(f"{section}.{key}")
    return out


def reload_hub(
    old_hub: Hub, settings_of: Callable[[], Settings], inject: Sequence[str] = ()
) -> Hub | None:
    """A new Hub from ``settings_of()`` (the config file read again), sharing ``old_hub``'s
    unchanged engines and its store; ``inject``: the ``--inject`` fault specs.

    Returns None (and logs one ERROR) when the new config is wrong: the running hub goes on.
    """
    try:
        settings = settings_of()
        hub = Hub(settings, entry="run", store=old_hub.store, speak=old_hub.speak, inject=inject)
    except HubError as exc:
        log.error("reload failed, keeping the running config: %s", exc.message)
        return None
    kept = hub.engines.share(old_hub.engines, shareable(old_hub.settings, settings))
    later = needs_restart(old_hub.settings, settings)
    llm = ["llm"] if hub.llm_enabled("intent") or hub.llm_enabled("answer") else []
    hub.engines.warm([n for n in ("rules", "asr", *llm) if n not in kept])  # LLM cache: now
    log.info(
        "config reloaded (models kept: %s)%s",
        ", ".join(kept) or "none",
        f"; restart to apply: {', '.join(later)}" if later else "",
    )
    return hub
