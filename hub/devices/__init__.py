"""Device backends: MQTT (:mod:`hub.devices.mqtt`).

:mod:`~hub.devices.topics` (topics, payloads, checks), :mod:`~hub.devices.outbox` (pending
commands), :mod:`~hub.devices.link` and :mod:`~hub.devices.session` (the supervised paho
connection), :mod:`~hub.devices.identity` (client id), :mod:`~hub.devices.discovery` (Home
Assistant MQTT discovery), :mod:`~hub.devices.speech` (what is said about queued commands).
"""
