"""``hub home import``: write a ``[home]`` from Home Assistant (what it exposes to voice
assistants, :mod:`hub.devices.ha.importer`) or from Zigbee2MQTT's ``bridge/devices``, ready to
edit and paste into ``hub.toml``; the counts of what was left out go to stderr."""

from __future__ import annotations

import asyncio
import json
import sys
import tomllib
from pathlib import Path

from hub.cli.config import toml_value
from hub.config.home import domains, entity_keys
from hub.errors import BadInputError, ConfigError, ExitCode
from hub.settings import load_settings, settings_from_dict


def add_parsers(sub, *, common, inject, store) -> None:
    """Register ``home`` with ``import``."""
    p = sub.add_parser(
        "home",
        help="import the home from Home Assistant or Zigbee2MQTT",
        description="`hub home import` reads the areas, floors and exposed "
        "entities of Home Assistant ([homeassistant] url and token), or the "
        "devices of Zigbee2MQTT (--from zigbee2mqtt, over [mqtt]), and prints a "
        "[home] (with [homeassistant] entities or [mqtt.devices]) to edit.",
    )
    common(p)
    p.add_argument("action", choices=("import",), help="import")
    p.add_argument(
        "--from",
        dest="source",
        choices=("homeassistant", "zigbee2mqtt"),
        default="homeassistant",
        help="where the home comes from",
    )
    p.add_argument("--out", metavar="FILE", help="write to FILE instead of stdout")
    p.add_argument(
        "--wait",
        type=float,
        default=300.0,
        metavar="S",
        help="while Home Assistant is still starting, wait this long (default 300)",
    )
    p.add_argument("--base-topic", default="zigbee2mqtt", help="Zigbee2MQTT's base topic")
    p.set_defaults(func=run_home)


def _key(name: str) -> str:
    return json.dumps(name, ensure_ascii=False)


def home_toml(home: dict, links: dict, table: str) -> str:
    """``[home]`` tables plus ``links`` as ``[<table>]`` inline tables, as TOML text."""
    lines = ["# written by `hub home import`; edit names and areas as you like", "[home]"]
    for part in ("floors", "areas", "entities"):
        for item in home.get(part, []):
            lines += ["", f"[[home.{part}]]"] + [f"{k} = {toml_value(v)}" for k, v in item.items()]
    lines += ["", f"[{table}]"] + [
        f"{_key(name)} = {toml_value(link)}" for name, link in links.items()
    ]
    return "\n".join(lines) + "\n"


def _from_ha(settings, wait_s: float) -> tuple[dict, dict, dict]:
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.devices.ha.client import HaClient, read_token
    from hub.devices.ha.importer import build_home, fetch

    cfg = settings.homeassistant
    if not cfg.url:
        raise ConfigError('homeassistant.url: not set (e.g. "http://homeassistant.local:8123")')
    token = read_token(cfg)
    said = dict(zip(entity_keys(settings.home.entities), settings.home.entities, strict=True))
    previous = {  # unique_id -> the name it has in [home] (links are keyed by the hub's key)
        link["unique_id"]: said[key]["name"] if key in said else key
        for key, link in cfg.entities.items()
        if isinstance(link, dict) and link.get("unique_id")
    }

    async def go():
        async with HaClient(cfg.url, token, cfg.timeout_s) as ha:
            return await fetch(ha, wait_s)

    return build_home(asyncio.run(go()), set(domains()), previous)


def _from_z2m(settings, base: str) -> tuple[dict, dict, dict]:
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.devices.dialects.z2m import devices_from_bridge
    from hub.devices.retained import read_retained

    if not settings.mqtt.host:
        raise ConfigError(
            'mqtt.host: not set (the broker Zigbee2MQTT publishes to, e.g. "localhost")'
        )
    payload = read_retained(settings.mqtt, f"{base}/bridge/devices")
    try:
        listed = json.loads(payload)
    except ValueError:
        listed = None
    if not isinstance(listed, list):  # nothing is written: a file already there is kept
        raise BadInputError(
            f"{base}/bridge/devices holds no Zigbee2MQTT device list (a JSON list); nothing "
            "imported"
        )
    found = devices_from_bridge(payload, base)
    entities, links = [], {}
    for dev in found:
        entities.append({"name": dev["name"], "domain": dev["domain"]})
        link = {"dialect": "zigbee2mqtt", "device": dev["friendly_name"]}
        if base != "zigbee2mqtt":
            link["base_topic"] = base
        if "mireds" in dev:
            link["mireds"] = list(dev["mireds"])
        links[dev["name"]] = link
    return {"entities": entities}, links, {"imported": len(entities)}


def run_home(args) -> int:
    """``hub home import``: 0 written; 2 bad config or a rejected token; 3 unreachable."""
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.devices.ha.client import AuthError, LinkClosed
    from hub.devices.ha.importer import NotRunning

    settings = load_settings(args.config, warn_no_home=False)
    try:
        if args.source == "homeassistant":
            home, links, summary = _from_ha(settings, args.wait)
            table = "homeassistant.entities"
        else:
            home, links, summary = _from_z2m(settings, args.base_topic)
            table = "mqtt.devices"
    except AuthError:
        print(
            "hub: Home Assistant rejected the token ([homeassistant] token_file)", file=sys.stderr
        )
        return ExitCode.BAD_INPUT
    except (LinkClosed, NotRunning, OSError, TimeoutError) as exc:
        print(f"hub: {args.source} not reachable: {exc}", file=sys.stderr)
        return ExitCode.NETWORK
    text = home_toml(home, links, table)
    settings_from_dict(tomllib.loads(text))  # what is written passes the config check
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    print(
        "hub: imported " + ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in summary.items()),
        file=sys.stderr,
    )
    return ExitCode.OK
