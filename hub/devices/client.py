"""paho-mqtt helpers of the connection: the default client factory, login and TLS, and the
callback guard (when to reconnect is :mod:`hub.devices.reconnect`)."""

from __future__ import annotations

import logging
import ssl

from paho.mqtt.client import CallbackAPIVersion, Client, MQTTv5

log = logging.getLogger("hub.devices.link")


def safe(fn, what: str):
    """``fn`` wrapped so that no exception leaves it into paho: logged as one WARNING."""

    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            log.warning("MQTT %s handler failed: %s: %s", what, type(exc).__name__, exc)
            return None

    wrapper.__name__ = getattr(fn, "__name__", what)
    return wrapper


def secure(client, settings) -> None:
    """Give ``client`` the ``[mqtt]`` login (``username``, ``password``) and TLS (``tls``,
    ``ca_file``, ``cert_file``, ``key_file``; the broker's certificate is always checked)
    that ``settings`` (:class:`hub.settings.MqttSettings`) asks for."""
    if settings.username:
        client.username_pw_set(settings.username, settings.password or None)
    if settings.tls:
        client.tls_set(
            ca_certs=settings.ca_file or None,
            certfile=settings.cert_file or None,
            keyfile=settings.key_file or None,
            cert_reqs=ssl.CERT_REQUIRED,
        )


def new_client(client_id: str):
    """The default client factory: a paho-mqtt 2.x MQTT v5 client (callback API 2)."""
    return Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=MQTTv5)
