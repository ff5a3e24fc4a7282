"""What the hub says about commands the broker has not acknowledged yet.

A queued command may still happen, so the hub never says it failed: "I'll turn on the
Kitchen Light when it's reachable." (and, if it is later dropped, "I couldn't reach the
Kitchen Light.", from :mod:`hub.devices.mqtt`).
"""

from __future__ import annotations

VERBS = {"turn_on": "turn on", "turn_off": "turn off", "lock": "lock", "unlock": "unlock",
         "open_cover": "open", "close_cover": "close", "open_valve": "open",
         "close_valve": "close", "set_cover_position": "move", "set_valve_position": "move",
         "media_pause": "pause", "media_play": "resume", "media_next_track": "skip on",
         "media_previous_track": "go back on", "volume_set": "set the volume of",
         "add_item": "add that to"}
"""Home Assistant service -> the verb the queued sentence uses."""


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


def queued_update(state: dict, response: str, sent: list[tuple[dict, str]]) -> dict:
    """The act node's extra update when some of its actions were only queued.

    Args:
        state: the turn's state (its ``errors``).
        response: the handlers' answer.
        sent: ``(action, result)`` pairs, result from the backend's ``publish``.
    Returns:
        ``{}`` when nothing was queued; else a new ``response`` (the queued sentence, after the
        answer for what was done) and an ``errors`` entry, so the trace says ``degraded``.
    """
    queued = [a for a, result in sent if result == "queued"]
    if not queued:
        return {}
    done = [a for a, result in sent if result != "queued"]
    text = queued_text(queued)
    if done:
        text = f"{response} {text}".strip()
    entry = {"node": "act", "kind": "transient",
             "message": f"{len(queued)} of {len(sent)} commands not acknowledged by the MQTT "
                        f"broker yet; queued"}
    return {"response": text, "errors": list(state.get("errors") or []) + [entry]}
