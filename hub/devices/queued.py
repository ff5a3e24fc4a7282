"""What the hub says about commands the broker has not acknowledged yet.

A queued command may still happen, so the hub never says it failed: "I'll turn on the
Kitchen Light when it's reachable." (and, if it is later dropped, "I couldn't reach the
Kitchen Light.", from :mod:`hub.devices.mqtt`; or, when it may already be at a broker and
its device would still act on it, "The Kitchen Light didn't confirm; it may still turn on.").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_SAME = {
    "turn_on": "turn on",
    "turn_off": "turn off",
    "lock": "lock",
    "unlock": "unlock",
    "open_cover": "open",
    "close_cover": "close",
    "open_valve": "open",
    "close_valve": "close",
    "set_cover_position": "move",
    "set_valve_position": "move",
    "media_pause": "pause",
}
"""The services whose verb is the same with the device as object ("turn on the X") and said
of it ("it may still turn on")."""

VERBS = {
    **_SAME,
    "media_play": "resume",
    "media_next_track": "skip on",
    "media_previous_track": "go back on",
    "volume_set": "set the volume of",
    "add_item": "add that to",
}
"""Home Assistant service -> the verb the queued sentence uses."""


DOES = {
    **_SAME,
    "media_play": "resume playing",
    "media_next_track": "skip to the next track",
    "media_previous_track": "go back a track",
    "volume_set": "change its volume",
    "start": "start",
    "return_to_base": "return to its base",
    "start_mowing": "start mowing",
    "dock": "dock",
}
"""Home Assistant service -> what the device does, said of it ("it may still turn on",
"I've asked the Kitchen Light to turn on"). A service not here has no word: "" ."""
_SETTING = {
    "brightness_pct": "change its brightness",
    "color_name": "change its color",
    "color_temp_kelvin": "change its color temperature",
}
"""A ``turn_on`` that sets one of these (a light setting) is said as this."""


def does(action: dict) -> str:
    """What ``action`` asks of its device, as a verb phrase ("turn on", "change its
    brightness"), or "" when there is no word for it."""
    data = action.get("data") or {}
    if action.get("service") == "turn_on":
        if data.get("brightness_pct") == 0:  # HassLightSet to 0 percent: the light goes off
            return "turn off"
        for key, phrase in _SETTING.items():
            if key in data:
                return phrase
    return DOES.get(action.get("service") or "", "")


def unconfirmed_text(action: dict) -> str:
    """What the hub says when a command may still reach its device but did not confirm in
    time: ``The Kitchen Light didn't confirm; it may still turn on.``"""
    name, verb = action.get("entity", "device"), does(action)
    return f"The {name} didn't confirm; it may still {verb or 'happen'}."


REFUSED = {
    "unreachable": "The {name} is not reachable.",
    "unsupported": "The {name} can't do that.",
    "ha_starting": "Home Assistant is still starting.",
}
"""Backend results for which nothing was sent -> what the hub says instead of a confirmation."""


def _names(names: list[str]) -> str:
    items = [f"the {n}" for n in dict.fromkeys(names)]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def queued_text(actions: list[dict]) -> str:
    """One sentence per verb: ``I'll turn on the Kitchen Light when it's reachable.``"""
    by_verb: dict[str, list[str]] = {}
    for action in actions:
        verb = VERBS.get(action.get("service"), "update")
        by_verb.setdefault(verb, []).append(action.get("entity", "device"))
    out = []
    for verb, names in by_verb.items():
        they = "it's" if len(set(names)) == 1 else "they're"
        out.append(f"I'll {verb} {_names(names)} when {they} reachable.")
    return " ".join(out)


def all_sent(sent: list[tuple[dict, str]]) -> bool:
    """True when none of ``sent`` (``(action, result)`` pairs) was only queued or refused."""
    return not any(result in ("queued", "ha_queued") or result in REFUSED for _, result in sent)


def queued_update(state: Mapping[str, Any], response: str, sent: list[tuple[dict, str]]) -> dict:
    """The act node's extra update when some of its actions were only queued.

    Args:
        state: the turn's state (its ``errors``).
        response: the handlers' answer.
        sent: ``(action, result)`` pairs, result from the backend's ``publish``.
    Returns:
        ``{}`` when nothing was queued or refused; else a new ``response`` (the answer for
        what was done, the queued sentence, then one sentence per command not sent: "The
        Kitchen Light is not reachable.") and an ``errors`` entry (the trace says
        ``degraded``).
    """
    queued = [a for a, result in sent if result in ("queued", "ha_queued")]
    refused = [(a, result) for a, result in sent if result in REFUSED]
    notes = [
        a["note"][0].upper() + a["note"][1:] + "."
        for a, result in sent
        if a.get("note") and result == "done"
    ]
    if not queued and not refused:
        return {"response": " ".join([response, *notes]).strip()} if notes else {}
    done = [a for a, result in sent if result not in REFUSED and a not in queued]
    parts = ([response] + notes) if done else []
    if any(result == "ha_queued" for _, result in sent):
        parts.append("I couldn't reach Home Assistant.")
    if queued:
        parts.append(queued_text(queued))
    parts += [REFUSED[result].format(name=a.get("entity", "device")) for a, result in refused]
    entry = {
        "node": "act",
        "kind": "transient",
        "message": f"{len(queued)} of {len(sent)} commands not acknowledged by the MQTT "
        f"broker yet; queued; {len(refused)} not sent (device offline or "
        f"no payload for it)",
    }
    return {
        "response": " ".join(p for p in parts if p).strip(),
        "errors": list(state.get("errors") or []) + [entry],
    }
