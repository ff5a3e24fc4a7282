"""Handlers that switch and set devices: turn on/off, light settings, covers, media keys.

State changes mirror what Home Assistant's services leave behind (``cover.open_cover`` ->
``open``, ``lock.unlock`` -> ``unlocked``, ``media_player.media_pause`` -> ``paused``).
"""

from __future__ import annotations

from hub.act.common import Context, Outcome, action, failed, refuse, reply, targets_of
from hub.act.responses import has_template
from hub.intents.match import IntentMatch

# domain -> (service, new state) for HassTurnOn (True) and HassTurnOff (False).
_SWITCH: dict[str, dict[bool, tuple[str, str | None]]] = {
    "cover": {True: ("open_cover", "open"), False: ("close_cover", "closed")},
    "valve": {True: ("open_valve", "open"), False: ("close_valve", "closed")},
    "lock": {True: ("lock", "locked"), False: ("unlock", "unlocked")},
    "script": {True: ("turn_on", None), False: ("turn_off", None)},
    "scene": {True: ("turn_on", "scene")},
    "button": {True: ("press", None)},
    "input_button": {True: ("press", None)},
    "vacuum": {True: ("start", "cleaning"), False: ("return_to_base", "returning")},
    "lawn_mower": {True: ("start_mowing", "mowing"), False: ("dock", "docked")},
}
_ON_OFF = ("light", "switch", "fan", "media_player", "input_boolean", "climate")
_NAMED_KEYS = ("cover", "lock", "scene", "script", "valve", "button")  # response key = domain


def _switch(ctx: Context, name: str, on: bool) -> dict | None:
    """Turn one entity on/off in the state store; its action, or None if unsupported."""
    entity = ctx.entity(name)
    state: str | None
    if entity.domain in _ON_OFF:
        service, state = ("turn_on", "on") if on else ("turn_off", "off")
    elif on in _SWITCH.get(entity.domain, {}):
        service, state = _SWITCH[entity.domain][on]
    else:
        return None
    if state == "scene":
        state = ctx.now().isoformat(timespec="seconds")  # a scene's state: last activation
    if state is not None:
        ctx.home.set_state(entity.name, state)
    return action(entity.name, entity.domain, service)


def _turn_key(match: IntentMatch, domain: str) -> str:
    """The response key: the sentence's, else derived from the slots like HA's blocks."""
    if match.response and has_template(match.intent, match.response):
        return match.response
    domain = "button" if domain == "input_button" else domain
    if match.slots.get("device_class"):
        return "cover_device_class"
    if not match.slots.get("name") and domain == "light":
        return "lights_area" if match.slots.get("area") else "light_all"
    return domain if domain in _NAMED_KEYS else "default"


def turn(ctx: Context, match: IntentMatch, on: bool) -> Outcome:
    """HassTurnOn / HassTurnOff on every target (lights, switches, covers, locks, ...)."""
    targets = targets_of(ctx, match)
    if not targets.ok:
        return failed(targets)
    actions = tuple(a for a in (_switch(ctx, n, on) for n in targets.entities) if a)
    if not actions:
        return refuse("feature_not_supported")
    key = _turn_key(match, actions[0]["domain"])
    return Outcome(reply(ctx, match, key, actions[0]["entity"]), actions)


def turn_on(ctx: Context, match: IntentMatch) -> Outcome:
    """HassTurnOn."""
    return turn(ctx, match, True)


def turn_off(ctx: Context, match: IntentMatch) -> Outcome:
    """HassTurnOff."""
    return turn(ctx, match, False)


BRIGHTNESS_STEP = 25
"""Percent one "brighter" / "dimmer" (slot ``brightness_step`` up/down) changes a light by."""


LIGHT_SLOTS = {"brightness": "brightness", "color": "color", "temperature": "color_temp"}
"""HassLightSet's slots -> the light feature each needs (``temperature``: Kelvin, as Home
Assistant's intent has it for lights; it becomes ``color_temp_kelvin``)."""


def light_set(ctx: Context, match: IntentMatch) -> Outcome:
    """HassLightSet: ``brightness`` (percent; 0 turns off), ``brightness_step`` ("up"/"down":
    :data:`BRIGHTNESS_STEP` percent more or less, never off), ``color`` (a color name) or
    ``temperature`` (Kelvin: ``color_temp_kelvin``, BC-43). A light without the slot's
    feature gets "feature_not_supported" (nothing is sent)."""
    targets = targets_of(ctx, match)
    if not targets.ok:
        return failed(targets)
    step = {"up": BRIGHTNESS_STEP, "down": -BRIGHTNESS_STEP}.get(
        str(match.slots.get("brightness_step", ""))
    )
    slot = "brightness" if step else next((k for k in LIGHT_SLOTS if k in match.slots), None)
    if slot is None:
        return refuse("nothing_to_do")
    feature = LIGHT_SLOTS[slot]
    names = [n for n in targets.entities if feature in ctx.entity(n).features]
    if not names:
        return refuse("feature_not_supported")
    actions = tuple(
        _light(ctx, n, slot, _stepped(ctx, n, step) if step else match.slots[slot]) for n in names
    )
    return Outcome(reply(ctx, match, slot, names[0]), actions)


def _stepped(ctx: Context, name: str, step: int) -> int:
    """Light ``name``'s brightness moved by ``step`` percent, kept within 1..100 (an off
    light counts as 0; an on light with no known brightness as 100)."""
    on = ctx.home.state(name) == "on"
    current = ctx.home.attributes(name).get("brightness_pct", 100 if on else 0)
    return max(1, min(100, int(current) + step))


def _light(ctx: Context, name: str, feature: str, value) -> dict:
    """Set one light's brightness, color or color temperature (``feature``: the slot); its
    action."""
    if feature == "brightness":
        pct = max(0, min(100, int(value)))
        ctx.home.set_state(name, "on" if pct else "off", brightness_pct=pct)
        return action(name, "light", "turn_on", brightness_pct=pct)
    if feature == "temperature":
        kelvin = int(float(value))
        ctx.home.set_state(name, "on", color_temp_kelvin=kelvin)
        return action(name, "light", "turn_on", color_temp_kelvin=kelvin)
    ctx.home.set_state(name, "on", color_name=str(value))
    return action(name, "light", "turn_on", color_name=str(value))


# intent -> (service, new state, states it applies to when no name is given)
_MEDIA = {
    "HassMediaNext": ("media_next_track", None, ("playing",)),
    "HassMediaPrevious": ("media_previous_track", None, ("playing",)),
    "HassMediaPause": ("media_pause", "paused", ("playing",)),
    "HassMediaUnpause": ("media_play", "playing", ("paused", "idle", "on")),
}


def media(ctx: Context, match: IntentMatch) -> Outcome:
    """HassMediaNext/Previous/Pause/Unpause; without a name only players in a fitting state."""
    targets = targets_of(ctx, match)
    if not targets.ok:
        return failed(targets)
    service, state, wanted = _MEDIA[match.intent]
    names = list(targets.entities)
    if not match.slots.get("name"):
        names = [n for n in names if ctx.home.state(n) in wanted]
        if not names:
            return refuse("entity_wrong_state", state=wanted[0])
    for name in names:
        if state:
            ctx.home.set_state(name, state)
    actions = tuple(action(n, "media_player", service) for n in names)
    return Outcome(reply(ctx, match, "default", names[0]), actions)


def set_position(ctx: Context, match: IntentMatch) -> Outcome:
    """HassSetPosition: ``position`` percent on covers/valves (0 is closed)."""
    targets = targets_of(ctx, match)
    if not targets.ok:
        return failed(targets)
    position = max(0, min(100, int(match.slots.get("position", 0))))
    actions = []
    for name in targets.entities:
        domain = ctx.entity(name).domain
        ctx.home.set_state(name, "open" if position else "closed", current_position=position)
        actions.append(action(name, domain, f"set_{domain}_position", position=position))
    key = match.response or ("cover_device_class" if match.slots.get("device_class") else "default")
    return Outcome(reply(ctx, match, key, targets.entities[0]), tuple(actions))
