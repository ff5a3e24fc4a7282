"""Response text rendered from Home Assistant's English response templates.

The templates are home-assistant-intents' own (``get_intents("en")["responses"]``), rendered
with Jinja2's sandbox (:class:`jinja2.sandbox.ImmutableSandboxedEnvironment`) as Home Assistant
does, so an intents update changes the wording without code changes. The hub's English
additions (clarifications, attribute answers, the spoken broadcast) are data in
``responses.toml`` next to this module, rendered the same way; Home Assistant's win a tie,
except the few of its ``[instead]`` table: Home Assistant's words that are untrue of an
offline hub ("Your data is sent to your Home Assistant server.").

Template context (Home Assistant's names): ``slots`` (slot values; timer durations as the
text spoken, ``"5"``), ``state`` (one entity: ``entity_id``, ``name``, ``domain``, ``state``,
``state_with_unit``, ``attributes``), ``query`` (``matched``/``unmatched`` lists of such
entities), and the function ``state_attr(entity_id, attribute)``. Output whitespace is
collapsed to single spaces. Rendering never raises: a broken template gives "".

A value that is None is never said as "None": Home Assistant's turn on/off ``default``
says ``translations.get(state.domain)``, None for a domain it has no word for (and
HassTurnOff has no ``script`` key: "Turned off None." for a script). Such a render falls back
to the intent's ``named`` template of ``responses.toml`` ("Turned off {{ state.name }}"),
which says the entity's name; without one, the None is left out (one WARNING).
"""

from __future__ import annotations

import functools
import logging
import tomllib
from pathlib import Path

from home_assistant_intents import get_intents
from jinja2.sandbox import ImmutableSandboxedEnvironment

log = logging.getLogger("hub.act")

ADDITIONS_FILE = Path(__file__).with_name("responses.toml")
"""The hub's own English templates (errors and intent keys Home Assistant lacks)."""

_DURATION_SLOTS = ("hours", "minutes", "seconds")


@functools.lru_cache(maxsize=1)
def _environment():
    """The one sandboxed Jinja environment (templates cannot change or reach anything); a
    None value is output as :data:`_NONE` (see the module doc)."""
    return ImmutableSandboxedEnvironment(autoescape=False, finalize=_finalize)


_NONE = "\x00None\x00"
"""What a None value renders as, to be found and never said."""


def _finalize(value):
    return _NONE if value is None else value


def english_intents() -> dict:
    """home-assistant-intents' English data (``get_intents("en")``: sentences, responses).

    Raises:
        RuntimeError: the installed package has no English data (a broken install).
    """
    data = get_intents("en")
    if data is None:
        raise RuntimeError("home-assistant-intents has no English data (reinstall it)")
    return data


@functools.lru_cache(maxsize=1)
def _templates() -> dict:
    """``{"intents": {intent: {key: text}}, "errors": {key: text}}``: HA's over ours."""
    ours = tomllib.loads(ADDITIONS_FILE.read_text(encoding="utf-8"))
    theirs = english_intents()["responses"]
    intents = {name: dict(keys) for name, keys in ours.get("intents", {}).items()}
    for name, keys in theirs["intents"].items():
        intents.setdefault(name, {}).update(keys)
    for name, keys in ours.get("instead", {}).items():  # HA's words that are untrue here
        intents.setdefault(name, {}).update(keys)
    return {"intents": intents, "errors": {**ours.get("errors", {}), **theirs["errors"]}}


@functools.lru_cache(maxsize=512)
def _compiled(text: str):
    """The compiled template of ``text`` (None when it does not parse)."""
    try:
        return _environment().from_string(text)
    except Exception as exc:  # jinja2.TemplateSyntaxError and friends
        log.warning("response template does not parse: %s", exc)
        return None


def normalize(text: str) -> str:
    """Collapse whitespace like Home Assistant does after rendering."""
    return " ".join(str(text).split())


def render_text(text: str, **context) -> str:
    """Render one template ``text`` in the sandbox with ``context``; "" when it fails. A value
    that is None is left out (logged), never said as "None"."""
    return _said(_render(text, context), text)


def _said(rendered: str, text: str) -> str:
    """``rendered`` (of template ``text``) with a None value left out, and logged."""
    if _NONE in rendered:
        log.warning("response template said None: %r", text[-60:])
        rendered = normalize(rendered.replace(_NONE, " "))
    return rendered


def _render(text: str, context: dict) -> str:
    """The template ``text`` rendered, a None value as :data:`_NONE`; "" when it fails."""
    template = _compiled(text)
    if template is None:
        return ""
    try:
        return normalize(template.render(**context))
    except Exception as exc:  # a template error must never break a turn
        log.warning("response template failed: %s", exc)
        return ""


def template(intent: str, key: str) -> str | None:
    """The template for ``intent`` and response ``key`` (HA's, else ours; None when none)."""
    return _templates()["intents"].get(intent, {}).get(key)


def has_template(intent: str, key: str) -> bool:
    """True when ``intent`` has a response template called ``key``."""
    return template(intent, key) is not None


def render(
    intent: str, key: str = "default", slots: dict | None = None, state=None, query=None, **extra
) -> str:
    """The response of ``intent`` for ``key`` (falling back to ``default``), rendered.

    Args:
        slots: the intent's slots (Home Assistant names); durations are passed as text.
        state: the entity the answer is about (see :func:`entity_view`), or None.
        query: ``{"matched": [...], "unmatched": [...]}`` entity views, or None.
        extra: further template variables (e.g. ``value`` for attribute answers).

    Returns "" when the intent has no such template (HassNevermind's is ""). A render that
    would say "None" is the intent's ``named`` template instead, when it has one.
    """
    text = template(intent, key)
    if text is None:
        text = template(intent, "default") or ""
    views = {"state": state, "query": query or {"matched": [], "unmatched": []}}
    by_id = {v["entity_id"]: v for v in _views(state, query)}
    context = {
        "slots": _spoken(slots or {}),
        "state_attr": _state_attr(by_id),
        **views,
        **extra,
    }
    said = _render(text, context)
    named = template(intent, "named") if _NONE in said else None
    if named is not None:  # HA has no word for this domain: the entity's own name
        text, said = named, _render(named, context)
    return _said(said, text)


def error_text(key: str, **args) -> str:
    """The Home Assistant error response for ``key`` (or ours), rendered with ``args``."""
    errors = _templates()["errors"]
    text = errors.get(key) or errors["not_handled"]
    return render_text(text, **{k: v for k, v in args.items() if v is not None})


def sentence(text: str) -> str:
    """``text`` ending as a sentence (Home Assistant's templates have no full stop: "Timer
    cancelled"); Piper's prosody wants one. A trailing comma, colon or semicolon becomes the
    full stop; "" stays ""."""
    text = text.strip()
    if not text or text[-1] in ".!?…":
        return text
    body = text.rstrip(",;: ")
    return body + "." if body else ""


def entity_view(entity, state: str | None, attributes: dict) -> dict:
    """The ``state`` object templates see for one home entity (Home Assistant's fields)."""
    return {
        "entity_id": f"{entity.domain}.{entity.name}",
        "name": entity.name,
        "domain": entity.domain,
        "state": state,
        "attributes": dict(attributes),
        "state_with_unit": state_with_unit(state, attributes),
    }


def state_with_unit(state, attributes: dict) -> str:
    """Home Assistant's ``state_with_unit``: ``"64 %"``, ``"on"``."""
    unit = attributes.get("unit_of_measurement")
    return f"{state} {unit}" if unit else str(state)


def number_text(value) -> str:
    """A number as spoken: 21.5, 5 (not 5.0); other values as text."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _spoken(slots: dict) -> dict:
    """Slots as the templates expect them: durations as the spoken text (``"1"``)."""
    out = dict(slots)
    for key in _DURATION_SLOTS:
        if out.get(key) not in (None, ""):
            out[key] = number_text(out[key])
        elif key in out:
            del out[key]
    return out


def _views(state, query) -> list[dict]:
    """Every entity view in ``state`` and ``query``."""
    views = [state] if isinstance(state, dict) else []
    for key in ("matched", "unmatched"):
        views += [v for v in (query or {}).get(key, []) if isinstance(v, dict)]
    return [v for v in views if "entity_id" in v]


def _state_attr(by_id: dict):
    """Home Assistant's ``state_attr(entity_id, name)`` over the entities in the context."""

    def state_attr(entity_id, name):
        view = by_id.get(entity_id)
        return None if view is None else view["attributes"].get(name)

    return state_attr
