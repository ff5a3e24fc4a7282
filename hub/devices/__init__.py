"""Device backends: MQTT (:mod:`hub.devices.mqtt`) and Home Assistant
(:mod:`hub.devices.ha`), routed per entity by :mod:`hub.devices.backends`.

MQTT: :mod:`~hub.devices.topics` (the hub's topics, payloads, checks),
:mod:`~hub.devices.dialects` (Zigbee2MQTT, Tasmota, HA's MQTT JSON schema, templates),
:mod:`~hub.devices.routes` (each entity's topics and translation), :mod:`~hub.devices.outbox`
(pending commands), :mod:`~hub.devices.link` (the supervised paho connection) using
:mod:`~hub.devices.connection` (one connection generation) and :mod:`~hub.devices.client`
(paho helpers), :mod:`~hub.devices.identity` (client id), :mod:`~hub.devices.discovery` (Home
Assistant MQTT discovery), :mod:`~hub.devices.queued` (what is said about commands not done).
"""
