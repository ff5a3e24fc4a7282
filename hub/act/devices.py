"""Handlers that change devices: turn on/off, light settings, media, covers, to-do lists.

State changes mirror what Home Assistant's services leave behind (``cover.open_cover`` ->
``open``, ``lock.unlock`` -> ``unlocked``, ``media_player.media_pause`` -> ``paused``).
"""

from __future__ import annotations

from hub.act.common import Context, Outcome, action, failed, targets_of
from hub.intents.rules import IntentMatch
from hub.act.responses import error_text, simple, template, turned

# domain -> (service, new state) for HassTurnOn (True) and HassTurnOff (False).
_SWITCH = {
    "cover": {True: ("open_cover", "open"), False: ("close_cover", "closed")},
    "valve": {True: ("open_valve", "open"), False: ("close_valve", "closed")},
    "lock": {True: ("lock", "locked"), False: ("unlock", "unlocked")},
    "script": {True: ("turn_on", None), False: ("turn_off", None)},
    "scene": {True: ("turn_on", "scene")},
}
_ON_OFF = ("light", "switch", "fan", "media_player", "input_boolean", "climate")
_NAMED_KEYS = ("cover", "lock", "scene", "script", "valve")  # response key = domain


def _switch(ctx: Context, name: str, on: bool) -> dict | None:
    """Turn one entity on/off in the state store; its action, or None if unsupported."""
    entity = ctx.home.entity(name)
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
    if match.response and template(match.intent, match.response):
        return match.response
    if match.slots.get("device_class"):
        return "cover_device_class"
    if match.slots.get("name"):
        return domain if domain in _NAMED_KEYS else "default"
    if domain == "light":
        return "lights_area" if match.slots.get("area") else "light_all"
    return domain if domain in _NAMED_KEYS else "default"


def turn(ctx: Context, match: IntentMatch, on: bool) -> Outcome:
    """HassTurnOn / HassTurnOff on every target (lights, switches, covers, locks, ...)."""
    targets = targets_of(ctx, match)
    if not targets.ok:
        return failed(targets)
    actions = tuple(a for a in (_switch(ctx, n, on) for n in targets.entities) if a)
    if not actions:
        return Outcome(error_text("feature_not_supported"), ok=False)
    domain = actions[0]["domain"]
    key = _turn_key(match, domain)
    text = turned(on, domain) if key == "default" else simple(match.intent, key, match.slots)
    return Outcome(text, actions)


def light_set(ctx: Context, match: IntentMatch) -> Outcome:
    """HassLightSet: ``brightness`` (percent; 0 turns off) or ``color`` (a color name)."""
    targets = targets_of(ctx, match)
    if not targets.ok:
        return failed(targets)
    feature = "brightness" if "brightness" in match.slots else "color"
    if feature not in match.slots:
        return Outcome(error_text("nothing_to_do"), ok=False)
    names = [n for n in targets.entities if feature in ctx.home.entity(n).features]
    if not names:
        return Outcome(error_text("feature_not_supported"), ok=False)
    actions = tuple(_light(ctx, n, feature, match.slots[feature]) for n in names)
    return Outcome(simple(match.intent, feature, match.slots), actions)


def _light(ctx: Context, name: str, feature: str, value) -> dict:
    """Set one light's brightness or color; its action."""
    if feature == "brightness":
        pct = max(0, min(100, int(value)))
        ctx.home.set_state(name, "on" if pct else "off", brightness_pct=pct)
        return action(name, "light", "turn_on", brightness_pct=pct)
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
            return Outcome(error_text("entity_wrong_state", state=wanted[0]), ok=False)
    for name in names:
        if state:
            ctx.home.set_state(name, state)
    actions = tuple(action(n, "media_player", service) for n in names)
    return Outcome(simple(match.intent, "default", match.slots), actions)


def set_volume(ctx: Context, match: IntentMatch) -> Outcome:
    """HassSetVolume: ``volume`` percent -> ``volume_level`` 0..1."""
    targets = targets_of(ctx, match)
    if not targets.ok:
        return failed(targets)
    level = max(0, min(100, int(match.slots.get("volume", 0)))) / 100
    actions = []
    for name in targets.entities:
        ctx.home.set_state(name, ctx.home.state(name), volume_level=level)
        actions.append(action(name, "media_player", "volume_set", volume_level=level))
    return Outcome(simple(match.intent, "default", match.slots), tuple(actions))


def set_position(ctx: Context, match: IntentMatch) -> Outcome:
    """HassSetPosition: ``position`` percent on covers/valves (0 is closed)."""
    targets = targets_of(ctx, match)
    if not targets.ok:
        return failed(targets)
    position = max(0, min(100, int(match.slots.get("position", 0))))
    actions = []
    for name in targets.entities:
        domain = ctx.home.entity(name).domain
        ctx.home.set_state(name, "open" if position else "closed", current_position=position)
        actions.append(action(name, domain, f"set_{domain}_position", position=position))
    key = match.response or ("cover_device_class" if match.slots.get("device_class")
                             else "default")
    return Outcome(simple(match.intent, key, match.slots), tuple(actions))


def add_item(ctx: Context, match: IntentMatch) -> Outcome:
    """HassListAddItem / HassShoppingListAddItem: append ``item`` to a to-do list."""
    item = str(match.slots.get("item", "")).strip()
    if not item:
        return Outcome(error_text("nothing_to_do"), ok=False)
    targets = targets_of(ctx, match)
    if not targets.ok:
        return failed(targets)
    name = _shopping_list(ctx, targets.entities)
    items = list(ctx.home.attributes(name).get("items", [])) + [item]
    ctx.home.set_state(name, str(len(items)), items=items)
    return Outcome(simple(match.intent, "item_added", {**match.slots, "item": item}),
                   (action(name, "todo", "add_item", item=item),))


def _shopping_list(ctx: Context, names) -> str:
    """The list to use: the only one, else one called like "shopping", else the first."""
    shopping = [n for n in names if "shopping" in n.casefold()]
    return (shopping or list(names))[0]


HANDLERS = {
    "HassTurnOn": lambda ctx, m: turn(ctx, m, True),
    "HassTurnOff": lambda ctx, m: turn(ctx, m, False),
    "HassLightSet": light_set,
    **{name: media for name in _MEDIA},
    "HassSetVolume": set_volume,
    "HassSetPosition": set_position,
    "HassListAddItem": add_item,
    "HassShoppingListAddItem": add_item,
}
