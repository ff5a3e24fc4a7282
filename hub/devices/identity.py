"""The hub's MQTT client id: ``hub-<host>-<8 hex install id>``, one per running hub (BC-29).

Two connections with one client id evict each other forever, so the default id is never a
fixed literal: the install id is made once and kept in the store (``kv`` table,
``mqtt_install_id``). A second hub on the same host with the same store gets a lock refusal
and then its own id (``…-<4 hex>``), logged once.
"""

from __future__ import annotations

import fcntl
import logging
import os
import secrets
import socket
import tempfile

from hub.devices.topics import slug

log = logging.getLogger("hub.devices.identity")

_SECOND: set[str] = set()
"""Client ids of this process made because another hub held the base id."""
_HELD: dict[str, int] = {}  # client id -> lock file descriptor, held until release()
KV_KEY = "mqtt_install_id"


def install_id(store) -> str:
    """8 hex digits, made once per store (per process without one)."""
    if store is None:
        return secrets.token_hex(4)
    value = store.kv_get(KV_KEY)  # the store never raises; None: first start or unreadable
    if isinstance(value, str) and value:
        return value
    value = secrets.token_hex(4)
    if not store.kv_set(KV_KEY, value):
        log.warning("install id not stored; using a new one for this run")
    return value


def _host() -> str:
    try:
        return slug(socket.gethostname()).replace("_", "-")[:32] or "host"
    except Exception:
        return "host"


def _lock(client_id: str) -> bool:
    """Hold ``$TMPDIR/hub-mqtt-<client_id>.lock`` for this process; False when another has it."""
    path = os.path.join(tempfile.gettempdir(), f"hub-mqtt-{client_id}.lock")
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return True  # no lock possible: the broker's takeover message still tells
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False
    _HELD[client_id] = fd
    return True


def release(client_id: str) -> None:
    """Let another hub use ``client_id`` (the backend closed)."""
    _SECOND.discard(client_id)
    fd = _HELD.pop(client_id, None)
    if fd is not None:
        os.close(fd)


def client_id_for(settings, store, one_off: str = "") -> str:
    """``[mqtt] client_id`` when set, else ``hub-<host>-<install id>``; a second process on
    this host with the same id gets ``<id>-<4 hex>`` instead. ``one_off`` (``ask``,
    ``replay``): always ``<id>-<one_off>-<4 hex>``, so a one-off command never takes over the
    service's session, even when the lock cannot be seen (the unit's ``PrivateTmp=``)."""
    base = settings.client_id or f"hub-{_host()}-{install_id(store)}"
    if one_off:
        base = f"{base}-{one_off}-{secrets.token_hex(2)}"
    if _lock(base):
        return base
    other = f"{base}-{secrets.token_hex(2)}"
    log.warning(
        "MQTT client id %s is in use by another hub on this host; using %s, and leaving the "
        "hub's status and Home Assistant discovery to that hub",
        base,
        other,
    )
    _lock(other)
    _SECOND.add(other)
    return other


def is_second(client_id: str) -> bool:
    """True when ``client_id`` was made by :func:`client_id_for` because another hub on this
    host holds the base id: that hub owns ``<prefix>/status`` and the discovery configs, so
    this one announces, clears and marks offline nothing (BC-29, BC-31)."""
    return client_id in _SECOND
