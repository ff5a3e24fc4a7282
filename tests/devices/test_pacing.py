"""The pacer that sends Zigbee2MQTT's start-up reads a fixed gap apart (hub/devices/pacing.py),
on a fake wait: no sleeping."""

from __future__ import annotations

import json

from hub.devices.dialects.z2m import Z2mDevice
from hub.devices.pacing import QUERY_INTERVAL_S, Pacer


def test_bc43_reads_are_sent_in_order_a_gap_apart_and_once():
    sent, gaps = [], []

    def wait(seconds):
        gaps.append(seconds)
        return False

    pacer = Pacer(sent.append, wait=wait)
    pacer.start(["a", "b", "c"])
    pacer.thread.join(5)
    pacer.start(["d"])  # a second start (a reconnect) sends nothing
    assert sent == ["a", "b", "c"] and gaps == [QUERY_INTERVAL_S] * 2
    assert pacer.thread.is_alive() is False


def test_bc43_closing_stops_before_the_next_read():
    sent = []
    pacer = Pacer(sent.append, wait=lambda s: pacer.close() or True)
    pacer.start(["a", "b"])
    pacer.thread.join(5)
    assert sent == ["a"]


def test_bc43_the_z2m_read_is_the_documented_get():
    dev = Z2mDevice("Kitchen Floor Light", "kitchen/floor_light")
    (query,) = dev.queries()
    assert query.topic == "zigbee2mqtt/kitchen/floor_light/get"
    assert json.loads(query.payload) == {"state": ""} and dev.query_once
