"""Read one retained MQTT message (Zigbee2MQTT's ``bridge/devices``) with a short-lived paho
client of its own (a one-off: no status, no will)."""

from __future__ import annotations

import secrets
import threading

from paho.mqtt.client import CallbackAPIVersion, Client, MQTTv5

from hub.devices.client import secure


def read_retained(settings, topic: str, timeout_s: float | None = None) -> bytes:
    """The retained payload on ``topic`` at the ``[mqtt]`` broker.

    Raises:
        OSError: the broker cannot be reached. TimeoutError: nothing retained arrived within
            ``timeout_s`` (default ``[mqtt] timeout_s`` + 3 s).
    """
    got: list[bytes] = []
    done = threading.Event()
    client = Client(
        CallbackAPIVersion.VERSION2, protocol=MQTTv5, client_id=f"hub-import-{secrets.token_hex(3)}"
    )
    secure(client, settings)

    def on_message(_c, _u, message) -> None:
        if message.topic == topic and not done.is_set():
            got.append(bytes(message.payload))
            done.set()

    client.on_message = on_message
    client.on_connect = lambda c, *_a: c.subscribe(topic, qos=1)
    client.connect_timeout = settings.timeout_s
    client.connect(settings.host, settings.port)
    client.loop_start()
    try:
        if not done.wait(timeout_s if timeout_s is not None else settings.timeout_s + 3.0):
            raise TimeoutError(f"nothing retained on {topic} at {settings.host}:{settings.port}")
    finally:
        client.disconnect()
        client.loop_stop()
    return got[0]
