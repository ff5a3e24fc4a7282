"""Adaptive timeouts: load, recent latency, bounds and the deadline (design.md, "Dynamic
timeouts")."""

import pytest

from hub.errors import ConfigError
from hub.resilience import (
    Deadline,
    FixedProbe,
    LatencyTracker,
    LoadSample,
    ManualClock,
    TimeoutPolicy,
)
from hub.settings import ResilienceSettings

IDLE = LoadSample(cpu_percent=5.0, temperature_c=45.0, throttled=False)
HOT = LoadSample(cpu_percent=100.0, temperature_c=90.0, throttled=False)


def policy(sample=IDLE, tracker=None, max_factor=3.0):
    return TimeoutPolicy(
        {"asr": 2.0, "llm_intent": 3.0}, FixedProbe(sample), tracker or LatencyTracker(), max_factor
    )


def test_p90_is_nearest_rank_of_the_last_runs():
    tracker = LatencyTracker(window=20)
    assert tracker.p90("asr") is None
    for ms in range(1, 11):  # 0.1 .. 1.0 s
        tracker.record("asr", ms / 10)
    assert tracker.p90("asr") == 0.9
    tracker.record("asr", 5.0)  # 11 runs: rank ceil(9.9) = 10
    assert tracker.p90("asr") == 1.0


def test_tracker_keeps_only_the_window():
    tracker = LatencyTracker(window=20)
    for _ in range(20):
        tracker.record("tts", 9.0)
    for _ in range(20):
        tracker.record("tts", 0.5)
    assert tracker.p90("tts") == 0.5
    assert tracker.nodes() == ["tts"]


def test_idle_machine_gets_the_base_timeout():
    deadline = Deadline(8.0, clock=ManualClock())
    assert policy().timeout("asr", deadline) == 2.0


def test_heat_and_full_cpu_stretch_the_timeout_up_to_max_factor():
    deadline = Deadline(8.0, clock=ManualClock())
    assert policy(HOT).timeout("asr", deadline) == 6.0  # 2.0 * min(3, 2 * 2.33)


def test_stretched_timeout_is_capped_by_the_deadline():
    clock = ManualClock()
    deadline = Deadline(8.0, clock=clock)
    clock.advance(4.5)
    assert policy(HOT).timeout("asr", deadline) == 3.5
    assert policy(IDLE).timeout("asr", deadline) == 2.0


def test_slow_recent_runs_stretch_the_timeout_to_one_and_a_half_p90():
    tracker = LatencyTracker()
    for _ in range(5):
        tracker.record("asr", 2.4)
    deadline = Deadline(8.0, clock=ManualClock())
    assert policy(IDLE, tracker).timeout("asr", deadline) == pytest.approx(3.6)


def test_fast_recent_runs_never_shrink_below_base():
    tracker = LatencyTracker()
    tracker.record("asr", 0.1)
    assert policy(IDLE, tracker).timeout("asr", Deadline(8.0, clock=ManualClock())) == 2.0


def test_latency_stretch_is_bounded_by_max_factor():
    tracker = LatencyTracker()
    tracker.record("asr", 10.0)
    assert policy(IDLE, tracker).unbounded("asr") == 6.0


def test_unknown_node_is_a_config_error_naming_the_key():
    with pytest.raises(ConfigError, match=r"resilience\.timeouts_s\.tts"):
        policy().timeout("tts", Deadline(8.0, clock=ManualClock()))


@pytest.mark.parametrize("bad", [0, -1.0, "3", True])
def test_bad_base_timeout_is_refused(bad):
    with pytest.raises(ConfigError, match=r"resilience\.timeouts_s\.asr"):
        TimeoutPolicy({"asr": bad}, FixedProbe(), LatencyTracker(), 3.0)


def test_from_settings_uses_the_configured_bases():
    built = TimeoutPolicy.from_settings(ResilienceSettings(), FixedProbe(IDLE))
    assert built.base("llm_intent") == 3.0
    assert built.max_factor == 3.0


def test_factors_report_for_doctor():
    tracker = LatencyTracker()
    tracker.record("asr", 1.0)
    factors = policy(HOT, tracker).factors()
    assert factors == {
        "cpu_percent": 100.0,
        "temperature_c": 90.0,
        "throttled": False,
        "load_factor": 3.0,
        "max_factor": 3.0,
        "nodes": {
            "asr": {"base_s": 2.0, "p90_s": 1.0, "timeout_s": 6.0},
            "llm_intent": {"base_s": 3.0, "p90_s": None, "timeout_s": 9.0},
        },
    }


def test_journaled_turns_give_the_p90_of_their_completed_runs():
    """A new hub (``hub run`` after a restart, ``hub doctor``) reads the p90 from the journal
    (doctor said "not measured" although the store had turns)."""
    traces = [  # newest first, as Store.recent_turns gives them
        {"timings_ms": {"asr": 400.0, "ttfa": 900.0, "total": 1200.0}, "errors": []},
        {
            "timings_ms": {"asr": 300.0, "llm_intent": 9000.0},
            "errors": [{"node": "llm_intent", "kind": "timeout", "message": "timed out"}],
        },
        {"timings_ms": {"asr": 200.0, "llm_intent": 1000.0, "ttfa": None}},
    ]
    tracker = LatencyTracker()
    assert tracker.record_traces(traces, {"asr", "llm_intent"}) == 4
    assert tracker.nodes() == ["asr", "llm_intent"]  # ttfa and total are not nodes
    assert tracker.p90("asr") == pytest.approx(0.4)
    assert tracker.p90("llm_intent") == pytest.approx(1.0)  # the timed-out run is left out
    assert policy(tracker=tracker).factors()["nodes"]["asr"]["p90_s"] == pytest.approx(0.4)
