"""Write a generated ``[home]`` of N entities (default 500) for LLM and prompt-size tests.

Usage: ``python scripts/make_big_home.py [N] > big.toml``. Areas are rooms of a large house;
entities cycle through the common domains with names like "Kitchen Ceiling Light 3". The
result passes the config check (``hub config check --config big.toml``).
"""

from __future__ import annotations

import sys

AREAS = (
    "Kitchen",
    "Living Room",
    "Office",
    "Bedroom",
    "Guest Room",
    "Bathroom",
    "Hallway",
    "Garage",
    "Basement",
    "Attic",
    "Dining Room",
    "Laundry",
    "Nursery",
    "Porch",
    "Garden",
    "Library",
    "Studio",
    "Gym",
    "Pantry",
    "Cellar",
)
KINDS = (
    ("light", "Ceiling Light", "off"),
    ("light", "Lamp", "on"),
    ("switch", "Plug", "off"),
    ("fan", "Fan", "off"),
    ("cover", "Blinds", "closed"),
    ("sensor", "Temperature", "21"),
    ("binary_sensor", "Window", "off"),
    ("lock", "Door Lock", "locked"),
    ("media_player", "Speaker", "idle"),
    ("climate", "Thermostat", "heat"),
)


def home_toml(n: int) -> str:
    """The TOML text of a home with ``n`` entities."""
    lines = ["[home]", 'language = "en"']
    for area in AREAS:
        lines += ["[[home.areas]]", f'name = "{area}"']
    for i in range(n):
        area = AREAS[i % len(AREAS)]
        domain, kind, state = KINDS[(i // len(AREAS)) % len(KINDS)]
        number = i // (len(AREAS) * len(KINDS)) + 1
        lines += [
            "[[home.entities]]",
            f'name = "{area} {kind} {number}"',
            f'domain = "{domain}"',
            f'area = "{area}"',
            f'state = "{state}"',
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(home_toml(int(sys.argv[1]) if len(sys.argv) > 1 else 500))
