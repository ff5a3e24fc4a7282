"""Issue 23: compute threads from the affinity mask (one core left to audio capture), and
Raspberry Pi throttling changes logged once each, with a summary when they flap (fakes for
the affinity call, the throttling word and the clock)."""

from __future__ import annotations

import logging

import pytest

from hub.llm import model
from hub.resilience.cpu import ThrottleWatch, compute_threads, usable_cores
from hub.resilience.load import LoadProbe, LoadSample, parse_throttled_word, read_throttled_word


@pytest.mark.parametrize(
    "mask, threads", [({0}, 1), ({0, 1}, 1), ({0, 1, 2}, 2), ({0, 1, 2, 3}, 3), ({2, 5}, 1)]
)
def test_threads_come_from_the_affinity_mask_leaving_a_core(mask, threads):
    assert compute_threads(lambda: mask) == threads
    assert usable_cores(lambda: mask) == len(mask)


def test_four_cores_with_affinity_one_gives_one_llm_thread(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 4)
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {3})
    assert model.auto_threads() == 1  # was cpu_count - 1 = 3 threads on one core


def test_the_throttling_word_is_read_from_sysfs_or_vcgencmd_output(tmp_path):
    word = tmp_path / "get_throttled"
    word.write_text("50005\n")
    assert read_throttled_word([tmp_path / "missing", word]) == 0x50005
    assert parse_throttled_word("throttled=0x80008") == 0x80008
    assert parse_throttled_word("n/a") is None
    assert read_throttled_word([tmp_path / "missing"]) is None


def watch(words, now):
    it = iter(words)
    return ThrottleWatch(lambda: next(it), clock=lambda: now[0], window_s=600, flap_max=3)


def messages(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "hub.resilience.cpu"]


def test_each_change_is_logged_once(caplog):
    now = [0.0]
    w = watch([0x0, 0x0, 0x50005, 0x50005, 0x50005, 0x50000, 0x50000], now)
    with caplog.at_level(logging.INFO, logger="hub.resilience.cpu"):
        for _ in range(7):
            now[0] += 5
            w.poll()
    assert messages(caplog) == [
        "throttling: under-voltage, throttled (get_throttled=0x50005)",
        "throttling eased: now none (was under-voltage, throttled)",
    ]


def test_throttled_at_start_is_said_once(caplog):
    now = [0.0]
    w = watch([0x8, 0x8, 0x8], now)
    with caplog.at_level(logging.INFO, logger="hub.resilience.cpu"):
        for _ in range(3):
            w.poll()
    assert messages(caplog) == ["throttling at start: soft temperature limit (get_throttled=0x8)"]


def test_flapping_is_summarized_once_per_window(caplog):
    now = [0.0]
    w = watch([0x0] + [0x1, 0x0] * 20 + [0x0], now)
    with caplog.at_level(logging.INFO, logger="hub.resilience.cpu"):
        for _ in range(41):
            now[0] += 2  # under-voltage on and off every 2 s for 80 s
            w.poll()
        assert len(messages(caplog)) == 3  # the first three changes, one line each
        now[0] += 600
        w.poll()
    lines = messages(caplog)
    assert len(lines) == 4, lines
    assert lines[3].startswith("throttling flapped: 37 more changes")
    assert "under-voltage" in lines[3]
    assert lines[3].endswith("now none")


def test_the_load_probe_polls_the_watch_with_each_fresh_reading(caplog):
    now = [0.0]
    w = watch([0x0, 0x4, 0x4], now)
    probe = LoadProbe(
        cache_s=1.0, clock=lambda: now[0], reader=lambda: LoadSample(0, None, None), throttle=w
    )
    with caplog.at_level(logging.INFO, logger="hub.resilience.cpu"):
        for _ in range(3):
            now[0] += 1.0
            probe.sample()
            probe.sample()  # cached: no new read
    assert messages(caplog) == ["throttling: throttled (get_throttled=0x4)"]
