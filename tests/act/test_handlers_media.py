"""Media player handlers, table style: volume (absolute, relative), mute, search and play.

The TV starts ``playing`` with no ``volume_level`` (taken as 0.5)."""

from __future__ import annotations

import pytest

from intent_table import check_row

VOLUME = [
    ("set the tv volume to 30", {"name": "TV", "volume_level": 30}, 0.3),
    ("set the volume to 80 percent", {"volume_level": 80}, 0.8),
    ("change the tv volume to 10", {"name": "TV", "volume_level": 10}, 0.1),
    ("set TV volume to 50", {"name": "TV", "volume_level": 50}, 0.5),
    ("turn the volume to 20 percent on the tv", {"name": "TV", "volume_level": 20}, 0.2),
]


@pytest.mark.parametrize("text, slots, level", VOLUME)
def test_set_volume_sets_volume_level(text, slots, level):
    home = check_row(text, "HassSetVolume", slots, "Volume set", ("TV", "volume_set"))
    assert home.attributes("TV")["volume_level"] == level


RELATIVE = [
    ("turn up the volume on the tv", "up", 0.6),
    ("turn the tv down", "down", 0.4),
    ("tv volume down", "down", 0.4),
    ("lower the volume on the tv", "down", 0.4),
    ("turn the tv volume up", "up", 0.6),
    ("increase the volume of the tv", "up", 0.6),
]


@pytest.mark.parametrize("text, step, level", RELATIVE)
def test_relative_volume_steps_ten_percent(text, step, level):
    home = check_row(
        text, "HassSetVolumeRelative", {"volume_step": step}, "Volume set", ("TV", "volume_set")
    )
    assert home.attributes("TV")["volume_level"] == level


@pytest.mark.parametrize(
    "text, intent, muted",
    [
        ("mute the tv", "HassMediaPlayerMute", True),
        ("mute tv", "HassMediaPlayerMute", True),
        ("mute the volume on the tv", "HassMediaPlayerMute", True),
        ("mute the sound of the tv", "HassMediaPlayerMute", True),
        ("mute", "HassMediaPlayerMute", True),
        ("unmute the tv", "HassMediaPlayerUnmute", False),
        ("unmute tv", "HassMediaPlayerUnmute", False),
        ("unmute the volume on the tv", "HassMediaPlayerUnmute", False),
        ("unmute the sound of the tv", "HassMediaPlayerUnmute", False),
        ("unmute", "HassMediaPlayerUnmute", False),
    ],
)
def test_mute_and_unmute(text, intent, muted):
    home = check_row(text, intent, {}, "Muted" if muted else "Unmuted", ("TV", "volume_mute"))
    assert home.attributes("TV")["is_volume_muted"] is muted


PLAY = [
    ("play jazz on the tv", "jazz", None),
    ("play the beatles on tv", "the beatles", None),
    ("play the album thriller on the tv", "thriller", "album"),
    ("play the podcast serial on the tv", "serial", "podcast"),
    ("play the movie inception on the tv", "inception", "movie"),
]


@pytest.mark.parametrize("text, query, media_class", PLAY)
def test_search_and_play_sets_media_title_and_playing(text, query, media_class):
    home = check_row(
        text,
        "HassMediaSearchAndPlay",
        {"search_query": query, "name": "TV"},
        f"Playing {query}",
        ("TV", "play_media"),
        states={"TV": "idle"},
    )
    assert home.state("TV") == "playing"
    assert home.attributes("TV")["media_title"] == query
    assert home.attributes("TV")["media_content_type"] == (media_class or "music")
