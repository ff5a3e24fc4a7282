"""Load probe and load factor (design.md, "Dynamic timeouts")."""

from collections import namedtuple

import pytest

from hub.resilience import LoadProbe, LoadSample, ManualClock, load_factor
from hub.resilience.load import parse_throttled, pick_temperature, read_load, read_throttled

Temp = namedtuple("Temp", "label current high critical")


@pytest.mark.parametrize(
    ("cpu", "temp", "throttled", "expected"),
    [
        (0.0, None, None, 1.0),  # idle, no sensor
        (50.0, 70.0, False, 1.0),  # at both knees: still 1
        (75.0, None, None, 1.5),
        (100.0, None, None, 2.0),
        (10.0, 85.0, None, 2.0),  # Pi throttling temperature
        (10.0, 77.5, None, 1.5),
        (10.0, 40.0, True, 1.5),  # throttled alone
        (75.0, 77.5, None, 2.25),  # product of terms
        (100.0, 90.0, None, 3.0),  # 2 * 2.33 capped at 3
        (100.0, 90.0, True, 3.0),
    ],
)
def test_load_factor_table(cpu, temp, throttled, expected):
    assert load_factor(LoadSample(cpu, temp, throttled), 3.0) == pytest.approx(expected)


def test_load_factor_cap_is_the_max_factor():
    hot = LoadSample(100.0, 95.0, True)
    assert load_factor(hot, 1.0) == 1.0
    assert load_factor(hot, 10.0) == pytest.approx(2 * (1 + 25 / 15) * 1.5)


def test_load_factor_refuses_max_factor_below_one():
    with pytest.raises(ValueError, match="max_factor"):
        load_factor(LoadSample(0, None, None), 0.5)


def test_pick_temperature_prefers_pi_then_intel_then_amd_and_takes_the_hottest():
    sensors = {
        "acpitz": [Temp("", 30.0, None, None)],
        "coretemp": [Temp("Package id 0", 61.0, 80, 100), Temp("Core 0", 64.0, 80, 100)],
        "k10temp": [Temp("Tctl", 50.0, None, None)],
    }
    assert pick_temperature(sensors) == 64.0
    assert pick_temperature({**sensors, "cpu_thermal": [Temp("", 71.5, None, None)]}) == 71.5
    assert pick_temperature({"acpitz": [Temp("", 30.0, None, None)]}) is None
    assert pick_temperature({}) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0\n", False),
        ("50000\n", False),  # only "has occurred" bits
        ("50005\n", True),  # under-voltage and throttled now
        ("throttled=0x0\n", False),
        ("throttled=0x80008\n", True),  # soft temperature limit now
        ("throttled=0x4", True),
        ("", None),
        ('error=1 error_msg="x"', None),
    ],
)
def test_parse_throttled(text, expected):
    assert parse_throttled(text) is expected


def test_read_throttled_from_a_sysfs_file(tmp_path):
    path = tmp_path / "get_throttled"
    path.write_text("50005\n")
    assert read_throttled(paths=(tmp_path / "missing", path)) is True
    assert read_throttled(paths=(tmp_path / "missing",)) is None


def test_read_throttled_from_vcgencmd(tmp_path):
    tool = tmp_path / "vcgencmd"
    tool.write_text("#!/bin/sh\necho throttled=0x20002\n")
    tool.chmod(0o755)
    assert read_throttled(paths=(), vcgencmd=str(tool)) is True


def test_read_load_returns_a_plausible_sample():
    sample = read_load()
    assert 0.0 <= sample.cpu_percent <= 100.0
    assert sample.temperature_c is None or isinstance(sample.temperature_c, float)
    assert sample.throttled in (None, True, False)


def test_probe_caches_for_one_second():
    clock = ManualClock()
    readings = iter([LoadSample(float(i), None, None) for i in range(10)])
    calls = []

    def reader():
        calls.append(clock())
        return next(readings)

    probe = LoadProbe(cache_s=1.0, clock=clock, reader=reader)
    assert probe.sample().cpu_percent == 0.0
    clock.advance(0.9)
    assert probe.sample().cpu_percent == 0.0
    clock.advance(0.1)
    assert probe.sample().cpu_percent == 1.0
    assert len(calls) == 2


def test_default_probe_reads_this_machine():
    sample = LoadProbe().sample()
    assert 0.0 <= sample.cpu_percent <= 100.0
