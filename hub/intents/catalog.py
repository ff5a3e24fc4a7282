"""The intent catalog: every Home Assistant intent the hub handles, read from ``catalog.toml``.

One source for the rules (which HA intents are loaded), the ASR vocabulary (which intents a
home without a domain drops), the LLM schema, prompt and guard, the act handlers and the
responses. Intent and slot names are Home Assistant's. The data file documents each field.

API (all pure, cached after the first read):

- :func:`intents` -> every :class:`IntentSpec`, in catalog order;
- :func:`get` (name) -> its spec; raises ``KeyError`` for an intent the catalog lacks;
- :func:`names`, :func:`sensitive_capable`, :func:`has_side_effects`, :func:`domains_of`,
  :func:`slots_of`, :func:`timer_intents`, :func:`preference_intents`,
  :func:`usable_in` (the intents a home with these domains can use).
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

CATALOG_FILE = Path(__file__).with_name("catalog.toml")
"""The catalog's data file."""


@dataclass(frozen=True)
class IntentSpec:
    """One catalog entry (see ``catalog.toml`` for the meaning of each field).

    ``handler`` is ``"module:function"`` inside :mod:`hub.act`; ``domains`` empty means the
    intent has no entity target (time, date, timers) or may read any domain (HassGetState).
    """

    name: str
    handler: str
    slots: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    features: tuple[str, ...] = ()
    side_effects: bool = False
    sensitive: bool = False
    responses: tuple[str, ...] = ("default",)
    area_preference: bool = False
    timer: bool = False
    hint: str = ""
    llm: bool = True


_TUPLES = ("slots", "domains", "features", "responses")


@functools.lru_cache(maxsize=1)
def _load() -> dict[str, IntentSpec]:
    """Read and check the catalog file once.

    Raises:
        ValueError: an entry has an unknown field or no handler (a broken shipped file).
    """
    data = tomllib.loads(CATALOG_FILE.read_text(encoding="utf-8"))
    specs = {}
    for name, raw in data["intents"].items():
        unknown = set(raw) - set(IntentSpec.__dataclass_fields__)
        if unknown or "handler" not in raw:
            raise ValueError(f"catalog.toml: intents.{name}: bad fields {sorted(unknown)}")
        fields = {k: tuple(v) if k in _TUPLES else v for k, v in raw.items()}
        specs[name] = IntentSpec(name=name, **fields)
    return specs


def intents() -> tuple[IntentSpec, ...]:
    """Every intent in the catalog, in file order."""
    return tuple(_load().values())


def names() -> frozenset[str]:
    """The names of every catalog intent."""
    return frozenset(_load())


def get(name: str) -> IntentSpec:
    """The spec of ``name``. Raises ``KeyError`` when the catalog lacks it."""
    return _load()[name]


def sensitive_capable(name: str) -> bool:
    """True when ``name`` can act on an entity marked ``sensitive`` (it must be asked back)."""
    spec = _load().get(name)
    return bool(spec and spec.sensitive)


def has_side_effects(name: str) -> bool:
    """True when ``name`` changes something (a device, a list, a timer); unknown: False."""
    spec = _load().get(name)
    return bool(spec and spec.side_effects)


def domains_of(name: str) -> tuple[str, ...]:
    """The domains ``name`` acts on (``()`` for none or unknown)."""
    spec = _load().get(name)
    return spec.domains if spec else ()


def slots_of(name: str) -> tuple[str, ...]:
    """The slots ``name`` may carry (``()`` for unknown)."""
    spec = _load().get(name)
    return spec.slots if spec else ()


def timer_intents() -> frozenset[str]:
    """The timer intents (their durations become ``duration_s``)."""
    return frozenset(n for n, s in _load().items() if s.timer)


def preference_intents() -> frozenset[str]:
    """Intents where the satellite's area is a preference, not a filter."""
    return frozenset(n for n, s in _load().items() if s.area_preference)


def device_intents() -> frozenset[str]:
    """Intents that change a device (side effects on a domain other than lists).

    The LLM guard acts on them only when the transcript names their target.
    """
    return frozenset(
        n for n, s in _load().items() if s.side_effects and s.domains and "todo" not in s.domains
    )


_DURATION = ("hours", "minutes", "seconds")


def llm_intents() -> tuple[str, ...]:
    """Every catalog intent the LLM may propose (``llm`` true), in file order."""
    return tuple(n for n, s in _load().items() if s.llm)


def llm_hints() -> dict[str, str]:
    """Intent -> its one-line hint for the LLM's system prompt."""
    return {n: s.hint or n for n, s in _load().items() if s.llm}


def llm_slots() -> dict[str, tuple[str, ...]]:
    """Intent -> the slots the LLM may fill: timers take only a duration (a timer's
    ``name`` is not an entity) and a delayed command's text (``conversation_command``, which
    the rules must understand: :mod:`hub.intents.delay`); ``duration_s`` is the rules' own.
    """
    out = {}
    for name, spec in _load().items():
        if not spec.llm:
            continue
        timer = _DURATION + ("conversation_command",)
        slots = (
            timer
            if spec.timer and set(_DURATION) & set(spec.slots)
            else (() if spec.timer else spec.slots)
        )
        out[name] = tuple(s for s in slots if s in spec.slots and s != "duration_s")
    return out


def usable_in(domains: Collection[str]) -> tuple[str, ...]:
    """Catalog intents a home with these entity ``domains`` can use (file order).

    An intent with domains is usable when the home has at least one of them.
    """
    have = set(domains)
    return tuple(n for n, s in _load().items() if not s.domains or have & set(s.domains))
