"""Media player handlers: volume (absolute and relative), mute, search and play.

Volumes follow Home Assistant: the ``volume_level`` slot is a percent (0-100) and the entity's
``volume_level`` attribute is 0..1; ``volume_step`` is ``"up"``/``"down"`` (one step of 10 %)
or a signed percent; ``media_player.play_media`` sets ``media_title`` and the state ``playing``.
"""

from __future__ import annotations

from dataclasses import replace

from hub.act.common import Context, Outcome, action, failed, refuse, reply, targets_of
from hub.intents.match import IntentMatch

VOLUME_STEP = 0.1
"""One "volume up" step (Home Assistant's ``media_player.volume_up`` default)."""


def _percent(value) -> int | None:
    """A 0..100 percent from a slot value, or None when it is not a number."""
    try:
        return max(0, min(100, int(round(float(value)))))
    except (TypeError, ValueError):
        return None


def _level(ctx: Context, name: str) -> float:
    """The player's ``volume_level`` (0..1); 0.5 when unknown."""
    level = ctx.home.attributes(name).get("volume_level")
    return 0.5 if level is None else float(level)


def set_volume(ctx: Context, match: IntentMatch) -> Outcome:
    """HassSetVolume: ``volume_level`` percent -> the attribute ``volume_level`` 0..1."""
    raw = match.slots.get("volume_level", match.slots.get("volume"))
    percent = _percent(raw)
    if percent is None:
        return refuse("nothing_to_do")
    return _set_levels(ctx, match, lambda level: percent / 100)


def volume_relative(ctx: Context, match: IntentMatch) -> Outcome:
    """HassSetVolumeRelative: ``volume_step`` "up"/"down" or a signed percent."""
    step = match.slots.get("volume_step", "up")
    if step in ("up", "down"):
        delta = VOLUME_STEP if step == "up" else -VOLUME_STEP
    else:
        try:
            delta = float(step) / 100
        except (TypeError, ValueError):
            return refuse("nothing_to_do")
    return _set_levels(ctx, match, lambda level: min(1.0, max(0.0, level + delta)))


def _set_levels(ctx: Context, match: IntentMatch, new_level) -> Outcome:
    """Set every target's volume to ``new_level(old_level)``, rounded to 0.01."""
    targets = targets_of(ctx, match)
    if not targets.ok:
        return failed(targets)
    actions = []
    for name in targets.entities:
        level = round(new_level(_level(ctx, name)), 2)
        ctx.home.set_state(name, ctx.home.state(name) or "", volume_level=level)
        actions.append(action(name, "media_player", "volume_set", volume_level=level))
    return Outcome(reply(ctx, match, "default", targets.entities[0]), tuple(actions))


def mute(ctx: Context, match: IntentMatch) -> Outcome:
    """HassMediaPlayerMute / HassMediaPlayerUnmute: ``is_volume_muted``."""
    targets = targets_of(ctx, match)
    if not targets.ok:
        return failed(targets)
    muted = match.intent == "HassMediaPlayerMute"
    actions = []
    for name in targets.entities:
        ctx.home.set_state(name, ctx.home.state(name) or "", is_volume_muted=muted)
        actions.append(action(name, "media_player", "volume_mute", is_volume_muted=muted))
    return Outcome(reply(ctx, match, "default", targets.entities[0]), tuple(actions))


def search_and_play(ctx: Context, match: IntentMatch) -> Outcome:
    """HassMediaSearchAndPlay: play ``search_query`` on the target (one player)."""
    query = str(match.slots.get("search_query", "") or "").strip()
    if not query:
        return refuse("nothing_to_do")
    targets = targets_of(ctx, match)
    if not targets.ok:
        return failed(targets)
    name = targets.entities[0]
    media_class = str(match.slots.get("media_class", "") or "music")
    ctx.home.set_state(name, "playing", media_title=query, media_content_type=media_class)
    slots = {**match.slots, "media": query}
    text = reply(ctx, replace(match, slots=slots), "playing", name)
    return Outcome(
        text,
        (
            action(
                name,
                "media_player",
                "play_media",
                media_content_id=query,
                media_content_type=media_class,
            ),
        ),
    )
