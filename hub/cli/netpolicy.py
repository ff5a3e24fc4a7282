"""The service unit's address policy against the hosts the config names (issue 20).

The shipped unit allows the LAN and denies the internet (``IPAddressDeny=any`` plus
``IPAddressAllow=`` localhost, link-local, multicast and the private ranges of RFC 1918 and
RFC 4193). :func:`blocked` says which configured host (``[mqtt] host``, ``[llm] url``) the
unit would block; ``python -m hub.cli.netpolicy --config F --unit U`` (run by
``scripts/install-service.sh``) adds an ``IPAddressAllow=`` line to ``U`` for each such host,
resolved now. Semantics: systemd.resource-control(5), "IPAddressAllow=ADDRESS[/PREFIXLENGTH]".
"""

from __future__ import annotations

import argparse
import ipaddress
import socket
import sys
import tomllib
from pathlib import Path
from urllib.parse import urlsplit

KEYWORDS = {
    "any": ("0.0.0.0/0", "::/0"),
    "localhost": ("127.0.0.0/8", "::1/128"),
    "link-local": ("169.254.0.0/16", "fe80::/64"),
    "multicast": ("224.0.0.0/4", "ff00::/8"),
}
"""systemd's address keywords -> the networks they stand for."""
UNIT_PATHS = ("/etc/systemd/system/hub.service", "~/.config/systemd/user/hub.service")
"""Where ``scripts/install-service.sh`` puts the unit (system, user)."""


def _get(config, section: str, key: str, default=""):
    part = config.get(section, {}) if isinstance(config, dict) else getattr(config, section, None)
    if isinstance(part, dict):
        return part.get(key, default)
    return getattr(part, key, default) if part is not None else default


def configured_hosts(config) -> list[tuple[str, str]]:
    """``[(config key, host)]`` the hub connects to: the MQTT broker, a remote LLM server, Home
    Assistant. ``config``: :class:`hub.settings.Settings` or the parsed TOML (a dict: the
    installer reads the file before the hub's dependencies are there)."""
    out = []
    if _get(config, "mqtt", "enabled", True) and _get(config, "mqtt", "host"):
        out.append(("mqtt.host", str(_get(config, "mqtt", "host"))))
    for section, key in (("llm", "url"), ("homeassistant", "url")):
        host = urlsplit(str(_get(config, section, key) or "")).hostname
        if host:
            out.append((f"{section}.{key}", host))
    return out


def unit_policy(text: str) -> tuple[list[str], list[str]]:
    """``(allow, deny)`` entries of a unit's ``[Service]`` ``IPAddressAllow=`` / ``Deny=``
    lines, in order (an empty assignment resets the list, as systemd does)."""
    allow: list[str] = []
    deny: list[str] = []
    for raw in text.splitlines():
        key, sep, value = raw.strip().partition("=")
        if not sep or key not in ("IPAddressAllow", "IPAddressDeny"):
            continue
        target = allow if key == "IPAddressAllow" else deny
        if not value.strip():
            target.clear()
        target.extend(value.split())
    return allow, deny


def _networks(entries) -> list:
    nets = []
    for entry in entries:
        for item in KEYWORDS.get(entry, (entry,)):
            try:
                nets.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                continue
    return nets


def allows(text: str, address: str) -> bool:
    """True when a unit with ``text`` lets ``address`` through. As in systemd: an address in
    an allow entry passes; else one in a deny entry is blocked; else it passes."""
    allow, deny = unit_policy(text)
    ip = ipaddress.ip_address(address)
    if any(ip in net for net in _networks(allow)):
        return True
    return not any(ip in net for net in _networks(deny))


def resolve(host: str) -> list[str]:
    """The host's IP addresses (an address stays itself); [] when it does not resolve."""
    try:
        return [str(ipaddress.ip_address(host))]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except OSError:
        return []
    return sorted({info[4][0] for info in infos})


def blocked(config, text: str, resolver=resolve) -> list[tuple[str, str, list[str]]]:
    """``[(config key, host, [blocked addresses])]`` the unit ``text`` would block."""
    out = []
    for key, host in configured_hosts(config):
        bad = [a for a in resolver(host) if not allows(text, a)]
        if bad:
            out.append((key, host, bad))
    return out


def installed_unit() -> Path | None:
    """The installed unit file (system first, then user), or None."""
    for raw in UNIT_PATHS:
        path = Path(raw).expanduser()
        if path.is_file():
            return path
    return None


def open_for(config, unit: Path) -> list[str]:
    """Add ``IPAddressAllow=`` lines to ``unit`` (after its last one) for every configured host
    it blocks; returns the added lines."""
    text = unit.read_text(encoding="utf-8")
    found = blocked(config, text)
    lines = [f"IPAddressAllow={' '.join(addrs)}" for _key, _host, addrs in found]
    if not lines:
        return []
    rows = text.splitlines()
    last = max(i for i, row in enumerate(rows) if row.startswith("IPAddressAllow="))
    notes = ", ".join(f"{key} = {host}" for key, host, _ in found)
    rows[last + 1 : last + 1] = [f"# added by install-service.sh for {notes}"] + lines
    unit.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return lines


def _config_text(path: Path) -> str:
    """The config's text, read only from a regular file and at most 16 MB (this module runs
    in a venv of hub alone, without its dependencies: :func:`hub.paths.read_user_text`'s rule
    with the standard library only).

    Raises:
        OSError: not a regular file, too large or unreadable.
        UnicodeDecodeError: not UTF-8.
    """
    if not path.is_file():  # a FIFO or device could be read forever
        raise OSError(f"not a regular file: {path}")
    with path.open("rb") as f:
        data = f.read((16 << 20) + 1)
    if len(data) > 16 << 20:
        raise OSError(f"larger than 16 MB: {path}")
    return data.decode("utf-8-sig")


def main(argv=None) -> int:
    """``python -m hub.cli.netpolicy --config F --unit U``: open ``U`` for ``F``'s hosts."""
    parser = argparse.ArgumentParser(prog="python -m hub.cli.netpolicy")
    parser.add_argument("--config", required=True)
    parser.add_argument("--unit", required=True, type=Path)
    args = parser.parse_args(argv)
    try:
        config = tomllib.loads(_config_text(Path(args.config)))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        print(
            f"netpolicy: {args.config}: {exc}; the unit keeps the LAN-only policy", file=sys.stderr
        )
        return 0
    for key, host in configured_hosts(config):
        if not resolve(host):
            print(
                f"netpolicy: {key} = {host} does not resolve now; if it is outside the LAN, "
                f"add IPAddressAllow=<its address> to {args.unit}",
                file=sys.stderr,
            )
    for line in open_for(config, args.unit):
        print(f"netpolicy: {line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
