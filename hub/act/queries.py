"""Handlers that answer from the home's state and the clock: state, weather, time, date.

Facts come only from their source: device states and attributes from ``[home]``, the weather
from the weather entity, time and date from the injected clock. HassGetState answers any
state, and any attribute named in the ``attribute`` slot ("what is the current temperature of
the EcoBee"); an attribute the entity lacks is said to be missing, never made up. An entity
with a command its device has not confirmed (:meth:`hub.home.Home.unconfirmed`: its state is
the one the hub assumed) is never answered from: "I've asked the Kitchen Light to turn on; it
hasn't confirmed yet." (issue 20).
"""

from __future__ import annotations

from datetime import datetime

from hub.act.common import Context, Outcome, failed, refuse, reply, targets_of
from hub.act.responses import error_text, number_text, render
from hub.intents.delay import in_words
from hub.intents.match import IntentMatch


def _state_key(match: IntentMatch) -> str:
    """HassGetState's response key: the sentence's, else ``one_yesno``/``one``/``any``."""
    if match.response:
        return match.response
    if match.slots.get("name"):
        return "one_yesno" if match.slots.get("state") else "one"
    return "any"


def get_state(ctx: Context, match: IntentMatch) -> Outcome:
    """HassGetState: "Yes" / "No, unlocked" / "Outdoor humidity is 64 %" / "Yes, A and B".

    With a ``state`` slot, targets whose state equals it are the matched ones; with an
    ``attribute`` slot, the first target's attribute is the answer. A target whose state is
    not known now (``unavailable``/``unknown``: offline, or its link down) is never answered
    from: "Sorry, I can't check the Kitchen Light right now" (BC-42; Home Assistant's English
    templates have no wording for it and would say "No, unavailable"), unless another target
    already makes it a "yes". Nor is one with an unconfirmed command (its state is assumed):
    "I've asked the Kitchen Light to turn on; it hasn't confirmed yet.", on the same terms.
    """
    targets = targets_of(ctx, match)
    if not targets.ok:
        return failed(targets)
    attribute = match.slots.get("attribute")
    if attribute:
        name = targets.entities[0]
        entity = ctx.home.entity(name)
        kinds = ATTRIBUTE_DOMAINS.get(str(attribute))
        if kinds and entity is not None and entity.domain not in kinds:  # a lock's brightness
            return refuse("no_attribute", entity=name, attribute=attribute)
        if attribute == "brightness":
            return _brightness(ctx, match, name)
        return _attribute(ctx, match, name)
    wanted = match.slots.get("state")
    matched: list[dict] = []
    unmatched: list[dict] = []
    marks = {  # read before the states: a settled mark has its state back already
        n: mark for n in targets.entities if (mark := ctx.home.unconfirmed(n)) is not None
    }
    asked = list(marks)
    unknown = [n for n in targets.entities if n not in asked and _unknown(ctx.home.state(n))]
    for name in targets.entities:
        if name in unknown or name in asked:
            continue
        view = ctx.view(name)
        same = wanted is None or str(view["state"]).casefold() == str(wanted).casefold()
        (matched if same else unmatched).append(view)
    if (asked or unknown) and not (wanted is not None and matched):  # only a "yes" is sure
        if not asked:
            return refuse("cant_check", entity=_joined(unknown))
        said = [_unconfirmed(match, asked, [marks[n] for n in asked])]
        if unknown:
            said.append(error_text("cant_check", entity=_joined(unknown)) + ".")
        return Outcome(" ".join(said))
    first = (matched or unmatched)[0]
    query = {"matched": matched, "unmatched": unmatched}
    return Outcome(render(match.intent, _state_key(match), match.slots, first, query))


ATTRIBUTE_DOMAINS = {
    "brightness": ("light",),
    "color": ("light",),
    "volume": ("media_player",),
    "battery_level": (),
}
"""Attributes asked about by a word (:data:`hub.intents.match.ASKED_ATTRIBUTES`) -> the
domains that have them (``()``: any): asked of another ("how bright is the front door") the
answer is that the device has none, never its state in their place."""

ATTRIBUTE_KEYS = {"color": ("color_name", "rgb_color", "hs_color"), "volume": ("volume_level",)}
"""Such an attribute -> the entity attributes that hold it, in the order read."""

NOT_KNOWN = frozenset({"unavailable", "unknown"})
"""States that say nothing about the device (Home Assistant's ``STATE_UNAVAILABLE`` /
``STATE_UNKNOWN``; also what the hub sets while its link to the device is down, BC-42)."""


def _unconfirmed(match: IntentMatch, names: list[str], marks: list[dict]) -> str:
    """ "I've asked the Kitchen Light to turn on; it hasn't confirmed yet." for the entities
    ``names`` whose commands (``marks``, :meth:`hub.home.Home.unconfirmed`) are not confirmed."""
    verbs = {m.get("verb") or "" for m in marks}
    verb = verbs.pop() if len(verbs) == 1 else ""
    text = render(
        match.intent,
        "unconfirmed",
        match.slots,
        entity=_joined(names),
        verb=verb,
        many=len(names) > 1,
    )
    return text if text.endswith(".") else text + "."


def _unknown(state: str | None) -> bool:
    return state is None or str(state).casefold() in NOT_KNOWN


def _joined(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _pending(ctx: Context, match: IntentMatch, name: str) -> Outcome | None:
    """The unconfirmed answer for ``name`` while a command to it is not confirmed, else None."""
    mark = ctx.home.unconfirmed(name)
    return None if mark is None else Outcome(_unconfirmed(match, [name], [mark]))


def _brightness(ctx: Context, match: IntentMatch, name: str) -> Outcome:
    """A light's brightness: "Kitchen Light brightness is 40%" from ``brightness_pct``; "...
    is off" when off; "I don't know how bright ... is" when it is on and no level is known;
    the unconfirmed answer while a command to it is not confirmed (its level is assumed)."""
    pending = _pending(ctx, match, name)
    if pending is not None:
        return pending
    state = ctx.home.state(name)
    if _unknown(state):
        return refuse("cant_check", entity=name)
    slots = {**match.slots, "name": name}
    level = ctx.home.attributes(name).get("brightness_pct")
    if str(state).casefold() == "off":
        return Outcome(render(match.intent, "brightness_off", slots, ctx.view(name)))
    if not isinstance(level, (int, float)) or isinstance(level, bool):
        return Outcome(render(match.intent, "brightness_unknown", slots, ctx.view(name)))
    value = number_text(level)
    return Outcome(render(match.intent, "brightness", slots, ctx.view(name), value=value))


def _attribute(ctx: Context, match: IntentMatch, name: str) -> Outcome:
    """The value of the ``attribute`` slot on entity ``name``."""
    pending = _pending(ctx, match, name)  # its brightness, color ... are the ones assumed
    if pending is not None:
        return pending
    if ctx.home.state(name) == "unavailable":  # its attributes are as old as its state
        return refuse("cant_check", entity=name)
    key = str(match.slots["attribute"]).strip().lower().replace(" ", "_")
    attributes = ctx.home.attributes(name)
    held = [k for k in ATTRIBUTE_KEYS.get(key, (key,)) if k in attributes]
    if not held and key in ATTRIBUTE_DOMAINS:  # its kind has it; the hub does not know it
        return Outcome(render(match.intent, "attribute_unknown", {**match.slots, "name": name}))
    if not held:
        return refuse("no_attribute", entity=name, attribute=key.replace("_", " "))
    value = _value(held[0], attributes[held[0]])
    unit = attributes.get("unit_of_measurement") if key != "unit_of_measurement" else None
    slots = {**match.slots, "name": name, "attribute": key}
    text = render(
        match.intent, "attribute", slots, ctx.view(name), value=f"{value} {unit}" if unit else value
    )
    return Outcome(text)


def _value(key: str, value) -> str:
    """An attribute's value as said: a ``volume_level`` (0..1) as a percent."""
    if key == "volume_level" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{round(value * 100)}%"
    return number_text(value)


def get_weather(ctx: Context, match: IntentMatch) -> Outcome:
    """HassGetWeather from the weather entity's state (and temperature attributes)."""
    targets = targets_of(ctx, match)
    if not targets.ok:
        return failed(targets)
    name = targets.entities[0]
    key = "default" if "temperature" in ctx.home.attributes(name) else "no_temperature"
    return Outcome(reply(ctx, match, key, name))


def get_temperature(ctx: Context, match: IntentMatch) -> Outcome:
    """HassClimateGetTemperature: the climate entity's ``current_temperature``."""
    targets = targets_of(ctx, match)
    if not targets.ok:
        return failed(targets)
    view = ctx.view(targets.entities[0])
    if view["state"] == "unavailable":
        return refuse("cant_check", entity=view["name"])
    current = view["attributes"].get("current_temperature")
    if isinstance(current, float) and current.is_integer():
        view["attributes"]["current_temperature"] = int(current)
    return Outcome(render(match.intent, "default", match.slots, view))


def current_time(ctx: Context, match: IntentMatch) -> Outcome:
    """HassGetCurrentTime from the clock: "3:05 PM"."""
    return Outcome(render(match.intent, "default", {**match.slots, "time": ctx.now().time()}))


def current_date(ctx: Context, match: IntentMatch) -> Outcome:
    """HassGetCurrentDate from the clock: "January 1st, 2025"."""
    return Outcome(render(match.intent, "default", {**match.slots, "date": ctx.now().date()}))


NO_FORECAST = "I don't have a forecast."
NOT_LATER = "Sorry, I only know how things are now, not in {}."


def later(ctx: Context, match: IntentMatch) -> Outcome:
    """A question about later ("what time is it in 5 minutes": a read-only intent with the
    slot ``later_s``, see :mod:`hub.intents.delay`), answered only from a source.

    Time and date come from the clock moved on by ``later_s`` seconds ("In 5 minutes it will
    be 3:47 PM."; the time zone's own offset at that moment, so a DST change is right); the
    weather has no forecast ("I don't have a forecast."); any other question (a device's
    state later, a timer later) is not known: "Sorry, I only know how things are now, not in
    10 minutes.". Nothing is delayed and nothing changes.
    """
    seconds = int(match.slots.get("later_s") or 0)
    words = in_words({"duration_s": seconds})
    when = datetime.fromtimestamp(ctx.clock() + seconds, ctx.tz)
    if match.intent == "HassGetCurrentTime":
        fact = render(match.intent, "default", {**match.slots, "time": when.time()})
    elif match.intent == "HassGetCurrentDate":
        fact = render(match.intent, "default", {**match.slots, "date": when.date()})
    elif match.intent == "HassGetWeather":
        return Outcome(NO_FORECAST)
    else:
        return Outcome(NOT_LATER.format(words))
    return Outcome(f"In {words} it will be {fact.strip().rstrip('.')}.")
